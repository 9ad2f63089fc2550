// The merge train and best-of-N attempts in a distributed run (issue 39): the agents run on a real
// `orchestrate worker` process through a redis-server of this test's own, while the landing (the
// train's merge, verify on the merged tree, the repair's re-run, the pick) happens on the
// coordinator's side. A train of three with one same-line conflict lands all three after one
// repair that ran on the worker; best-of-3 with pick: verify lands the only attempt that passed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOnCluster } from './helpers/run-on-cluster.js';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { SECRET_ENV, useCluster, type WorkerProcess } from './helpers/cluster-fixture.js';

const cluster = useCluster('distributed merge train and attempts');
const skip = cluster.skip;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  if (!skip) worker = await cluster.startWorker('rail', { concurrency: 3, drainLimitMs: 2_000 });
}, 90_000);
afterAll(() => cleanupTempDirs());

/** Three tasks in one repository: one edits a file of its own, two write the same line. */
function trainProject(): string {
  const edits: Record<string, string> = {
    one: "printf 'a done\\\\n' > a.txt",
    five: "printf 'value=five\\\\n' > same.txt",
    six: "printf 'value=six\\\\n' > same.txt",
  };
  const tasks = Object.keys(edits)
    .map(
      (n) => `  - id: ${n}
    agent: editor
    cwd: repo
    isolation: worktree
    merge: apply
    verify: "sh check.sh"
    prompt: "Task ${n}"
`,
    )
    .join('');
  const repairs = ['five', 'six']
    .map(
      (n) => `  - match: "^Repair 1 of \\\\d[\\\\s\\\\S]*Task ${n}"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'value=five,six\\\\n' > same.txt" } }]
      - text: "${n} repaired"
`,
    )
    .join('');
  const convs = Object.entries(edits)
    .map(
      ([n, cmd]) => `  - match: "^Task ${n}"
    turns:
      - tools: [{ name: bash, args: { command: "${cmd}" } }]
      - text: "${n} done"
`,
    )
    .join('');
  const dir = tempProject({
    'recipe.yaml': `name: train-cluster
provider: scripted
script: script.yaml
concurrency: 3
agents:
  editor: { tools: [bash] }
tasks:
${tasks}`,
    'script.yaml': `conversations:\n${repairs}${convs}`,
    'repo/a.txt': 'a\n',
    'repo/same.txt': 'value=base\n',
    'repo/check.sh': `set -e
! grep -l '^<<<<<<<' *.txt
grep -Eq '^value=[a-z,]+$' same.txt
test "$(wc -l < same.txt)" -eq 1
`,
  });
  gitInit(join(dir, 'repo'));
  return dir;
}

/** One task `fix` of three attempts; only attempt 2 writes what verify wants. */
function attemptsProject(): string {
  const cmds = [
    "printf 'bad one\\\\n' > value.txt",
    "printf 'good\\\\n' > value.txt",
    "printf 'bad three\\\\n' > value.txt",
  ];
  const convs = cmds
    .map(
      (cmd, i) => `  - match: "^Attempt ${i + 1}:"
    turns:
      - tools: [{ name: bash, args: { command: "${cmd}" } }]
      - text: "attempt ${i + 1} done"
`,
    )
    .join('');
  const dir = tempProject({
    'recipe.yaml': `name: best-of-cluster
provider: scripted
script: script.yaml
concurrency: 3
agents:
  editor: { tools: [bash] }
tasks:
  - id: fix
    agent: editor
    cwd: repo
    attempts: 3
    pick: verify
    merge: apply
    verify: "grep -q good value.txt"
    prompt: "Attempt \${{ attempt }}: fix value.txt"
`,
    'script.yaml': `conversations:\n${convs}`,
    'repo/value.txt': 'value=base\n',
  });
  gitInit(join(dir, 'repo'));
  return dir;
}

describe.skipIf(skip)('merge train and attempts over Redis', { timeout: 240_000 }, () => {
  it('a train of three lands all on the coordinator; the same-line conflict is repaired by an agent on the worker', async () => {
    const dir = trainProject();
    const out = await runOnCluster(cluster.redis.url, SECRET_ENV, dir);
    const log = events(out.dir);
    expect(
      ofType(log, 'instance_failed'),
      `${JSON.stringify(ofType(log, 'train_step'))}\n${worker?.stderr() ?? ''}`,
    ).toEqual([]);
    expect(out.status).toBe('succeeded');
    // Every agent, the repair included, ran on the worker.
    expect(new Set(ofType(log, 'instance_start').map((e) => e.worker))).toEqual(new Set(['rail']));
    const repo = join(dir, 'repo');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a done\n');
    expect(readFileSync(join(repo, 'same.txt'), 'utf8')).toBe('value=five,six\n');
    const steps = ofType(log, 'train_step');
    expect(
      steps
        .filter((s) => s.phase === 'landed')
        .map((s) => s.key)
        .sort(),
    ).toEqual(['five', 'one', 'six']);
    const conflicts = steps.filter((s) => s.phase === 'conflict');
    expect(conflicts.map((c) => c.files)).toEqual([['same.txt']]);
    const repaired = conflicts[0]!.key;
    expect(steps.filter((s) => s.phase === 'repair').map((s) => [s.key, s.repair])).toEqual([[repaired, 1]]);
    // The repair's session streamed back from the worker into the run folder.
    const session = readFileSync(join(out.dir, 'sessions', `${repaired}.repair-1.jsonl`), 'utf8');
    expect(session).toContain(`${repaired} repaired`);
  });

  it('best-of-3 with pick: verify runs the attempts on the worker and lands the one that passed', async () => {
    const dir = attemptsProject();
    const out = await runOnCluster(cluster.redis.url, SECRET_ENV, dir);
    const log = events(out.dir);
    expect(out.status, worker?.stderr() ?? '').toBe('succeeded');
    const starts = ofType(log, 'instance_start');
    expect(starts.map((e) => e.key).sort()).toEqual(['fix.attempt-1', 'fix.attempt-2', 'fix.attempt-3']);
    expect(new Set(starts.map((e) => e.worker))).toEqual(new Set(['rail']));
    const [pick] = ofType(log, 'attempt_pick');
    expect(pick?.picked).toBe('fix.attempt-2');
    const landed = ofType(log, 'attempt_landed');
    expect(landed.map((e) => [e.key, e.ok])).toEqual([['fix.attempt-2', true]]);
    expect(readFileSync(join(dir, 'repo', 'value.txt'), 'utf8')).toBe('good\n');
    // The passing attempt's diff was taken on the coordinator from the worktree the worker filled.
    expect(pick?.candidates.map((c) => [c.attempt, c.outcome, c.verify?.ok])).toEqual([
      [1, 'failed', false],
      [2, 'passed', true],
      [3, 'failed', false],
    ]);
    expect(pick?.candidates[1]?.lines).toBe(2);
    expect(readFileSync(join(out.dir, 'patches', 'fix.attempt-2.diff'), 'utf8')).toContain('+good');
    // The attempts that failed their verify on the worker keep their work in the run folder too.
    for (const n of [1, 3]) {
      const failed = ofType(log, 'instance_failed').find((e) => e.key === `fix.attempt-${n}`);
      expect(failed?.patchFile).toBe(`patches/fix.attempt-${n}.diff`);
      expect(readFileSync(join(out.dir, failed!.patchFile!), 'utf8')).toContain('-value=base');
    }
  });
});
