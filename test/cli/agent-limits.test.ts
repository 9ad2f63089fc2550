// `orchestrate agent` against a model that never stops calling tools: the caps and the loop
// detector end the prompt, the command exits 1 and says which flag raises the cap (print and
// json modes; rpc answers the prompt with the error). The real CLI in a child process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runAgentCli, startAgentRpc, type JsonLine } from '../runtime/helpers/agent-cli.js';

let home: string;
let endless: string;
let stuck: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'orch-cli-limits-'));
  for (let i = 0; i < 30; i++) writeFileSync(join(home, `f${i}.txt`), `file ${i}\n`);
  // A different file every turn (never a loop), far more turns than any cap in these tests.
  endless = join(home, 'endless.yaml');
  writeFileSync(
    endless,
    `${Array.from({ length: 30 }, (_, i) => `- tools: [{ name: read, args: { path: f${i}.txt } }]`).join('\n')}\n- text: "finally done"\n`,
  );
  // The same call again and again.
  stuck = join(home, 'stuck.yaml');
  writeFileSync(
    stuck,
    `${Array.from({ length: 30 }, () => '- tools: [{ name: read, args: { path: f0.txt } }]').join('\n')}\n- text: "done"\n`,
  );
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const env = (): Record<string, string | undefined> => ({ ORCHESTRATE_HOME: home, ANTHROPIC_API_KEY: undefined });
const base = (script: string): string[] => ['--script', script, '--cwd', home, '--tools', 'read', '--no-session'];

describe('orchestrate agent caps', () => {
  it('--max-turns 3 stops a model that keeps calling tools: exit 1, stderr names the cap and how to raise it', async () => {
    const r = await runAgentCli([...base(endless), '--max-turns', '3', 'Read every file'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/3 turns/);
    expect(r.stderr).toContain('--max-turns');
  });

  it('json mode emits the run_stopped event line, then exits 1', async () => {
    const r = await runAgentCli(['--mode', 'json', ...base(endless), '--max-turns', '2', 'Read every file'], {
      env: env(),
    });
    expect(r.code).toBe(1);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JsonLine);
    expect(lines.filter((l) => l.type === 'turn_end')).toHaveLength(2);
    expect(lines.find((l) => l.type === 'run_stopped')).toMatchObject({ kind: 'max_turns' });
  });

  it('rpc mode answers the prompt command with the error and keeps serving', async () => {
    const rpc = startAgentRpc([...base(endless), '--max-turns', '2'], { env: env() });
    const accepted = await rpc.send({ id: 'p1', type: 'prompt', message: 'Read every file' });
    expect(accepted).toMatchObject({ success: true });
    const failed = await rpc.waitFor((l) => l.type === 'response' && l.id === 'p1' && l.success === false);
    expect(String(failed.error)).toContain('--max-turns');
    expect(await rpc.send({ id: 's1', type: 'get_state' })).toMatchObject({ success: true });
    expect(await rpc.close()).toBe(0);
  });

  it('the loop detector stops the same call repeated; --loop-detection off leaves it to --max-turns', async () => {
    const looped = await runAgentCli([...base(stuck), 'Read f0'], { env: env() });
    expect(looped.code).toBe(1);
    expect(looped.stderr).toMatch(/repeat/i);
    expect(looped.stderr).toContain('--loop-detection');
    const off = await runAgentCli([...base(stuck), '--loop-detection', 'off', '--max-turns', '8', 'Read f0'], {
      env: env(),
    });
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/8 turns/);
    // A higher threshold lets the same repetition through until the turn cap.
    const lenient = await runAgentCli([...base(stuck), '--max-identical-calls', '20', '--max-turns', '8', 'Read f0'], {
      env: env(),
    });
    expect(lenient.code).toBe(1);
    expect(lenient.stderr).toMatch(/8 turns/);
  });

  it('a spent --budget-tokens stops the agent: exit 1 and the flag on stderr', async () => {
    const r = await runAgentCli([...base(endless), '--budget-tokens', '2000', 'Read every file'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--budget-tokens');
  });

  it('bad cap values are usage errors (exit 2) that say what to give', async () => {
    const cases: [string[], RegExp][] = [
      [['--max-turns', 'many'], /--max-turns "many" is not a whole number/],
      [['--budget-usd', '-1'], /--budget-usd "-1" is not an amount of US dollars above 0/],
      [['--budget-tokens', 'lots'], /--budget-tokens "lots" is not a token count/],
      [['--max-identical-calls', '1'], /--max-identical-calls "1" is not a whole number of at least 2/],
      [['--loop-detection', 'maybe'], /loop-detection/],
    ];
    for (const [flags, message] of cases) {
      let stderr = '';
      const code = await main(['agent', ...base(endless), ...flags, 'hi'], {
        stdout: () => undefined,
        stderr: (t) => (stderr += t),
        cwd: home,
        env: env(),
      });
      expect(code, flags.join(' ')).toBe(2);
      expect(stderr).toMatch(message);
    }
  });
});
