// `publish --apply` after a pull request was merged and the forge deleted its branch (GitHub's
// "automatically delete head branches"): the changeset is left as it is, and the branch is not
// pushed back to the remote. The strict fake GitHub (Octokit on the wire), bare file:// remotes.
// The same for `forge: git` once `orchestrate status` saw the branch merged into its base.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import {
  TOKEN,
  git,
  gitForgeRecipe,
  project,
  recipe,
  remoteBranches,
  runCampaign,
  forgeRepos,
} from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

describe('publish --apply after a merge', () => {
  let gh: FakeGitHub | undefined;
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('does not bring back the branch the forge deleted', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    writeFileSync(
      join(dir, 'recipe.yaml'),
      recipe(dir, 'github', gh.url, 'Change ${{ repo.name }}').replace(/\n {2}labels: .*\n {2}reviewers: .*/, ''),
    );
    const runDir = await runCampaign(dir);
    const cli = (...a: string[]) =>
      runCli([...a, '--run-dir', join(dir, 'runs')], {
        cwd: dir,
        env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
      });
    expect((await cli('publish', runDir, '--apply', '--only', 'change.repo-a')).code).toBe(0);
    gh.merge('acme/repo-a', 1);
    git(join(dir, 'remotes', 'repo-a.git'), 'update-ref', '-d', 'refs/heads/campaign/repo-a');
    const writes = gh.writes.length;

    const r = await cli('publish', runDir, '--apply', '--only', 'change.repo-a');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'change.repo-a: unchanged  https://github.example/acme/repo-a/pull/1 is merged; not reopened',
    );
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/main']);
    expect(gh.writes.length).toBe(writes);
  });

  it('forge: git: a branch status saw merged is not pushed again', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`));
    const runDir = await runCampaign(dir);
    const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir });
    expect((await cli('publish', runDir, '--apply', '--only', 'change.repo-a')).code).toBe(0);
    // Merged on the remote (a fast-forward), seen by status, then the branch deleted.
    const bare = join(dir, 'remotes', 'repo-a.git');
    git(bare, 'update-ref', 'refs/heads/main', git(bare, 'rev-parse', 'campaign/repo-a').trim());
    const seen = await cli('status', runDir);
    expect(seen.stdout).toMatch(/change\.repo-a\s+merged/);
    git(bare, 'update-ref', '-d', 'refs/heads/campaign/repo-a');

    const r = await cli('publish', runDir, '--apply', '--only', 'change.repo-a');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'change.repo-a: unchanged  campaign/repo-a was merged into main (orchestrate status saw it); not pushed again',
    );
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/main']);
  });
});
