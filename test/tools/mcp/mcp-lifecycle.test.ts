// The MCP client's lifecycle with a scripted agent (createAgentSession, the real runtime) and the
// real stdio fixture server: timeouts reset by progress, list_changed, crashes (restarted once,
// then reported once), abort listeners, and no process left once the session is disposed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptedTurn } from '../../../src/ai/scripted.js';
import { groupAlive, results, stdioServer, textOf, until, useMcpAgents } from './helpers.js';

const { agent, tempDir } = useMcpAgents();

describe('MCP client lifecycle', () => {
  it('a slow tool that reports progress finishes past its timeout; a silent one fails with a timeout result', async () => {
    const session = await agent(
      [stdioServer('alpha', { toolTimeoutMs: 1500 })],
      [
        {
          tools: [
            { name: 'mcp__alpha__slow', args: { steps: 5, ms: 400 } },
            { name: 'mcp__alpha__silent', args: { ms: 15_000 } },
          ],
        },
        { text: 'done' },
      ],
    );
    await session.prompt('go');
    const [slow, silent] = results(session);
    expect(slow!.isError).toBe(false);
    expect(textOf(slow!)).toBe('done after 5 steps');
    expect(silent!.isError).toBe(true);
    expect(textOf(silent!)).toMatch(/timed out: no result and no progress for 1500ms \(tool_timeout\)/);
  });

  it('a tool the server adds (list_changed) is offered and callable in the next turn', async () => {
    const offered: string[][] = [];
    const session = await agent(
      [stdioServer('alpha')],
      [
        { tools: [{ name: 'mcp__alpha__add_tool' }] },
        (ctx) => {
          offered.push((ctx.tools ?? []).map((t) => t.name));
          return { tools: [{ name: 'mcp__alpha__late', args: { x: 'y' } }] };
        },
        { text: 'done' },
      ],
    );
    await session.prompt('go');
    expect(offered[0]).toContain('mcp__alpha__late');
    const late = results(session)[1]!;
    expect(late.isError).toBe(false);
    expect(textOf(late)).toBe('late y');
  });

  it('many calls in one prompt leave no listeners on its abort signal (no MaxListeners warning)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const turns: ScriptedTurn[] = Array.from({ length: 12 }, (_, i) => ({
        tools: [{ name: 'mcp__alpha__echo', args: { text: `n${i}` } }],
      }));
      const session = await agent([stdioServer('alpha', { sandbox: 'none' })], [...turns, { text: 'done' }]);
      await session.prompt('go');
      expect(results(session)).toHaveLength(12);
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a crashed server is restarted once, then reported once, clearly; its tools then fail with the reason', async () => {
    const notices: string[] = [];
    const session = await agent(
      [stdioServer('alpha', { sandbox: 'none' })],
      [
        { tools: [{ name: 'mcp__alpha__crash' }] },
        { tools: [{ name: 'mcp__alpha__echo', args: { text: 'after restart' } }] },
        { tools: [{ name: 'mcp__alpha__crash' }] },
        { tools: [{ name: 'mcp__alpha__pid' }] },
        { text: 'done' },
      ],
      { notices },
    );
    await session.prompt('go');
    const r = results(session);
    expect(r[0]!.isError).toBe(true);
    expect(textOf(r[0]!)).toMatch(/exited during the call/);
    expect(textOf(r[1]!)).toBe('alpha: after restart');
    expect(r[2]!.isError).toBe(true);
    // The tool list of the failed server is gone at the next turn: the call is an unknown tool.
    expect(r[3]!.isError).toBe(true);
    const reports = notices.filter((n) => n.includes('MCP server "alpha" stopped'));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(
      /^error: MCP server "alpha" stopped \(exit code 3\) after it had already been restarted once; it is not started again/,
    );
  });

  it('no server process is left once the session is disposed (sandboxed and unconfined)', async () => {
    const pidFile = join(tempDir(), 'pids');
    const session = await agent(
      [
        stdioServer('alpha', { startup: 'eager' }),
        stdioServer('plain', { sandbox: 'none', startup: 'eager', env: { MCP_FIXTURE_PID_FILE: pidFile } }),
      ],
      [{ text: 'done' }],
    );
    const groups = (session as unknown as { tools: { name: string }[] }).tools.length;
    expect(groups).toBeGreaterThan(1);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(groupAlive(pid)).toBe(true);
    await session.dispose();
    await until(() => !groupAlive(pid), `server ${pid} to end`);
  });
});
