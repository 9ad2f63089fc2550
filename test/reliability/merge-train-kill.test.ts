// kill -9 of the coordinator (the real CLI process) while the merge train lands the work of six
// tasks in one repository (two of them on the same line: one is repaired), at seeded random
// points of the train (counted in its logged steps, so the kills fall while it works), then
// resumed (and killed again at a random step of the first resume) until the run ends. However the
// kills fall, even between a landing's files being written and its `landed` step being logged, or
// between a repair being logged and its agent starting, every instance lands exactly once, the
// checkout holds each change once, verify passed on every landing, and no worktree is left.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/seeded-random.js';
import { runFolderName } from '../helpers/run-folder.js';
import {
  cleanupTempDirs,
  events,
  gitInit,
  gitWorktrees,
  ofType,
  tempProject,
} from '../orchestrator/helpers/run-fixtures.js';
import { TRAIN_CHECK, TRAIN_EDITS, TRAIN_TASKS, trainRepoFiles } from '../orchestrator/helpers/six-task-repo.js';
import { type Exited, exited, printSummary, spawnCli, until } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

const NAMES = TRAIN_TASKS;
const EDITS = TRAIN_EDITS;

/**
 * Each edit overwrites, so only a landing applied twice could show twice. A call a kill cuts off
 * comes back as "may or may not have taken effect" and this model makes it again: three calls.
 * Each write renames a whole file over the old one (see TRAIN_EDITS), so a cut-off call that ran
 * after the last whole one cannot leave the file truncated.
 */
const turns = (command: string, text: string): string =>
  `    turns:\n${`      - tools: [{ name: bash, args: { command: "${command}" } }]\n`.repeat(3)}      - text: "${text}"\n`;

function project(): string {
  const tasks = NAMES.map(
    (n) => `  - id: ${n}
    agent: editor
    cwd: repo
    isolation: worktree
    merge: apply
    verify: "sh check.sh"
    prompt: "Task ${n}"
`,
  ).join('');
  const repairs = ['five', 'six']
    .map(
      (n) =>
        `  - match: "^Repair \\\\d of \\\\d[\\\\s\\\\S]*Task ${n}"\n${turns("printf 'value=five,six\\\\n' > same.txt.part && mv same.txt.part same.txt", `${n} repaired`)}`,
    )
    .join('');
  const convs = NAMES.map((n) => `  - match: "^Task ${n}"\n${turns(EDITS[n]!, `${n} done`)}`).join('');
  const dir = tempProject({
    'recipe.yaml': `name: train-kill
provider: scripted
script: script.yaml
concurrency: 6
agents:
  editor: { tools: [bash] }
tasks:
${tasks}`,
    'script.yaml': `conversations:\n${repairs}${convs}`,
    ...trainRepoFiles(TRAIN_CHECK),
  });
  gitInit(join(dir, 'repo'));
  return dir;
}

/** How many train steps the run log holds. */
function trainSteps(runs: string): number {
  const name = runFolderName(runs);
  const file = name === undefined ? undefined : join(runs, name, 'run.jsonl');
  if (!file || !existsSync(file)) return 0;
  return readFileSync(file, 'utf8').split('"type":"train_step"').length - 1;
}

/** Whether the run log holds a train step of this phase. */
function stepLogged(runs: string, phase: string): boolean {
  const name = runFolderName(runs);
  const file = name === undefined ? undefined : join(runs, name, 'run.jsonl');
  return !!file && existsSync(file) && readFileSync(file, 'utf8').includes(`"phase":"${phase}"`);
}

/**
 * Starts `args`, kills it with SIGKILL once the log holds `killAt` train steps, or a step of the
 * phase `killAt` names (or lets it end first).
 */
async function runAndKill(args: string[], runs: string, killAt: number | string | undefined): Promise<Exited> {
  const child = spawnCli(args, {});
  const done = exited(child);
  let ended = false;
  void done.then(() => {
    ended = true;
  });
  if (killAt !== undefined) {
    const reached = (): boolean => (typeof killAt === 'number' ? trainSteps(runs) >= killAt : stepLogged(runs, killAt));
    await until(() => ended || reached(), `train step ${killAt}`, 240_000);
    if (!ended) child.kill('SIGKILL');
  }
  return done;
}

/**
 * One trial: a run killed at `firstKill` (a train step count, or the first step of that phase),
 * its resume killed again at a seeded step among the next `resumeKillSpan`, then resumed to the
 * end; checks that every instance landed exactly once, verify passed on each landing, the checkout
 * holds each change once and no worktree is left. Returns its kills and where each fell (the train
 * steps logged then, of the steps of the whole run).
 */
async function killAndResume(
  trial: number,
  firstKill: number | string,
  resumeKillSpan: number,
  rand: () => number,
): Promise<{ kills: number; fell: string[] }> {
  let kills = 0;
  const fell: string[] = [];
  const dir = project();
  const runs = join(dir, 'runs');
  const repo = join(dir, 'repo');
  const first = await runAndKill([join(dir, 'recipe.yaml'), '--run-dir', runs], runs, firstKill);
  const runDir = join(runs, runFolderName(runs)!);
  let last = first;
  if (first.signal === 'SIGKILL') {
    kills++;
    fell.push(`${trainSteps(runs)}`);
    const second = await runAndKill(
      ['resume', runDir],
      runs,
      trainSteps(runs) + 1 + Math.floor(rand() * resumeKillSpan),
    );
    last = second;
    if (second.signal === 'SIGKILL') {
      kills++;
      fell.push(`resume ${trainSteps(runs)}`);
      last = await runAndKill(['resume', runDir], runs, undefined);
    }
  }
  expect(last.code, `trial ${trial}: ${last.stderr}`).toBe(0);
  fell.push(`end ${trainSteps(runs)}`);

  const log = events(runDir);
  expect(ofType(log, 'instance_failed'), `trial ${trial}`).toEqual([]);
  const steps = ofType(log, 'train_step');
  const story = steps.map((s) => `${s.key} ${s.phase}`).join(', ');
  // Each instance landed once, with verify green on its merged tree (or nothing left to merge).
  for (const n of NAMES) {
    const landed = steps.filter((s) => s.key === n && s.phase === 'landed');
    expect(landed, `trial ${trial}: ${n}: ${story}`).toHaveLength(1);
    expect(landed[0]!.verify?.every((v) => v.ok) ?? true, `trial ${trial}: ${n}`).toBe(true);
    expect(ofType(log, 'instance_done').filter((e) => e.key === n)).toHaveLength(1);
  }
  expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a done\n');
  expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b done\n');
  const shared = readFileSync(join(repo, 'shared.txt'), 'utf8');
  expect(shared).toBe(
    `top by three\n${Array.from({ length: 8 }, (_, i) => `line ${i + 2}`).join('\n')}\nbottom by four\n`,
  );
  expect(readFileSync(join(repo, 'same.txt'), 'utf8'), `trial ${trial}: ${story}`).toBe('value=five,six\n');
  execFileSync('sh', ['check.sh'], { cwd: repo });
  const wts = join(runDir, 'worktrees');
  expect(existsSync(wts) ? readdirSync(wts) : [], `trial ${trial}: worktrees left`).toEqual([]);
  expect(gitWorktrees(repo)).toHaveLength(1);
  return { kills, fell };
}

describe('the merge train under kill -9 of the coordinator', () => {
  it('resumed after kills at random steps of the train, every instance lands exactly once', async () => {
    // A whole train logs 15 steps here (6 landings of 2, a conflict, a repair, ...). Each trial
    // kills in a phase of its own rather than more trials drawn over the whole train: the first at
    // a seeded step among the first landings, the second as soon as the repair is logged (its agent
    // not yet started, or under way); each resume is killed again at a step after it (after the
    // repair only its landing may be left: that resume is killed at its next step). The two trials
    // run at the same time (#43): each has its own project and seeded dice, and every kill waits on
    // a step count of its own run log, never on a clock, so where a kill falls does not depend on
    // what else runs.
    const rand = [seededRandom(20261206), seededRandom(20261207)];
    const trials = await Promise.all([
      killAndResume(0, 1 + Math.floor(rand[0]!() * 8), 4, rand[0]!),
      killAndResume(1, 'repair', 1, rand[1]!),
    ]);
    const kills = trials.reduce((n, t) => n + t.kills, 0);
    printSummary('merge-train-kill', {
      trials: trials.length,
      kills,
      killedAtSteps: trials.map((t) => t.fell.join(',')).join(','),
    });
    expect(kills).toBeGreaterThan(0);
  }, 900_000);
});
