// Resume: rebuilding a run from its log. The end-to-end cases spawn the real CLI, kill it
// (kill -9, or Ctrl-C = SIGINT), then run `orchestrate resume` and count the model calls each
// instance made at the fake Anthropic API: finished instances are never called again.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { foldEvents, getInstance, resumableInstances } from '../../src/run/run-fold.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic-server.js';
import {
  cleanupTempDirs,
  conversationKey,
  conversationResponder,
  isSummaryRequest,
  logOf,
  ofType,
  tempProject,
  type Conversation,
} from '../orchestrator/helpers/run-fixtures.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

afterAll(() => cleanupTempDirs());

const ROOT = resolve(import.meta.dirname, '../..');

function cli(args: string[], server: FakeAnthropic): ChildProcess {
  return spawn(process.execPath, [...CLI_NODE_ARGS, ...args], {
    cwd: ROOT,
    env: { ...process.env, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((r) => child.on('exit', (code, signal) => r({ code, signal, out })));
}

// A generous bound: it only turns a hang into a failure with a reason (a loaded 2-core CI box is slow).
async function until(check: () => boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function runDirOf(runs: string): string | undefined {
  const r = spawnSync('ls', [runs]);
  const name = r.stdout?.toString().trim().split('\n').filter(Boolean)[0];
  return name ? join(runs, name) : undefined;
}

/** Handoff summary requests of an item (the whole conversation is in the request). */
function summaries(server: FakeAnthropic, item: string): number {
  return server.requests.filter(
    (q) => isSummaryRequest(q.body) && new RegExp(`Check item ${item}\\b`).test(JSON.stringify(q.body.messages)),
  ).length;
}

/** Turn requests per item, and per (item, reply index); handoff summary requests are counted by summaries(). */
function calls(server: FakeAnthropic, item: string, reply?: number): number {
  return server.requests.filter((q) => {
    if (isSummaryRequest(q.body) || !new RegExp(`Check item ${item}\\b`).test(conversationKey(q.body))) return false;
    return (
      reply === undefined ||
      (q.body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length === reply
    );
  }).length;
}

const RECIPE = `name: resumable
model: claude-haiku-4-5
concurrency: 2
agents:
  checker: { tools: [ls, bash] }
tasks:
  - id: check
    for_each: [a, b, c, d]
    agent: checker
    prompt: "Check item \${{ item }}"
`;

describe('the run fold as resume reads it', () => {
  it('keeps finished instances, continues started ones, re-reads fan-outs and sums spend', () => {
    const base = { v: 1 as const, ts: 0, runId: 'r' };
    const usage = (n: number) => ({ input: n, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: n, cost: n / 1000 });
    const log: RunEvent[] = [
      { ...base, type: 'run_start', recipe: '/r.yaml', name: 'n', recipeHash: 'h', inputs: {}, plan: [] },
      { ...base, type: 'task_expanded', task: 'fan', keys: ['fan.a', 'fan.b'] },
      { ...base, type: 'instance_start', task: 'fan', key: 'fan.a', attempt: 1, baseTree: 't1', repoRoot: '/repo' },
      { ...base, type: 'call_usage', task: 'fan', key: 'fan.a', attempt: 1, model: 'm', usage: usage(100) },
      {
        ...base,
        type: 'instance_done',
        task: 'fan',
        key: 'fan.a',
        attempt: 1,
        output: { ok: 1 },
        usage: usage(100),
        durationMs: 5,
        summary: '## Goal\nx',
      },
      { ...base, type: 'instance_start', task: 'fan', key: 'fan.b', attempt: 1 },
      {
        ...base,
        type: 'call_usage',
        task: 'fan',
        key: 'fan.b@worker',
        attempt: 1,
        parent: 'fan.b',
        model: 'm',
        usage: usage(50),
      },
    ];
    const s = foldEvents(log);
    expect(s.start?.recipe).toBe('/r.yaml');
    expect(s.lastEndStatus).toBeUndefined();
    expect(s.tasks.get('fan')?.keys.slice(0, 2)).toEqual(['fan.a', 'fan.b']);
    expect(getInstance(s, 'fan', 'fan.a')).toMatchObject({
      status: 'done',
      output: { ok: 1 },
      git: { tree: 't1', root: '/repo' },
    });
    expect(getInstance(s, 'fan', 'fan.b')).toMatchObject({ status: 'running', attempt: 1 });
    // A pair member's calls count for its instance; the member itself is no instance of a resume.
    expect(getInstance(s, 'fan', 'fan.b')!.spend.totalTokens).toBe(50);
    expect(resumableInstances(s).map((i) => i.key)).toEqual(['fan.a', 'fan.b']);
    expect(s.spend.totalTokens).toBe(150);
  });
});

describe('resume after the coordinator died (real CLI)', { timeout: 240_000 }, () => {
  it('kill -9 mid-run, then resume: finished instances are not called again, interrupted ones continue from their leaf', async () => {
    let slow = true;
    // c's and d's second call is held until the kill, so they are surely mid-call when it comes,
    // however long the test takes to see them there (a delay would be a race on a loaded machine).
    let releaseSlow!: () => void;
    const slowHeld = new Promise<void>((r) => (releaseSlow = r));
    const responder = conversationResponder([
      { match: /Check item [ab]\b/, turns: [{ tools: [{ name: 'ls', args: { path: '.' } }] }, { text: 'fast done' }] },
      {
        match: /Check item [cd]\b/,
        turns: [{ tools: [{ name: 'ls', args: { path: '.' } }] }, { text: 'slow done' }],
      },
    ]);
    const server = await startFakeAnthropic({
      respond: async (req) => {
        const secondCall = (req.body.messages as unknown[]).length > 1 && !isSummaryRequest(req.body);
        if (slow && secondCall && /Check item [cd]\b/.test(conversationKey(req.body))) await slowHeld;
        return responder(req);
      },
    });
    try {
      const dir = tempProject({ 'recipe.yaml': RECIPE });
      const runs = join(dir, 'runs');
      const child = cli([join(dir, 'recipe.yaml'), '--run-dir', runs], server);
      const done = exited(child);
      // Kill once a and b finished and c and d are inside their second (slow) model call.
      await until(
        () =>
          ofType(logOf(runDirOf(runs)), 'instance_done').length === 2 &&
          calls(server, 'c', 1) === 1 &&
          calls(server, 'd', 1) === 1,
        'a, b done and c, d mid-call',
      );
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      const runDir = runDirOf(runs)!;
      expect(ofType(logOf(runDir), 'run_end')).toHaveLength(0);
      const before = {
        a: calls(server, 'a'),
        b: calls(server, 'b'),
        summaryA: summaries(server, 'a'),
        summaryB: summaries(server, 'b'),
      };
      expect(before).toEqual({ a: 2, b: 2, summaryA: 1, summaryB: 1 });

      slow = false;
      releaseSlow(); // the killed process's held calls answer no one now
      const resumed = await exited(cli(['resume', runDir], server));
      expect(resumed.code, resumed.out).toBe(0);
      // Finished instances were not paid for twice, their handoff summaries neither.
      expect({
        a: calls(server, 'a'),
        b: calls(server, 'b'),
        summaryA: summaries(server, 'a'),
        summaryB: summaries(server, 'b'),
      }).toEqual(before);
      for (const item of ['c', 'd']) expect(summaries(server, item)).toBe(1);
      // Interrupted ones kept their first reply and only redid the call that was cut.
      for (const item of ['c', 'd']) {
        expect(calls(server, item, 0)).toBe(1);
        expect(calls(server, item, 1)).toBe(2);
      }
      const log = logOf(runDir);
      expect(ofType(log, 'run_resume')).toHaveLength(1);
      expect(
        ofType(log, 'instance_start')
          .filter((e) => e.attempt === 2)
          .map((e) => [e.key, e.resumedFromLeaf])
          .sort(),
      ).toEqual([
        ['check.c', true],
        ['check.d', true],
      ]);
      const result = JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as {
        status: string;
        instances: { id: string; status: string; output: string }[];
      };
      expect(result.status).toBe('succeeded');
      expect(result.instances.map((i) => [i.id, i.status, i.output])).toEqual([
        ['check.a', 'done', 'fast done'],
        ['check.b', 'done', 'fast done'],
        ['check.c', 'done', 'slow done'],
        ['check.d', 'done', 'slow done'],
      ]);
    } finally {
      await server.close();
    }
  });

  it('Ctrl-C stops every agent (its shell commands too), exits 130 with status interrupted, and the run resumes', async () => {
    const marker = `${30 + Math.floor(Math.random() * 1000) / 1000}`;
    let slow = true;
    const convs = (): Conversation[] => [
      { match: /Check item [ab]\b/, turns: [{ tools: [{ name: 'ls', args: { path: '.' } }] }, { text: 'fast done' }] },
      {
        match: /Check item [cd]\b/,
        turns: [
          { tools: [{ name: 'bash', args: { command: slow ? `sleep ${marker}` : 'true' } }] },
          { text: 'slow done' },
        ],
      },
    ];
    const server = await startFakeAnthropic({ respond: (req) => conversationResponder(convs())(req) });
    try {
      const dir = tempProject({ 'recipe.yaml': RECIPE });
      const runs = join(dir, 'runs');
      const child = cli([join(dir, 'recipe.yaml'), '--run-dir', runs], server);
      const done = exited(child);
      const sleeping = () =>
        spawnSync('pgrep', ['-f', `sleep ${marker}`])
          .stdout.toString()
          .trim() !== '';
      await until(
        () => ofType(logOf(runDirOf(runs)), 'instance_done').length === 2 && sleeping(),
        'a, b done and c, d running a shell command',
      );
      const t0 = Date.now();
      child.kill('SIGINT');
      const r = await done;
      expect(r.code, r.out).toBe(130);
      // Well under the 30 s the shell commands sleep: Ctrl-C did not wait for them, even on a loaded machine.
      expect(Date.now() - t0).toBeLessThan(25_000);
      expect(sleeping()).toBe(false);
      const runDir = runDirOf(runs)!;
      const result = JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as { status: string };
      expect(result.status).toBe('interrupted');
      expect(ofType(logOf(runDir), 'run_end').at(-1)?.status).toBe('interrupted');
      expect(ofType(logOf(runDir), 'instance_failed')).toHaveLength(0);

      slow = false;
      const resumed = await exited(cli(['resume', runDir], server));
      expect(resumed.code, resumed.out).toBe(0);
      expect({ a: calls(server, 'a'), b: calls(server, 'b') }).toEqual({ a: 2, b: 2 });
      expect(JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')).status).toBe('succeeded');
    } finally {
      await server.close();
    }
  });
});
