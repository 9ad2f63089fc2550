// kill -9 of the coordinator (the real CLI process) while finished work waits for its turn in the
// merge train (`land_order: task`): `two` has finished and waits behind `one`, which is still at
// work. The kill falls once two's `waiting` step is in the log (an event, not a time). The resume
// does not run two's agent again (no model call of it after run_resume): its kept work lands in
// its turn, after one, exactly once. A waiting instance whose worktree is gone by the resume
// fails class workspace, naming its patch, rather than landing an empty worktree as done.
// The two tests run at the same time (#43): each kills and resumes a run of its own project, and
// the kill waits on its own run log, never on a clock.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFolderName } from '../helpers/run-folder.js';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { exited, spawnCli, until } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

/** Whether the run log under `runs` holds a `waiting` train step. */
function waitingLogged(runs: string): boolean {
  const name = runFolderName(runs);
  if (name === undefined) return false;
  return readFileSync(join(runs, name, 'run.jsonl'), 'utf8')
    .split('\n')
    .some((l) => l.includes('"type":"train_step"') && l.includes('"phase":"waiting"'));
}

/** A project whose run is killed (-9) once two's work waits for its turn behind one; `go` lets one finish. */
async function killedWhileWaiting(): Promise<{ dir: string; runDir: string; go: string }> {
  const dir = tempProject({ 'repo/base.txt': 'base\n' });
  gitInit(join(dir, 'repo'));
  const runs = join(dir, 'runs');
  const go = join(dir, 'go');
  // one works until the test lets it go (after the kill); a call the kill cuts off is made again.
  const oneTurn = `      - tools: [{ name: bash, args: { command: "until [ -f ${go} ]; do sleep 0.1; done; printf 'one\\\\n' > one.txt" } }]\n`;
  writeFileSync(
    join(dir, 'script.yaml'),
    `conversations:
  - match: "^Task one"
    turns:
${oneTurn.repeat(3)}      - text: "one done"
  - match: "^Task two"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'two\\\\n' > two.txt" } }]
      - text: "two done"
`,
  );
  writeFileSync(
    join(dir, 'recipe.yaml'),
    `name: train-wait-kill
provider: scripted
script: script.yaml
sandbox: none
concurrency: 2
agents:
  editor: { tools: [bash] }
defaults: { isolation: worktree, merge: apply, land_order: task, agent: editor, cwd: repo }
tasks:
  - id: one
    prompt: "Task one"
  - id: two
    prompt: "Task two"
`,
  );
  const first = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], {});
  const firstEnd = exited(first);
  let ended = false;
  void firstEnd.then(() => {
    ended = true;
  });
  await until(() => ended || waitingLogged(runs), "two's waiting step", 120_000);
  expect(ended, 'the run ended before two waited').toBe(false);
  first.kill('SIGKILL');
  expect((await firstEnd).signal).toBe('SIGKILL');
  const runDir = join(runs, runFolderName(runs)!);
  expect(ofType(events(runDir), 'instance_done')).toEqual([]);
  expect(existsSync(join(dir, 'repo', 'two.txt'))).toBe(false);
  return { dir, runDir, go };
}

describe('land_order: task under kill -9 of the coordinator', { concurrent: true }, () => {
  it('work killed while it waits for its turn is not run again on resume, and lands in its turn', async () => {
    const { dir, runDir, go } = await killedWhileWaiting();
    writeFileSync(go, '');
    const resumed = await exited(spawnCli(['resume', runDir], {}));
    expect(resumed.code, resumed.stderr).toBe(0);

    const log = events(runDir);
    const resumedAt = log.findIndex((e) => e.type === 'run_resume');
    const after = log.slice(resumedAt);
    // two's agent was not run again: no model call, no agent event of it after the resume.
    expect(after.filter((e) => (e.type === 'call_usage' || e.type === 'agent_event') && e.key === 'two')).toEqual([]);
    const steps = ofType(log, 'train_step');
    expect(steps.filter((s) => s.phase === 'landed').map((s) => s.key)).toEqual(['one', 'two']);
    expect(
      ofType(log, 'instance_done')
        .map((e) => e.key)
        .sort(),
    ).toEqual(['one', 'two']);
    const twoDone = ofType(log, 'instance_done').find((e) => e.key === 'two')!;
    expect(twoDone.text).toBe('two done');
    expect(twoDone.applied).toBe(true);
    expect(readFileSync(join(dir, 'repo', 'one.txt'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(dir, 'repo', 'two.txt'), 'utf8')).toBe('two\n');
  }, 300_000);

  it('a waiting instance whose worktree is gone at the resume fails workspace, saying where its work is, instead of landing nothing', async () => {
    const { dir, runDir, go } = await killedWhileWaiting();
    rmSync(join(runDir, 'worktrees', 'two'), { recursive: true, force: true });
    writeFileSync(go, '');
    const resumed = await exited(spawnCli(['resume', runDir], {}));
    expect(resumed.code).not.toBe(0);
    const log = events(runDir);
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => [e.key, e.failure])).toEqual([['two', 'workspace']]);
    expect(failed[0]!.error).toContain('patches/two.diff');
    expect(existsSync(join(runDir, 'patches', 'two.diff'))).toBe(true);
    expect(
      ofType(log, 'train_step')
        .filter((s) => s.key === 'two')
        .map((s) => s.phase),
    ).toEqual(['waiting', 'failed']);
    // one, not waiting for anything, still lands.
    expect(readFileSync(join(dir, 'repo', 'one.txt'), 'utf8')).toBe('one\n');
    expect(existsSync(join(dir, 'repo', 'two.txt'))).toBe(false);
  }, 300_000);
});
