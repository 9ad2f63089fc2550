// Bounded agents in a recipe, end to end through the CLI with real worker threads and the
// scripted model: max_turns (per attempt, over all the prompts of the attempt), loop detection,
// honest pair outcomes, and what `show`, result.json and the exit code say about them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { cleanupTempDirs, events, ofType, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

interface ResultInstance {
  id: string;
  status: string;
  failure?: string;
  error?: string;
  attempts: number;
  attemptFailures?: { attempt: number; failure: string }[];
}

/** Runs `orchestrate <recipe> --run-dir runs` in-process; the exit code, stdout and the run folder. */
async function orchestrate(
  dir: string,
  ...extra: string[]
): Promise<{ code: number; stdout: string; stderr: string; runDir: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs'), ...extra], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    cwd: dir,
    env: { PATH: process.env.PATH },
  });
  const runId = /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(stdout + stderr)?.[1];
  if (!runId) throw new Error(`no run id in the output:\n${stdout}\n${stderr}`);
  return { code, stdout, stderr, runDir: join(dir, 'runs', runId) };
}

function resultOf(runDir: string): { status: string; instances: ResultInstance[] } {
  return JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as {
    status: string;
    instances: ResultInstance[];
  };
}

async function show(runDir: string): Promise<string> {
  let stdout = '';
  const code = await main(['show', runDir], {
    stdout: (t) => (stdout += t),
    stderr: () => undefined,
    cwd: runDir,
    env: { PATH: process.env.PATH },
  });
  expect(code).toBe(0);
  return stdout;
}

/** A script whose model reads a different file every turn (no loop), ending after `n` reads. */
function readingScript(n: number): string {
  const turns = Array.from({ length: n }, (_, i) => `  - tools: [{ name: read, args: { path: f${i}.txt } }]`);
  return `turns:\n${turns.join('\n')}\n  - text: "finally done"\n`;
}

describe('bounded instances (scripted model, worker threads)', () => {
  it('max_turns stops an instance that keeps calling tools: failed max_turns, not retried, exit 1, and show says why', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: capped
provider: scripted
script: script.yaml
agents:
  reader: { tools: [read], max_turns: 50 }
tasks:
  - id: look
    agent: reader
    prompt: "Read everything"
    max_turns: 3
    retries: 2
`,
      'script.yaml': readingScript(12),
    });
    const r = await orchestrate(dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('max_turns');
    const result = resultOf(r.runDir);
    expect(result.status).toBe('failed');
    const look = result.instances.find((i) => i.id === 'look')!;
    // The task's max_turns (3) wins over the agent's (50); the default retry list leaves max_turns out.
    expect(look).toMatchObject({ status: 'failed', failure: 'max_turns', attempts: 1 });
    expect(look.error).toMatch(/Stopped: 3 turns \(max_turns 3/);
    expect(look.error).toMatch(/raise max_turns/i);
    const log = events(r.runDir);
    expect(ofType(log, 'instance_retry')).toHaveLength(0);
    expect(ofType(log, 'instance_failed').at(-1)).toMatchObject({ key: 'look', failure: 'max_turns', final: true });
    expect(ofType(log, 'agent_event').some((e) => e.event.type === 'run_stopped' && e.event.kind === 'max_turns')).toBe(
      true,
    );
    // Three model calls were made, not one more.
    expect(ofType(log, 'agent_event').filter((e) => e.event.type === 'turn_end')).toHaveLength(3);
    expect(await show(r.runDir)).toMatch(/error \(max_turns\): Stopped: 3 turns \(max_turns 3/);
  });

  it('retries.on: [max_turns] opts in: the retry continues the session with a fresh max_turns and finishes', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: more-turns
provider: scripted
script: script.yaml
agents:
  reader: { tools: [read], max_turns: 4 }
tasks:
  - id: look
    agent: reader
    prompt: "Read everything"
    retries: { count: 1, backoff: { initial: 1ms }, on: [max_turns] }
`,
      // 6 reads and an answer: 7 turns, more than one attempt's 4, fewer than two attempts' 8.
      'script.yaml': readingScript(6),
    });
    const r = await orchestrate(dir);
    expect(r.code).toBe(0);
    const look = resultOf(r.runDir).instances.find((i) => i.id === 'look')!;
    expect(look).toMatchObject({
      status: 'done',
      attempts: 2,
      attemptFailures: [{ attempt: 1, failure: 'max_turns' }],
    });
    expect(ofType(events(r.runDir), 'instance_done')[0]).toMatchObject({ key: 'look', text: 'finally done' });
  });

  it('max_turns counts every prompt of the attempt: the turns of the task prompt are gone for the verify fix-up', async () => {
    // Each task: two reads and an answer (3 turns); verify fails; the fix-up writes the file and
    // answers (2 more). 5 turns fit max_turns 5; with 4 the fix-up is stopped, though alone it
    // fits; with 3 it never starts.
    const task = (id: string, cap: number) => `  - id: ${id}
    agent: fixer
    cwd: ${id}
    prompt: "Make fixed.txt"
    verify: ["test -f fixed.txt"]
    verify_retries: 1
    max_turns: ${cap}
    on_failure: continue
`;
    const dir = tempProject({
      'recipe.yaml': `name: fixups
provider: scripted
script: script.yaml
agents:
  fixer: { tools: [read, write] }
tasks:
${task('five', 5)}${task('four', 4)}${task('three', 3)}`,
      'script.yaml': `turns:
  - tools: [{ name: read, args: { path: notes.txt } }]
  - tools: [{ name: read, args: { path: more.txt } }]
  - text: "I looked around."
  - tools: [{ name: write, args: { path: fixed.txt, content: "ok" } }]
  - text: "fixed.txt is written."
`,
      'five/notes.txt': 'n\n',
      'five/more.txt': 'm\n',
      'four/notes.txt': 'n\n',
      'four/more.txt': 'm\n',
      'three/notes.txt': 'n\n',
      'three/more.txt': 'm\n',
    });
    const r = await orchestrate(dir);
    expect(r.code).toBe(1);
    const byId = new Map(resultOf(r.runDir).instances.map((i) => [i.id, i]));
    expect(byId.get('five')).toMatchObject({ status: 'done' });
    expect(byId.get('four')).toMatchObject({ status: 'failed', failure: 'max_turns' });
    expect(byId.get('four')!.error).toMatch(/max_turns 4/);
    // With 3, the first prompt used them all: the fix-up is not even sent.
    expect(byId.get('three')).toMatchObject({ status: 'failed', failure: 'max_turns' });
    expect(byId.get('three')!.error).toMatch(/all 3 turns of max_turns were used before this fix-up prompt/);
    expect(
      ofType(events(r.runDir), 'agent_event').filter((e) => e.key === 'three' && e.event.type === 'turn_end'),
    ).toHaveLength(3);
  });

  it('loop detection warns, then stops a model that repeats one call (class loop); loop: false leaves it to max_turns', async () => {
    const same = Array.from({ length: 12 }, () => '  - tools: [{ name: read, args: { path: same.txt } }]').join('\n');
    const dir = tempProject({
      'recipe.yaml': `name: loops
provider: scripted
script: script.yaml
agents:
  guarded: { tools: [read] }
  unguarded: { tools: [read], loop: false, max_turns: 8 }
tasks:
  - id: guarded
    agent: guarded
    prompt: "Read same.txt"
    retries: 2
    on_failure: continue
  - id: unguarded
    agent: unguarded
    prompt: "Read same.txt"
    on_failure: continue
`,
      'script.yaml': `turns:\n${same}\n  - text: "done"\n`,
      'same.txt': 'same\n',
    });
    const r = await orchestrate(dir);
    expect(r.code).toBe(1);
    const byId = new Map(resultOf(r.runDir).instances.map((i) => [i.id, i]));
    // A deterministic loop is not retried: a retry would only pay for it again.
    expect(byId.get('guarded')).toMatchObject({ status: 'failed', failure: 'loop', attempts: 1 });
    expect(byId.get('unguarded')).toMatchObject({ status: 'failed', failure: 'max_turns' });
    const log = events(r.runDir).filter((e) => e.type === 'agent_event');
    const guarded = log
      .filter((e) => 'key' in e && e.key === 'guarded')
      .map((e) => (e.type === 'agent_event' ? e.event.type : ''));
    expect(guarded).toContain('loop_warning');
    expect(guarded.indexOf('loop_warning')).toBeLessThan(guarded.indexOf('run_stopped'));
    // Stopped long before the script runs out (4 identical calls, then 2 grace turns).
    expect(guarded.filter((t) => t === 'turn_end').length).toBeLessThan(12);
    const unguarded = log
      .filter((e) => 'key' in e && e.key === 'unguarded')
      .map((e) => (e.type === 'agent_event' ? e.event.type : ''));
    expect(unguarded).not.toContain('loop_warning');
    // The progress log says it too, before the failure line.
    expect(r.stderr).toMatch(
      /guarded: loop warning \(.+\); it is stopped if it goes on[\s\S]*guarded: failed \(loop\)/,
    );
    expect(unguarded.filter((t) => t === 'turn_end')).toHaveLength(8);
  });

  const pairRecipe = (extra: string) => ({
    'recipe.yaml': `name: review
provider: scripted
script: script.yaml
agents:
  planner: { system: "You are the PLANNER of this pair.", tools: [read] }
  worker: { system: "You are the WORKER of this pair.", tools: [read] }
tasks:
  - id: build
    pair: { planner: planner, worker: worker, max_rounds: 2${extra} }
    prompt: "Write a greeting."
`,
    'script.yaml': `conversations:
  - match: "You are the PLANNER"
    turns:
      - text: "Corrections: the greeting must be in French."
      - text: "Corrections: still not French."
  - match: "You are the WORKER"
    turns:
      - text: "Hello."
      - text: "Hello again."
`,
  });

  it('a pair that runs out of max_rounds without approval fails with class not_approved (exit 1)', async () => {
    const r = await orchestrate(tempProject(pairRecipe('')));
    expect(r.code).toBe(1);
    const build = resultOf(r.runDir).instances.find((i) => i.id === 'build')!;
    expect(build).toMatchObject({ status: 'failed', failure: 'not_approved', attempts: 1 });
    expect(build.error).toMatch(/did not approve the work in 2 rounds \(max_rounds 2\)/);
    expect(build.error).toContain('still not French');
    expect(build.error).toContain('on_max_rounds: accept');
    expect(ofType(events(r.runDir), 'instance_done')).toHaveLength(0);
    expect(await show(r.runDir)).toMatch(/error \(not_approved\)/);
  });

  it('with on_max_rounds: accept the last work counts: succeeded, approved false, exit 0', async () => {
    const r = await orchestrate(tempProject(pairRecipe(', on_max_rounds: accept')));
    expect(r.code).toBe(0);
    expect(resultOf(r.runDir).instances.find((i) => i.id === 'build')).toMatchObject({ status: 'done' });
    expect(ofType(events(r.runDir), 'instance_done').find((e) => e.key === 'build')).toMatchObject({
      rounds: 2,
      approved: false,
      output: 'Hello again.',
    });
  });
});
