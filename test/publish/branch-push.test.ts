// Where a push goes and what it carries: a remote URL holding credentials is refused with what to
// do; a forge's ssh remote is the same repository over https, `forge: git` keeps ssh, and an ssh
// remote of another host is refused for a forge; ./ paths resolve from the run's root; the token's Authorization header
// is only configured for a remote on the forge's own host (a remote the model redirected to
// another host gets none); secrets are cut out of error text. A branch where someone built on the
// commit orchestrate pushed (a reviewer's fixup) is left as it is when the change is the same: the
// pull request is still updated; a changed commit is still refused there. A repository made again
// since the run (its base commit gone) says so, with what to do, instead of git's unpack error; a
// rebase on a remote without the base branch names the branch instead of git's "couldn't find
// remote ref".
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pushTransport, resolveRemote } from '../../src/publish/branch-push.js';
import { pushAuthHeader, repositoryFromUrl, withoutSecrets } from '../../src/publish/forge.js';
import { readChangesets } from '../../src/run/changesets.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { TOKEN, git, gitForgeRecipe, project, recipe, runCampaign, forgeRepos } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

const auth = { host: 'github.com', header: pushAuthHeader('github', 'ghp_secret1234') };

describe('publishing remotes', () => {
  it('refuses credentials in the URL; ./ paths are local, from the root', async () => {
    const cred = await resolveRemote('/nowhere', 'https://me:ghp_x@github.com/acme/a.git', '/root', 'github');
    expect(cred).toMatchObject({ ok: false, error: expect.stringContaining('holds credentials') });
    expect(await resolveRemote('/nowhere', './remotes/a.git', '/root')).toEqual({
      ok: true,
      url: '/root/remotes/a.git',
      via: 'local',
      localPath: '/root/remotes/a.git',
    });
    expect(await resolveRemote('/nowhere', 'file:///srv/a.git', '/root')).toEqual({
      ok: true,
      url: 'file:///srv/a.git',
      via: 'local',
      localPath: '/srv/a.git',
    });
    expect(await resolveRemote('/nowhere', 'http://github.com/acme/a.git', '/root', 'github')).toMatchObject({
      ok: false,
      error: expect.stringContaining('http:// is not supported'),
    });
  });

  it("a forge's ssh remote is pushed over https to the same repository; forge: git keeps ssh", async () => {
    expect(await resolveRemote('/nowhere', 'git@github.com:acme/a.git', '/root', 'github')).toEqual({
      ok: true,
      url: 'https://github.com/acme/a.git',
      via: 'https',
    });
    expect(
      await resolveRemote(
        '/nowhere',
        'ssh://git@gitlab.example:2222/group/sub/a',
        '/root',
        'gitlab',
        'https://gitlab.example/api/v4',
      ),
    ).toEqual({ ok: true, url: 'https://gitlab.example/group/sub/a.git', via: 'https' });
    const other = await resolveRemote('/nowhere', 'git@evil.example:acme/a.git', '/root', 'github');
    expect(other).toMatchObject({
      ok: false,
      error: expect.stringMatching(/on evil\.example, not on github\.com.*forge: git/),
    });
    expect(await resolveRemote('/nowhere', 'git@host.example:acme/a.git', '/root', 'git')).toEqual({
      ok: true,
      url: 'git@host.example:acme/a.git',
      via: 'ssh',
    });
  });

  it("a remote's name, read from the repository, must lead to the forge's host", async () => {
    const repo = mkdtempSync(join(tmpdir(), 'orch-remote-name-'));
    try {
      execFileSync('git', ['init', '-q', repo]);
      execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', 'git@github.com:acme/a.git']);
      execFileSync('git', ['-C', repo, 'remote', 'add', 'moved', 'https://evil.example/acme/a.git']);
      // Without a record (a run from before remotes were recorded) the URL comes with a warning.
      expect(await resolveRemote(repo, 'origin', '/root', 'github')).toEqual({
        ok: true,
        url: 'https://github.com/acme/a.git',
        via: 'https',
        warning: expect.stringContaining('an agent of the run could have changed it'),
      });
      expect(await resolveRemote(repo, 'moved', '/root', 'github')).toMatchObject({
        ok: false,
        error: expect.stringMatching(
          /remote "moved" .* is https:\/\/evil\.example\/acme\/a\.git, not a repository on github\.com/,
        ),
      });
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it("sends the token's header only to the forge's host", () => {
    const own = pushTransport({ url: 'https://github.com/acme/a.git', via: 'https' }, auth);
    expect(own).toEqual({ kind: 'https', url: 'https://github.com/acme/a.git', header: auth.header });
    expect(pushTransport({ url: 'https://evil.example/acme/a.git', via: 'https' }, auth)).toEqual({
      kind: 'https',
      url: 'https://evil.example/acme/a.git',
    });
    expect(pushTransport({ url: '/srv/a.git', via: 'local', localPath: '/srv/a.git' }, auth)).toEqual({
      kind: 'local',
      path: '/srv/a.git',
    });
    expect(pushTransport({ url: 'git@github.com:acme/a.git', via: 'ssh' }, auth)).toEqual({ kind: 'ssh' });
  });

  it('reads owner/name from an https remote and cuts secrets out of messages', () => {
    expect(repositoryFromUrl('https://github.com/acme/a.git')).toBe('acme/a');
    expect(repositoryFromUrl('https://gitlab.example/group/sub/a')).toBe('group/sub/a');
    expect(withoutSecrets('failed with ghp_secret1234 in it', ['ghp_secret1234'])).toBe('failed with [redacted] in it');
  });
});

describe('a branch someone built on', () => {
  let gh: FakeGitHub | undefined;
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('is left as it is when the change is the same, and its pull request is updated; a new commit is refused', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    const write = (title: string, body: string) =>
      writeFileSync(
        join(dir, 'recipe.yaml'),
        recipe(dir, 'github', gh!.url, title)
          .replace(/\n {2}labels: .*\n {2}reviewers: .*/, '')
          .replace(/body: .*/, `body: "${body}"`),
      );
    write('Change ${{ repo.name }}', 'First body');
    const runDir = await runCampaign(dir);
    const cli = (...a: string[]) =>
      runCli([...a, '--run-dir', join(dir, 'runs')], {
        cwd: dir,
        env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
      });
    expect((await cli('publish', runDir, '--apply', '--only', 'change.repo-a')).code).toBe(0);
    const ours = git(bare('repo-a'), 'rev-parse', 'campaign/repo-a').trim();

    // A reviewer pushes a fixup on top of orchestrate's commit.
    const clone = mkdtempSync(join(tmpdir(), 'orch-fixup-'));
    git(clone, 'clone', '-q', '-b', 'campaign/repo-a', `file://${bare('repo-a')}`, 'w');
    writeFileSync(join(clone, 'w', 'fixup.txt'), 'reviewer\n');
    git(join(clone, 'w'), 'add', '-A');
    git(join(clone, 'w'), '-c', 'user.name=r', '-c', 'user.email=r@example.com', 'commit', '-qm', 'fixup');
    git(join(clone, 'w'), 'push', '-q', 'origin', 'campaign/repo-a');
    const theirs = git(join(clone, 'w'), 'rev-parse', 'HEAD').trim();
    rmSync(clone, { recursive: true, force: true });

    // Applying again (a new body: the commit, whose message is the title, is the same).
    write('Change ${{ repo.name }}', 'Second body');
    const again = await cli('publish', runDir, '--apply', '--only', 'change.repo-a', '--reload-recipe');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(
        `change\\.repo-a: updated\\s+\\S+/pull/1 \\(campaign/repo-a has commits someone added on top of orchestrate's, up to ${theirs.slice(0, 12)}: left as they are\\)`,
      ),
    );
    expect(gh.pulls[0]!.body).toBe('Second body');
    expect(git(bare('repo-a'), 'rev-parse', 'campaign/repo-a').trim()).toBe(theirs);
    expect(readChangesets(runDir)!.changesets[0]).toMatchObject({ pushedCommit: ours });
    expect(readChangesets(runDir)!.changesets[0]!.error).toBeUndefined();

    // A new title is a new commit: pushing it would drop the fixup, so it is refused.
    write('Retitled ${{ repo.name }}', 'Second body');
    const refused = await cli('publish', runDir, '--apply', '--only', 'change.repo-a', '--reload-recipe');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(
      /change\.repo-a: refused\s+refusing to push: campaign\/repo-a .* a commit orchestrate did not push/,
    );
    expect(git(bare('repo-a'), 'rev-parse', 'campaign/repo-a').trim()).toBe(theirs);
  });
});

describe('a repository made again since the run', () => {
  afterAll(() => cleanupTempDirs());

  it('names the missing base commit and how to redo the change', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`));
    const runDir = await runCampaign(dir);
    const base = readChangesets(runDir)!.changesets[0]!.baseCommit;
    // The repository is made again from its files (as a setup step that runs git init would).
    const repo = join(dir, 'repo-a');
    rmSync(join(repo, '.git'), { recursive: true, force: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'again');
    const r = await runCli(['publish', runDir, '--apply', '--run-dir', join(dir, 'runs')], { cwd: dir });
    expect(r.code).toBe(1);
    const id = runDir.split('/').pop();
    expect(r.stdout).toContain(
      `change.repo-a: failed  ${repo} no longer has ${base.slice(0, 12)}, the commit the change was made on (the repository was made again, or that history rewritten): fetch that commit into it again, or redo the change on its base branch as it is now (orchestrate publish ${id} --rebase change.repo-a)`,
    );
    expect(r.stdout).toMatch(/change\.repo-b: pushed/);
  });
});

describe('a rebase on a remote without the base branch', () => {
  afterAll(() => cleanupTempDirs());

  it('names the missing branch and what to do', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    const bare = join(dir, 'remotes', 'repo-a.git');
    rmSync(bare, { recursive: true, force: true });
    git(dir, 'init', '-q', '--bare', bare);
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`));
    const runDir = await runCampaign(dir);
    const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir });
    expect((await cli('publish', runDir, '--apply', '--only', 'change.repo-a')).code).toBe(0);
    const r = await cli('publish', runDir, '--rebase', 'change.repo-a');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `orchestrate: file://${bare} has no branch main, the base the change goes to: push main there, or set publish.base to the branch the changes go to\n`,
    );
    expect(r.stderr).not.toContain("couldn't find remote ref");
  });
});
