// `orchestrate status` when a look cannot see everything. A `forge: git` campaign whose remotes are
// new and empty (as `orchestrate init batch-refactor` makes them): the pushed branches are there,
// the base branch is not; each changeset is pushed and not merged, with a note naming the missing
// branch, and the look succeeds; a remote that cannot be read at all is still an error (exit 1).
// A GitHub campaign looked at without a token (or with one GitHub refuses): each row keeps what
// the last look saw (a merged pull request stays merged in the counts), or, never seen, is not
// counted ready; the error says how to give a token, as publish --apply says it.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangesetStatus } from '../../src/publish/track.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { TOKEN, git, gitForgeRecipe, project, recipe, runCampaign, forgeRepos } from './campaign-fixtures.js';

describe('status of a forge: git campaign on remotes without the base branch', () => {
  let dir = '';
  let runDir = '';
  const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir });
  beforeAll(async () => {
    ({ dir } = project('github', () => 'http://127.0.0.1:1'));
    // Empty bare remotes instead of clones holding main.
    for (const r of ['repo-a', 'repo-b', 'repo-c']) {
      const bare = join(dir, 'remotes', `${r}.git`);
      rmSync(bare, { recursive: true, force: true });
      git(dir, 'init', '-q', '--bare', bare);
    }
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`));
    runDir = await runCampaign(dir);
    const pushed = await cli('publish', runDir, '--apply');
    expect(pushed.stderr).toBe('');
    expect(pushed.code).toBe(0);
  });
  afterAll(() => cleanupTempDirs());

  it('says pushed, not merged, names the missing branch, and exits 0', async () => {
    const json = await cli('status', runDir, '--json');
    expect(json.code).toBe(0);
    const s = JSON.parse(json.stdout) as { changesets: ChangesetStatus[] };
    expect(s.changesets.map((c) => [c.key, c.state, c.error])).toEqual([
      ['change.repo-a', 'pushed', undefined],
      ['change.repo-b', 'pushed', undefined],
    ]);
    const text = await cli('status', runDir);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('cannot fetch');
    expect(text.stderr).toContain(`change.repo-a: file://${dir}/remotes/repo-a.git has no branch main`);
    expect(text.stderr).toContain('set publish.base');
  });

  it('a remote that cannot be read is still a failed look (exit 1)', async () => {
    rmSync(join(dir, 'remotes', 'repo-b.git', 'objects'), { recursive: true, force: true });
    const text = await cli('status', runDir);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/change\.repo-b .*cannot fetch main/);
  });
});

describe('status when GitHub cannot be asked', () => {
  let gh: FakeGitHub | undefined;
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });
  const noToken = (dir: string) => ({ PATH: `/nonexistent:${process.env.PATH ?? ''}`, HOME: dir });
  type Status = { changesets: ChangesetStatus[]; progress: Record<string, number> };

  it('keeps what the last look saw, counts nothing ready it could not see, and says how to give a token', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    writeFileSync(
      join(dir, 'recipe.yaml'),
      recipe(dir, 'github', gh.url, 'Change ${{ repo.name }}')
        .replace(/\n {2}labels: .*\n {2}reviewers: .*/, '')
        .replace('\n  body:', '\n  draft: false\n  body:'),
    );
    const runDir = await runCampaign(dir);
    const cli = (env: Record<string, string | undefined>, ...a: string[]) =>
      runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir, env });
    const withToken = { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN };
    expect((await cli(withToken, 'publish', runDir, '--apply')).code).toBe(0);

    // Never looked at: not known to be ready.
    const blind = await cli(noToken(dir), 'status', runDir, '--json');
    if (blind.code === 0) return; // gh is installed and logged in on this machine: it gave a token
    const first = JSON.parse(blind.stdout) as Status;
    expect(first.changesets.map((c) => [c.state, c.progress])).toEqual([
      ['open', 'pending'],
      ['open', 'pending'],
    ]);
    expect(first.progress.ready).toBe(0);
    expect(first.changesets[0]!.error).toBe(
      'no GitHub token: set GITHUB_TOKEN (or GH_TOKEN), or log in with `gh auth login`',
    );

    // A look that works sees repo-a merged and repo-b open and green.
    gh.merge('acme/repo-a', 1);
    const seen = JSON.parse((await cli(withToken, 'status', runDir, '--json')).stdout) as Status;
    expect(seen.changesets.map((c) => [c.state, c.progress])).toEqual([
      ['merged', 'merged'],
      ['open', 'ready'],
    ]);

    // Then no token, and a token GitHub refuses: the rows keep that, with the error.
    for (const env of [noToken(dir), { PATH: process.env.PATH, GITHUB_TOKEN: 'ghp_revoked' }]) {
      const r = await cli(env, 'status', runDir, '--json');
      expect(r.code).toBe(1);
      const s = JSON.parse(r.stdout) as Status;
      expect(s.changesets.map((c) => [c.state, c.progress, c.error !== undefined])).toEqual([
        ['merged', 'merged', true],
        ['open', 'ready', true],
      ]);
      expect(s.progress).toMatchObject({ merged: 1, ready: 1 });
      const text = await cli(env, 'status', runDir);
      expect(text.stdout).toMatch(/change\.repo-a\s+merged\s/);
      expect(text.stdout).toContain('merged 1 · ready 1');
    }
  });
});
