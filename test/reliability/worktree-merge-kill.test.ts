// kill -9 of the coordinator (the real CLI process) at seeded random points of a run whose
// instances work in worktrees and land their work in the checkout (merge: apply), then resumed
// (killed again at a random point of the first resume) until it ends. However the kills fall, even
// between a patch landing and its instance being logged done, every change lands exactly once, no
// instance fails with patch_conflict, and no worktree is left behind.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/seeded-random.js';
import { runFolderName } from '../helpers/run-folder.js';
import { cleanupTempDirs, events, gitInit, gitWorktrees, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { type Exited, exited, printSummary, spawnCli, until } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

const ITEMS = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6'];

function project(): string {
  const files: Record<string, string> = {
    'recipe.yaml': `name: land-kill
provider: scripted
script: script.yaml
concurrency: 3
agents:
  editor: { tools: [bash] }
tasks:
  - id: land
    agent: editor
    for_each: [${ITEMS.join(', ')}]
    cwd: repo
    isolation: worktree
    merge: apply
    prompt: "Unit \${{ item }}"
`,
    // The edit overwrites, so only landing the patch twice could put the line in twice. A call a
    // kill interrupts comes back as "may or may not have taken effect", and this model does it
    // again: three calls, so one completes whichever two the (at most two) kills interrupt. Each
    // call writes a .part file and renames it over the old one: a call cut off after the last whole
    // one must not leave the file truncated (a kill between the shell's `>` and its write once did
    // exactly that, and the empty file was what the agent's patch then landed).
    'script.yaml': `conversations:\n${ITEMS.map((i) => `  - match: "Unit ${i}"\n    turns:\n${`      - tools: [{ name: bash, args: { command: "printf 'base\\\\nline-${i}\\\\n' > ${i}.part && mv ${i}.part ${i}.txt" } }]\n`.repeat(3)}      - text: "${i} done"\n`).join('')}`,
  };
  for (const i of ITEMS) files[`repo/${i}.txt`] = 'base\n';
  files['repo/.gitignore'] = '*.part\n';
  const dir = tempProject(files);
  gitInit(join(dir, 'repo'));
  return dir;
}

const lines = (file: string): number => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').length - 1 : 0);

/** Starts `args`, kills it with SIGKILL once the run log has `killAt` lines (or lets it end first). */
async function runAndKill(
  args: string[],
  runs: string,
  killAt: number | undefined,
): Promise<{ killed: boolean; exit: Exited }> {
  const child = spawnCli(args, {});
  const done = exited(child);
  let ended = false;
  void done.then(() => (ended = true));
  if (killAt !== undefined) {
    await until(
      () => {
        const name = runFolderName(runs);
        return ended || (name !== undefined && lines(join(runs, name, 'run.jsonl')) >= killAt);
      },
      `the run log to reach ${killAt} lines`,
      120_000,
    );
    if (!ended) child.kill('SIGKILL');
  }
  const exit = await done;
  return { killed: exit.signal === 'SIGKILL', exit };
}

/**
 * One trial: a run killed once its log has a seeded number of lines in `firstKill`'s part of the
 * run, its resume killed again a few lines later, then resumed to the end; checks that every
 * change landed exactly once and no worktree is left. Returns its kills and where each fell (the
 * run log's lines then, of the lines of the whole run).
 */
async function killAndResume(
  trial: number,
  firstKill: { from: number; span: number },
): Promise<{ kills: number; fell: string[] }> {
  const rand = seededRandom(20261203 + trial);
  let kills = 0;
  const fell: string[] = [];
  const dir = project();
  const runs = join(dir, 'runs');
  const repo = join(dir, 'repo');
  const first = await runAndKill(
    [join(dir, 'recipe.yaml'), '--run-dir', runs],
    runs,
    firstKill.from + Math.floor(rand() * firstKill.span),
  );
  const runId = runFolderName(runs)!;
  expect(runId, 'a run folder').toBeDefined();
  const runDir = join(runs, runId);
  if (first.killed) kills++;
  const logged = lines(join(runDir, 'run.jsonl'));
  if (first.killed) fell.push(`${logged}`);
  const second = first.killed
    ? await runAndKill(['resume', runDir], runs, logged + 2 + Math.floor(rand() * 30))
    : undefined;
  if (second?.killed) {
    kills++;
    fell.push(`resume ${lines(join(runDir, 'run.jsonl'))}`);
  }
  let last = second?.exit ?? first.exit;
  if (second?.killed || (!second && first.killed)) last = (await runAndKill(['resume', runDir], runs, undefined)).exit;
  expect(last.code, `trial ${trial}: ${last.stderr}`).toBe(0);
  fell.push(`end ${lines(join(runDir, 'run.jsonl'))}`);

  const log = events(runDir);
  expect(
    log.filter((e) => e.type === 'instance_failed'),
    `trial ${trial}`,
  ).toEqual([]);
  for (const i of ITEMS) {
    const story = log
      .filter((e) => ('key' in e && e.key === `land.${i}`) || e.type === 'run_resume')
      .map((e) => (e.type === 'agent_event' ? e.event.type : e.type));
    expect(readFileSync(join(repo, `${i}.txt`), 'utf8'), `trial ${trial}: ${i}: ${story.join(' ')}`).toBe(
      `base\nline-${i}\n`,
    );
  }
  expect(
    execFileSync('git', ['status', '--porcelain'], { cwd: repo }).toString().split('\n').filter(Boolean).sort(),
  ).toEqual(ITEMS.map((i) => ` M ${i}.txt`));
  const wts = join(runDir, 'worktrees');
  expect(existsSync(wts) ? readdirSync(wts) : [], `trial ${trial}: worktrees left`).toEqual([]);
  expect(gitWorktrees(repo)).toHaveLength(1);
  return { kills, fell };
}

describe('merge: apply under kill -9 of the coordinator', { concurrent: true }, () => {
  it('every change lands in the checkout exactly once, whatever instant the kills hit', async () => {
    // A whole run logs about 260 lines here: its agents edit until line ~125, where the first of
    // six landings is logged, and the other five follow every 20 to 40 lines. Each trial kills in
    // a part of the run of its own (the seeded instant drawn inside it): the first while the agents
    // edit and nothing has landed, the second among the landings, so two trials cover what more
    // trials drawn over the whole run would. Each resume is killed again soon after it starts.
    // The trials (and this file's other test) run at the same time (#43): each has its own project
    // and its own seeded dice, and every kill waits on a line count of its own run log, never on a
    // clock, so where a kill falls does not depend on what else runs.
    const firstKill = [
      { from: 4, span: 115 },
      { from: 125, span: 130 },
    ];
    const trials = await Promise.all(firstKill.map((kill, trial) => killAndResume(trial, kill)));
    const kills = trials.reduce((n, t) => n + t.kills, 0);
    printSummary('worktree-merge-kill', {
      trials: trials.length,
      kills,
      killedAtLines: trials.map((t) => t.fell.join(',')).join(','),
    });
    expect(kills).toBeGreaterThan(0);
  }, 600_000);

  it('a patch that landed before the kill (its instance not yet logged done) is recognised on resume, not applied again or called a conflict', async () => {
    const dir = project();
    const runs = join(dir, 'runs');
    const repo = join(dir, 'repo');
    // Kill as soon as f1's worktree holds its change, then do what the lost landing would have done.
    const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], {});
    const done = exited(child);
    let ended = false;
    void done.then(() => (ended = true));
    const worktreeFile = (): string => join(runs, runFolderName(runs) ?? '-', 'worktrees', 'land.f1', 'f1.txt');
    await until(
      () => ended || (existsSync(worktreeFile()) && readFileSync(worktreeFile(), 'utf8') === 'base\nline-f1\n'),
      "f1's change in its worktree",
      120_000,
    );
    expect(ended, 'the run ended before f1 edited its worktree').toBe(false);
    child.kill('SIGKILL');
    await done;
    const runDir = join(runs, runFolderName(runs)!);
    expect(events(runDir).some((e) => e.type === 'instance_done' && e.key === 'land.f1')).toBe(false);
    writeFileSync(join(repo, 'f1.txt'), 'base\nline-f1\n');

    const resumed = await exited(spawnCli(['resume', runDir], {}));
    expect(resumed.code, resumed.stderr).toBe(0);
    const f1 = events(runDir).find((e) => e.type === 'instance_done' && e.key === 'land.f1');
    expect(f1).toMatchObject({ applied: true, patchFile: 'patches/land.f1.diff' });
    for (const i of ITEMS) expect(readFileSync(join(repo, `${i}.txt`), 'utf8')).toBe(`base\nline-${i}\n`);
  }, 300_000);
});
