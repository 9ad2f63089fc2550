// `orchestrate status` tracks what a campaign needs per changeset, against the strict fake forges
// (Octokit and GitLab's REST API on the wire): on GitHub, a check run and a commit status that fail
// are both named, a review asking for changes with two line comments counts two unanswered
// comments, and the burndown line counts merged / ready / CI failing / changes requested /
// pending; on GitLab, a failed head pipeline names its failed job and a diff discussion is an
// unanswered comment. `--json` carries the same as plain ChangesetStatus objects.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChangesetStatus } from '../../src/publish/track.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { GL_TOKEN, TOKEN, git, project, recipe, runCampaign, forgeRepos } from './campaign-fixtures.js';
import { type FakeGitHub, type FakeGitLab, fakeGitHub, fakeGitLab } from './fake-forges.js';

/** The campaign recipe, ready for review, without labels and reviewers (each is a write the client spaces a second apart). */
function plainRecipe(dir: string, forge: 'github' | 'gitlab', url: string): string {
  return recipe(dir, forge, url, 'Change ${{ repo.name }}')
    .replace(/\n {2}labels: \[campaign\]/, '')
    .replace(/\n {2}reviewers: \[octocat\]/, '')
    .replace('\n  body:', '\n  draft: false\n  body:');
}

describe('status tracks CI, reviews and the burndown', () => {
  let gh: FakeGitHub | undefined;
  let gl: FakeGitLab | undefined;
  afterAll(async () => {
    await gh?.close();
    await gl?.close();
    cleanupTempDirs();
  });

  it('GitHub: failing checks and statuses by name, unanswered review comments, the counts', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    writeFileSync(join(dir, 'recipe.yaml'), plainRecipe(dir, 'github', gh.url));
    const runDir = await runCampaign(dir);
    const env = { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN };
    const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir, env });
    expect((await cli('publish', runDir, '--apply')).code).toBe(0);
    const head = (r: string) => git(bare(r), 'rev-parse', `campaign/${r}`).trim();
    gh.setCheckRuns('acme/repo-a', head('repo-a'), [
      { name: 'unit tests', conclusion: 'failure', log: 'FAIL greet.test\n' },
      { name: 'lint', conclusion: 'success', log: 'ok\n' },
    ]);
    gh.ci.setStatus('acme/repo-a', head('repo-a'), 'ci/legacy', 'failure', 'legacy CI failed');
    gh.setCheckRuns('acme/repo-b', head('repo-b'), [{ name: 'unit tests', conclusion: 'success', log: 'ok\n' }]);
    gh.review('acme/repo-b', 'campaign/repo-b', {
      user: 'octocat',
      state: 'CHANGES_REQUESTED',
      body: 'Two things',
      comments: [
        { path: 'greet.txt', line: 1, body: 'Say "hi" instead' },
        { path: 'greet.txt', line: 1, body: 'And end with a full stop' },
      ],
    });

    const json = await cli('status', runDir, '--json');
    expect(json.stderr).toBe('');
    const s = JSON.parse(json.stdout) as { changesets: ChangesetStatus[]; progress: Record<string, number> };
    expect(s.changesets.map((c) => [c.key, c.progress, c.checks, c.failing, c.review, c.unanswered])).toEqual([
      ['change.repo-a', 'ci_failing', 'failing', ['unit tests', 'ci/legacy'], 'none', 0],
      ['change.repo-b', 'changes_requested', 'passing', [], 'changes_requested', 2],
    ]);
    expect(s.progress).toEqual({ merged: 0, ready: 0, ci_failing: 1, changes_requested: 1, pending: 0, closed: 0 });

    // Approved and green: ready; merged: merged.
    gh.review('acme/repo-b', 'campaign/repo-b', { user: 'octocat', state: 'APPROVED' });
    gh.merge('acme/repo-a', 1);
    const text = await cli('status', runDir);
    expect(text.stdout).toMatch(/change\.repo-b\s+open\s+passing\s+approved, 2 unanswered/);
    expect(text.stdout).toContain('merged 1 · ready 1 · CI failing 0 · changes requested 0 · pending 0');
    const show = await cli('show', runDir);
    expect(show.stdout).toContain('merged 1 · ready 1 · CI failing 0 · changes requested 0 · pending 0');
  });

  it('GitLab: the failed job of the head pipeline, a diff discussion unanswered', async () => {
    const { dir } = project('gitlab', () => 'http://127.0.0.1:1/api/v4');
    gl = await fakeGitLab(GL_TOKEN, forgeRepos(dir));
    writeFileSync(join(dir, 'recipe.yaml'), plainRecipe(dir, 'gitlab', `${gl.url}/api/v4`));
    const runDir = await runCampaign(dir);
    const env = { PATH: process.env.PATH, GITLAB_TOKEN: GL_TOKEN };
    const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir, env });
    expect((await cli('publish', runDir, '--apply')).code).toBe(0);
    gl.setPipeline('acme/repo-a', 1, 'failed', [
      { name: 'test', status: 'failed', trace: 'boom\n' },
      { name: 'build', status: 'success', trace: 'ok\n' },
    ]);
    gl.setPipeline('acme/repo-b', 1, 'running');
    gl.discuss('acme/repo-b', 'campaign/repo-b', 'maintainer', 'greet.txt', 1, 'Use a capital letter');
    const s = JSON.parse((await cli('status', runDir, '--json')).stdout) as {
      changesets: ChangesetStatus[];
      progress: Record<string, number>;
    };
    expect(s.changesets.map((c) => [c.state, c.checks, c.failing, c.unanswered, c.progress])).toEqual([
      ['open', 'failing', ['test'], 0, 'ci_failing'],
      ['open', 'pending', [], 1, 'pending'],
    ]);
  });
});
