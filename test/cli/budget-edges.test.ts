// Budgets at the edges, through the CLI: a budget that admits nothing, and resuming a
// budget-exhausted run with too little or enough new budget. Each run must end with a run_end
// event, a summary and exit 1 (or 0 once it finishes), never hang until Node gives up (exit 13).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { foldEvents } from '../../src/run/run-fold.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

async function cli(
  argv: string[],
  cwd: string,
  env: Record<string, string | undefined> = { PATH: process.env.PATH },
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd, env });
  return { code, stdout, stderr };
}

const runIdOf = (text: string): string => {
  const id = /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(text)?.[1];
  if (!id) throw new Error(`no run id in:\n${text}`);
  return id;
};

/** A fan-out and a task that needs it: the shape whose refused first instance used to leave the rest queued forever. */
const FAN_OUT = (extra: string) => `name: edges
${extra}
concurrency: 2
agents:
  worker: { tools: [read] }
tasks:
  - id: look
    for_each: [a, b, c]
    agent: worker
    prompt: "Look at \${{ item }}"
  - id: after
    needs: [look]
    agent: worker
    prompt: "Sum it up"
`;

describe('budgets at the edges', () => {
  it('--budget-usd 0 on a priced model: nothing starts, and the run ends (run_end, summary, exit 1)', async () => {
    // No request is expected; the fake server is there so a bug cannot reach a real API.
    const server = await startFakeAnthropic({
      respond: () => ({ kind: 'message', content: [{ type: 'text', text: 'should not be asked' }] }),
    });
    try {
      const dir = tempProject({ 'recipe.yaml': FAN_OUT('model: claude-haiku-4-5') });
      const r = await cli([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs'), '--budget-usd', '0'], dir, {
        PATH: process.env.PATH,
        ANTHROPIC_API_KEY: 'sk-test',
        ANTHROPIC_BASE_URL: server.url,
      });
      expect(r.code).toBe(1);
      expect(server.requests).toHaveLength(0);
      expect(r.stdout).toMatch(/budget exhausted/);
      expect(r.stdout).toContain('resume:');
      const log = events(join(dir, 'runs', runIdOf(r.stdout)));
      expect(log.at(-1)).toMatchObject({ type: 'run_end', status: 'budget_exhausted' });
      // Every instance is accounted for: the refused one failed, the rest were skipped.
      expect(ofType(log, 'instance_failed').map((e) => [e.key, e.failure])).toEqual([['look.a', 'budget']]);
      expect(
        ofType(log, 'instance_skipped')
          .map((e) => e.key)
          .sort(),
      ).toEqual(['after', 'look.b', 'look.c']);
    } finally {
      await server.close();
    }
  });

  it('resume of a budget-exhausted run: too little new budget ends it again (exit 1, run_end); enough finishes it without re-running what is done', async () => {
    const dir = tempProject({
      'recipe.yaml': FAN_OUT('provider: scripted\nscript: script.yaml'),
      'script.yaml': 'turns:\n  - text: "Looked."\n',
    });
    const runs = join(dir, 'runs');
    // One token admits nothing: the scripted model is free, so the token budget is the one that bites.
    const first = await cli([join(dir, 'recipe.yaml'), '--run-dir', runs, '--budget-tokens', '1'], dir);
    expect(first.code).toBe(1);
    const runId = runIdOf(first.stdout);
    const runDir = join(runs, runId);
    expect(events(runDir).at(-1)).toMatchObject({ type: 'run_end', status: 'budget_exhausted' });

    // Above what was spent (a total not above it is refused before anything runs), not enough for
    // the rest: each instance's call uses about a thousand tokens.
    const firstEnd = events(runDir).at(-1);
    const spent = firstEnd?.type === 'run_end' ? firstEnd.usage.totalTokens : 0;
    const tooLittle = await cli(['resume', runDir, '--budget-tokens', String(spent + 600)], dir);
    expect(tooLittle.code).toBe(1);
    expect(tooLittle.stdout).toMatch(/budget exhausted/);
    let log = events(runDir);
    expect(log.at(-1)).toMatchObject({ type: 'run_end', status: 'budget_exhausted' });
    const doneBefore = ofType(log, 'instance_done').map((e) => e.key);
    expect(doneBefore.length).toBeLessThan(4);

    // The new total replaces the run's budget; what was spent counts against it.
    const enough = await cli(['resume', runDir, '--budget-tokens', '1M'], dir);
    expect(enough.code).toBe(0);
    log = events(runDir);
    expect(log.at(-1)).toMatchObject({ type: 'run_end', status: 'succeeded' });
    const done = ofType(log, 'instance_done').map((e) => e.key);
    expect([...done].sort()).toEqual(['after', 'look.a', 'look.b', 'look.c']);
    // Nothing finished before was run again.
    expect(new Set(done).size).toBe(done.length);
    const result = JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as { status: string };
    expect(result.status).toBe('succeeded');
    // Each resume records the overrides in force, so a later resume keeps the raised budget.
    expect(ofType(log, 'run_resume').map((e) => e.overrides?.budgetTokens)).toEqual([spent + 600, 1_000_000]);
    expect(foldEvents(log).overrides).toMatchObject({ budgetTokens: 1_000_000 });
  });

  it('resume with a budget total not above what the run spent: exit 2 before anything runs (it used to start and stop again)', async () => {
    const dir = tempProject({
      'recipe.yaml': FAN_OUT('provider: scripted\nscript: script.yaml'),
      'script.yaml': 'turns:\n  - text: "Looked."\n',
    });
    const runs = join(dir, 'runs');
    const first = await cli([join(dir, 'recipe.yaml'), '--run-dir', runs, '--budget-tokens', '600'], dir);
    expect(first.code).toBe(1);
    const runDir = join(runs, runIdOf(first.stdout));
    const before = events(runDir);
    const end = before.at(-1);
    if (end?.type !== 'run_end') throw new Error(`the run did not end: ${JSON.stringify(end)}`);
    const spent = end.usage.totalTokens;
    expect(spent).toBeGreaterThan(0);
    const again = await cli(['resume', runDir, '--budget-tokens', String(spent)], dir);
    expect(again.stderr).toBe(
      `orchestrate: --budget-tokens ${spent} is not above the ${spent} tokens the run has spent, so the resume would stop before its first model call\n  hint: a resume's budget is a total that counts the spend so far: give one above it\n`,
    );
    expect(again.code).toBe(2);
    expect(events(runDir)).toHaveLength(before.length);
    const preview = await cli(['resume', runDir, '--budget-tokens', String(spent), '--dry-run'], dir);
    expect(preview.stdout).toContain(
      `  budget: --budget-tokens ${spent} is not above the ${spent} tokens the run has spent`,
    );
    expect(preview.code).toBe(0);
  });

  it('--budget-tokens takes short forms and refuses nonsense with exit 2', async () => {
    const dir = tempProject({
      'recipe.yaml': FAN_OUT('provider: scripted\nscript: script.yaml'),
      'script.yaml': 'turns:\n  - text: "x"\n',
    });
    const bad = await cli([join(dir, 'recipe.yaml'), '--budget-tokens', 'lots'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--budget-tokens must be a token count');
    const dry = await cli([join(dir, 'recipe.yaml'), '--dry-run', '--budget-tokens', '2k', '--json'], dir);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/"tokens": 2000/);
  });
});
