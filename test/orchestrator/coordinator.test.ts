// End to end through the coordinator with real worker threads, real files, real git and the
// scripted provider (instant model): fan-out, pairs, multi-repo patches, verify feedback,
// budgets and crashing workers.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, gitInit, ofType, sessionLines, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

async function run(dir: string, extra: Parameters<typeof runRecipeFile>[2] = {}) {
  const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs'), ...extra });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.outcome;
}

describe('coordinator (scripted model, worker threads)', () => {
  it('a fan-out over 8 folders makes the right edit in each, never more than `concurrency` at once', async () => {
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
    const files: Record<string, string> = {
      'recipe.yaml': `name: fan8
provider: scripted
script: script.yaml
concurrency: 3
agents:
  editor: { tools: [read, edit] }
tasks:
  - id: rename
    for_each: { glob: "svc/*" }
    agent: editor
    cwd: \${{ item }}
    writes: ["**"]
    prompt: "Rename the service in \${{ item }}"
`,
      'script.yaml': `conversations:
  - match: "Rename the service in svc/(\\\\w+)"
    turns:
      - tools: [{ name: edit, args: { path: config.txt, edits: [{ oldText: "name: old", newText: "name: {{match.1}}-renamed" }] } }]
      - text: "Renamed {{match.1}}."
`,
    };
    for (const n of names) files[`svc/${n}/config.txt`] = 'name: old\nport: 80\n';
    const dir = tempProject(files);
    const out = await run(dir);
    expect(out.status).toBe('succeeded');
    for (const n of names)
      expect(readFileSync(join(dir, 'svc', n, 'config.txt'), 'utf8')).toBe(`name: ${n}-renamed\nport: 80\n`);
    const log = events(out.dir);
    expect(
      ofType(log, 'instance_done')
        .map((e) => e.key)
        .sort(),
    ).toEqual(names.map((n) => `rename.svc-${n}`).sort());
    // Replay start/end order: at no point more than 3 instances were running.
    let running = 0;
    let peak = 0;
    for (const e of log) {
      if (e.type === 'instance_start') peak = Math.max(peak, ++running);
      if (e.type === 'instance_done' || e.type === 'instance_failed') running--;
    }
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(3);
    for (const n of names)
      expect(sessionLines(join(out.dir, 'sessions', `rename.svc-${n}.jsonl`)).length).toBeGreaterThan(2);
    const plan = readFileSync(out.planFile, 'utf8');
    expect(plan).toMatch(/svc\/alpha\/config\.txt — rename\.svc-alpha/);
  });

  it('a planner/worker pair converges in two rounds over its direct channel and keeps both sessions', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: pair
provider: scripted
script: script.yaml
agents:
  planner: { system: "You are the PLANNER of this pair.", tools: [read] }
  worker: { system: "You are the WORKER of this pair.", tools: [read, write, edit] }
tasks:
  - id: build
    pair: { planner: planner, worker: worker, max_rounds: 3 }
    prompt: "Write greeting.txt with a friendly greeting."
`,
      'script.yaml': `conversations:
  - match: "You are the PLANNER"
    turns:
      - text: "Corrections: the greeting must be exactly 'hello, world'."
      - text: "APPROVED"
  - match: "You are the WORKER"
    turns:
      - tools: [{ name: write, args: { path: greeting.txt, content: "hello" } }]
      - text: "Wrote greeting.txt containing hello."
      - tools: [{ name: edit, args: { path: greeting.txt, edits: [{ oldText: "hello", newText: "hello, world" }] } }]
      - text: "greeting.txt now says hello, world."
`,
    });
    const out = await run(dir);
    expect(out.status).toBe('succeeded');
    expect(readFileSync(join(dir, 'greeting.txt'), 'utf8')).toBe('hello, world');
    const done = ofType(events(out.dir), 'instance_done').find((e) => e.key === 'build')!;
    expect(done).toMatchObject({ rounds: 2, approved: true, output: 'greeting.txt now says hello, world.' });
    const planner = JSON.stringify(sessionLines(join(out.dir, 'sessions', 'build@planner.jsonl')));
    const worker = JSON.stringify(sessionLines(join(out.dir, 'sessions', 'build@worker.jsonl')));
    // The planner saw both reports; the worker got the correction as its next prompt.
    expect(planner).toContain('Wrote greeting.txt containing hello.');
    expect(planner).toContain('greeting.txt now says hello, world.');
    expect(worker).toContain("the greeting must be exactly 'hello, world'");
  });

  it('a batch refactor across 3 git repos leaves one patch per repo, feeds a failed verify back, and merges the plan', async () => {
    const files: Record<string, string> = {
      'recipe.yaml': `name: batch
provider: scripted
script: script.yaml
concurrency: 3
agents:
  worker: { tools: [read, edit] }
  reviewer: { tools: [read] }
tasks:
  - id: refactor
    for_each: [repos/a, repos/b, repos/c]
    agent: worker
    cwd: \${{ item }}
    writes: ["**"]
    prompt: "Refactor the logging in \${{ item }}"
    verify: "! grep -n 'log(' src/app.js"
    verify_retries: 1
  - id: review
    needs: [refactor]
    agent: reviewer
    context: summaries
    prompt: "Review the refactor"
`,
      'script.yaml': `conversations:
  - match: "Refactor the logging in repos/c"
    turns:
      - tools: [{ name: edit, args: { path: src/app.js, edits: [{ oldText: "log('start');", newText: "logger.info('start');" }] } }]
      - text: "Done with c."
      - tools: [{ name: edit, args: { path: src/app.js, edits: [{ oldText: "log('stop');", newText: "logger.info('stop');" }] } }]
      - text: "Fixed the second call in c."
  - match: "Refactor the logging in repos/(\\\\w)"
    turns:
      - tools: [{ name: edit, args: { path: src/app.js, edits: [{ oldText: "log('start');", newText: "logger.info('start');" }, { oldText: "log('stop');", newText: "logger.info('stop');" }] } }]
      - text: "Done with {{match.1}}."
  - match: "Review the refactor"
    turns:
      - text: "All three repositories use logger.info now."
`,
    };
    for (const r of ['a', 'b', 'c']) files[`repos/${r}/src/app.js`] = "log('start');\nrun();\nlog('stop');\n";
    const dir = tempProject(files);
    for (const r of ['a', 'b', 'c']) gitInit(join(dir, 'repos', r));
    const out = await run(dir);
    expect(out.status).toBe('succeeded');
    for (const r of ['a', 'b', 'c']) {
      const patch = readFileSync(join(out.dir, 'patches', `refactor.repos-${r}.diff`), 'utf8');
      expect(patch).toMatch(/^diff --git a\/src\/app\.js b\/src\/app\.js/);
      expect(patch).toContain("+logger.info('start');");
      expect(patch).toContain("+logger.info('stop');");
    }
    const log = events(out.dir);
    const verifyC = ofType(log, 'verify')
      .filter((e) => e.key === 'refactor.repos-c')
      .map((e) => e.ok);
    expect(verifyC).toEqual([false, true]);
    expect(JSON.stringify(sessionLines(join(out.dir, 'sessions', 'refactor.repos-c.jsonl')))).toContain(
      'The verification command',
    );
    const plan = readFileSync(out.planFile, 'utf8');
    for (const r of ['a', 'b', 'c']) expect(plan).toContain(`repos/${r}/src/app.js — refactor.repos-${r}`);
    expect(plan).toMatch(/## Conflicts\n\n\(none\)/);
    // The reviewer started with the merged plan of what it needs, after its prompt.
    const review = JSON.stringify(sessionLines(join(out.dir, 'sessions', 'review.jsonl')));
    expect(review).toContain('merged-plan');
    expect(review).toContain('repos/c/src/app.js');
  });

  it('a spent token budget stops the run cleanly: sessions intact, budget_exhausted, exit code 1', async () => {
    const files: Record<string, string> = {
      'recipe.yaml': `name: budget
provider: scripted
script: script.yaml
concurrency: 2
budget: { tokens: 3000 }
agents:
  worker: { tools: [read] }
tasks:
  - id: look
    for_each: [one, two, three, four]
    agent: worker
    prompt: "Look at \${{ item }}"
`,
      'script.yaml': `turns:
  - tools: [{ name: read, args: { path: notes.txt } }]
  - tools: [{ name: read, args: { path: notes.txt } }]
  - text: "Looked."
`,
      'notes.txt': 'some notes\n',
    };
    const dir = tempProject(files);
    const lines: string[] = [];
    const code = await main([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs'), '--json'], {
      stdout: (t) => lines.push(t),
      stderr: () => undefined,
      cwd: dir,
    });
    expect(code).toBe(1);
    const parsed = lines
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; status?: string; runId: string });
    expect(parsed.at(-1)).toMatchObject({ type: 'run_end', status: 'budget_exhausted' });
    expect(parsed.some((e) => e.type === 'budget_exhausted')).toBe(true);
    const runDir = join(dir, 'runs', parsed[0]!.runId);
    const result = JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as {
      status: string;
      usage: { totalTokens: number };
      instances: { status: string; failure?: string }[];
    };
    expect(result.status).toBe('budget_exhausted');
    expect(result.instances.some((i) => i.failure === 'budget')).toBe(true);
    // The budget held: spend never passed it by more than one in-flight call per running agent.
    expect(result.usage.totalTokens).toBeLessThan(3000 + 2 * 1500);
    for (const e of ofType(events(runDir), 'instance_start')) {
      const file = join(runDir, 'sessions', `${e.key}.jsonl`);
      if (existsSync(file)) expect(sessionLines(file).length).toBeGreaterThan(0);
    }
  });

  it('a worker that throws, exits or runs out of memory is retried on a new thread and the run succeeds', async () => {
    const ext = join(import.meta.dirname, 'fixtures', 'crash-extension.ts');
    const dir = tempProject({
      'recipe.yaml': `name: crashes
provider: scripted
script: script.yaml
concurrency: 3
agents:
  crasher: { tools: [crash], extensions: ["${ext}"] }
tasks:
  - id: crash
    for_each: [throw, exit, oom]
    agent: crasher
    prompt: "Crash by \${{ item }}"
    retries: { count: 1, on: [crashed], backoff: { initial: 10ms } }
`,
      'script.yaml': `conversations:
  - match: "Crash by (\\\\w+)"
    turns:
      - tools: [{ name: crash, args: { mode: "{{match.1}}" } }]
      - text: "Recovered after {{match.1}}."
`,
    });
    // One thread per agent: each crash is its own (shared-thread crashes: shared-threads.test.ts).
    const out = await run(dir, {
      agentsPerThread: 1,
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16 },
    });
    expect(out.status).toBe('succeeded');
    const log = events(out.dir);
    const retries = ofType(log, 'instance_retry');
    expect(retries.map((r) => [r.key, r.failure]).sort()).toEqual([
      ['crash.exit', 'crashed'],
      ['crash.oom', 'crashed'],
      ['crash.throw', 'crashed'],
    ]);
    expect(retries.find((r) => r.key === 'crash.oom')!.error).toMatch(/memory/);
    expect(retries.find((r) => r.key === 'crash.exit')!.error).toMatch(/exited/);
    expect(retries.find((r) => r.key === 'crash.throw')!.error).toMatch(/boom from the crash tool/);
    const done = ofType(log, 'instance_done');
    expect(done.map((d) => [d.key, d.attempt, d.output]).sort()).toEqual([
      ['crash.exit', 2, 'Recovered after exit.'],
      ['crash.oom', 2, 'Recovered after oom.'],
      ['crash.throw', 2, 'Recovered after throw.'],
    ]);
    // The second attempt continued the first one's session (the crash call is still in it).
    const starts = ofType(log, 'instance_start').filter((s) => s.attempt === 2);
    expect(starts.every((s) => s.resumedFromLeaf === true)).toBe(true);
  });
});
