// `publish --follow-up` on changesets that have no pull request says why and what would give them
// one: a `forge: git` campaign opens none (follow_up needs a forge), and a changeset not published
// yet names the command that opens its pull request. Nothing is run or asked of a forge. A round
// whose agent changes nothing (CI failing on the strict fake GitHub) says so as a follow-up round.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { TOKEN, git, gitForgeRecipe, project, recipe, runCampaign, forgeRepos } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

const FOLLOW_UP = '\n  follow_up: { on: [ci_failed] }';

describe('publish --follow-up without pull requests', () => {
  let gh: FakeGitHub | undefined;
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('forge: git: says that follow_up needs a forge that opens pull requests', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    const spec = gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`).replace(
      '\n  forge: git',
      `\n  forge: git${FOLLOW_UP}`,
    );
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    const runDir = await runCampaign(dir);
    const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir });
    expect((await cli('publish', runDir, '--apply')).code).toBe(0);
    const r = await cli('publish', runDir, '--follow-up');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /change\.repo-a: none\s+forge: git pushes a branch and opens no pull request, so there is nothing to follow up \(follow_up and merge_when need forge: github or gitlab\)/,
    );
  });

  it('a changeset not published yet: names the command that opens its pull request', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    const spec = recipe(dir, 'github', 'http://127.0.0.1:1', 'Change ${{ repo.name }}').replace(
      '\n  forge: github',
      `\n  forge: github${FOLLOW_UP}`,
    );
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    const runDir = await runCampaign(dir);
    const id = runDir.split('/').pop()!;
    const r = await runCli(['publish', runDir, '--follow-up', '--run-dir', join(dir, 'runs')], {
      cwd: dir,
      env: { PATH: process.env.PATH, GITHUB_TOKEN: 'ghp_unused' },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `change.repo-b: none  not published yet: orchestrate publish ${id} --apply --only change.repo-b opens its pull request`,
    );
  });

  it('a round whose agent changes nothing is named a follow-up round', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    const spec = recipe(dir, 'github', gh.url, 'Change ${{ repo.name }}')
      .replace(/\n {2}labels: .*\n {2}reviewers: .*/, '')
      .replace('\n  forge: github', `\n  forge: github${FOLLOW_UP}`);
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    const runDir = await runCampaign(dir);
    const cli = (...a: string[]) =>
      runCli([...a, '--run-dir', join(dir, 'runs')], {
        cwd: dir,
        env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
      });
    expect((await cli('publish', runDir, '--apply', '--only', 'change.repo-a')).code).toBe(0);
    const head = git(bare('repo-a'), 'rev-parse', 'campaign/repo-a').trim();
    gh.setCheckRuns('acme/repo-a', head, [{ name: 'unit tests', conclusion: 'failure', log: 'FAIL\n' }]);
    // The scripted agent's edit (hello -> goodbye) finds no "hello" on the pushed branch: no change.
    const r = await cli('publish', runDir, '--follow-up', '--apply', '--only', 'change.repo-a');
    expect(r.stdout).toContain(
      `change.repo-a: failed  the follow-up round of change.repo-a changed nothing on ${head.slice(0, 12)}; its changeset stays as it was`,
    );
  });
});
