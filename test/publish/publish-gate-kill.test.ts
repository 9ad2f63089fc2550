// The publish gate through real CLI processes (issue 29 item 4): a campaign (forge git, bare
// file:// remotes) whose publish: block has approve: waits at its publish gate with nothing
// pushed, survives kill -9 of its coordinator and `orchestrate resume` (asked again, same record,
// still nothing pushed), then `orchestrate approve <run> --publish` (over the resumed run's
// control socket) makes it push both branches before it ends, logged with who approved.
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHtmlReport } from '../../src/display/html-report.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { readChangesets } from '../../src/run/changesets.js';
import { runCli } from '../cli/run-cli.js';
import { runFolderName } from '../helpers/run-folder.js';
import { exited, spawnCli, until } from '../reliability/helpers/reliability-fixtures.js';
import { cleanupTempDirs, ofType } from '../orchestrator/helpers/run-fixtures.js';
import { project, remoteBranches } from './campaign-fixtures.js';
import { gitRecipe, logOf } from './publish-gate-fixtures.js';

afterAll(() => cleanupTempDirs());

const publishRequests = (runDir: string) =>
  ofType(logOf(runDir), 'approval_requested').filter((e) => e.gate === 'publish');

describe('publish gate (real CLI)', () => {
  it('waits with nothing pushed, survives kill -9 + resume, then approve --publish pushes the branches', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    writeFileSync(join(dir, 'recipe.yaml'), gitRecipe(dir, 'gated', '{ prompt: "Push ${{ changesets.count }}?" }'));
    const runs = join(dir, 'runs');
    const env = { NO_COLOR: '1', USER: 'tester' };
    const first = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], env);
    const firstDone = exited(first);
    let runDir = '';
    await until(() => {
      if (first.exitCode !== null) throw new Error(`the run exited (${first.exitCode}) before its publish gate`);
      const name = runFolderName(runs);
      if (name) runDir = join(runs, name);
      return name !== undefined && publishRequests(runDir).length > 0;
    }, 'the publish gate');
    first.kill('SIGKILL');
    expect((await firstDone).signal).toBe('SIGKILL');
    expect(logOf(runDir).some((e) => e.type === 'run_end')).toBe(false);

    const resumed = exited(spawnCli(['resume', runDir], env));
    await until(() => publishRequests(runDir).length === 2, 'the resumed run at its publish gate');
    const [asked, askedAgain] = publishRequests(runDir);
    expect(askedAgain!.prompt).toBe(asked!.prompt);
    expect(asked!.prompt).toMatch(/^Push 2\? — 2 changesets in repo-a, repo-b: 2 files changed/);
    for (const r of ['repo-a', 'repo-b', 'repo-c']) expect(remoteBranches(dir, r)).toEqual(['refs/heads/main']);
    // No instance ran again: the resume went straight back to the gate.
    expect(ofType(logOf(runDir), 'instance_start')).toHaveLength(3);

    const answer = await runCli(['approve', runDir, '--publish', '--as', 'ana', '--note', 'ship the campaign'], {
      env: { PATH: process.env.PATH },
    });
    expect(answer.stderr).toBe('');
    expect(answer.stdout).toBe('approved the publish gate of change: publishing now\n');
    const end = await resumed;
    expect(end.code, end.stderr).toBe(0);
    // Its output (watch's plain log) says what it waits for and how to answer.
    const said = end.stdout + end.stderr;
    expect(said).toContain('publish change: waiting for approval: Push 2? — 2 changesets in repo-a, repo-b');
    expect(said).toContain(`answer with: orchestrate approve|reject ${basename(runDir)} --publish`);
    expect(said).toContain('publish change: approved by ana via cli: ship the campaign');

    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/gated/repo-a', 'refs/heads/main']);
    expect(remoteBranches(dir, 'repo-b')).toEqual(['refs/heads/gated/repo-b', 'refs/heads/main']);
    expect(remoteBranches(dir, 'repo-c')).toEqual(['refs/heads/main']);
    const log = logOf(runDir);
    expect(
      ofType(log, 'approval_given')
        .filter((g) => g.gate === 'publish')
        .map((g) => [g.decision, g.by, g.via, g.note]),
    ).toEqual([['approved', 'ana', 'cli', 'ship the campaign']]);
    expect(ofType(log, 'changeset_published').map((e) => [e.key, e.outcome])).toEqual([
      ['change.repo-a', 'pushed'],
      ['change.repo-b', 'pushed'],
    ]);
    expect(readChangesets(runDir)!.changesets.map((c) => c.state)).toEqual(['published', 'published']);
    // The run's watch log says what it waited for and how to answer.
    const watched = await runCli(['show', runDir], { env: { PATH: process.env.PATH } });
    expect(watched.stdout).toMatch(/publish gate of change: approved by ana via cli at \S+: ship the campaign/);
    expect(watched.stdout).toContain('published change.repo-a: pushed');
    expect(buildHtmlReport(loadRunFolder(runDir))).toMatch(/publish gate of change: approved by ana via cli at /);
  }, 120_000);
});
