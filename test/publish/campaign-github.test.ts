// A campaign end to end, offline: a recipe with a publish: block runs over three git
// repositories (bare file:// remotes), two of which the scripted agent changes. The run writes
// changesets.json and pushes nothing; `orchestrate publish --apply` pushes two branches and opens
// two draft pull requests on a strict fake GitHub API (the real Octokit client on the wire);
// applying again makes no state-changing request; an edited title template is named and left
// unused (the run trusts its recipe as of its start) until `--reload-recipe`, which updates the
// pull requests in place; `status` reads merged / failing checks and the burndown; a branch someone
// else pushed to is refused; --close-empty closes a pull request whose change became empty; and
// the token appears in no file of the run folder and no output.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { runPublishing } from '../../src/publish/run-publishing.js';
import { readChangesets } from '../../src/run/changesets.js';
import { type CliRun, runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { REPOS, TOKEN, filesUnder, git, project, recipe, remoteBranches, forgeRepos } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

describe('campaign on GitHub: publish, apply, track', () => {
  let gh: FakeGitHub;
  let dir: string;
  let runDir: string;
  const outputs: CliRun[] = [];
  const env = () => ({ PATH: process.env.PATH, GITHUB_TOKEN: TOKEN });
  const cli = async (...argv: string[]) => {
    const r = await runCli([...argv, '--run-dir', join(dir, 'runs')], { cwd: dir, env: env() });
    outputs.push(r);
    return r;
  };

  beforeAll(async () => {
    const made = project('github', () => 'http://127.0.0.1:1');
    dir = made.dir;
    // The fake maps acme/<repo> to the bare remote the branches are pushed to.
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    writeFileSync(join(dir, 'recipe.yaml'), recipe(dir, 'github', gh.url, 'Change the greeting of ${{ repo.name }}'));
  });
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('the run writes changesets.json for the two changed repositories and touches no remote', async () => {
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { ...runPublishing(), runsDir: join(dir, 'runs') },
    );
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    runDir = r.outcome.dir;
    const file = readChangesets(runDir)!;
    expect(file.changesets.map((c) => [c.repo, c.branch, c.state])).toEqual([
      ['repo-a', 'campaign/repo-a', 'unpublished'],
      ['repo-b', 'campaign/repo-b', 'unpublished'],
    ]);
    const a = file.changesets[0]!;
    expect(a.title).toBe('Change the greeting of repo-a');
    expect(a.body).toMatch(/^## Goal\nChange repo-a\n\n## Progress\n### Done\n- \[x\] edit greet\.txt\n/);
    expect(a.diffstat).toEqual({ files: 1, insertions: 1, deletions: 1 });
    for (const repo of REPOS) expect(remoteBranches(dir, repo)).toEqual(['refs/heads/main']);
    expect(gh.writes).toEqual([]);
  });

  it('publish <run> prints the preview and still pushes nothing', async () => {
    const r = await cli('publish', runDir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('change.repo-a');
    expect(r.stdout).toContain('title    Change the greeting of repo-b');
    expect(r.stdout).toContain('branch   campaign/repo-a -> main on github acme/repo-a (draft)');
    expect(r.stdout).toContain('Nothing was pushed.');
    for (const repo of REPOS) expect(remoteBranches(dir, repo)).toEqual(['refs/heads/main']);
    expect(gh.writes).toEqual([]);
  });

  it('--apply pushes two branches and opens two draft pull requests, none for the unchanged repository', async () => {
    const r = await cli('publish', runDir, '--apply');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/change\.repo-a: opened\s+https:\/\/github\.example\/acme\/repo-a\/pull\/1/);
    expect(gh.pulls.map((p) => [p.repo, p.head, p.base, p.draft, p.labels, p.reviewers])).toEqual([
      ['acme/repo-a', 'campaign/repo-a', 'main', true, ['campaign'], ['octocat']],
      ['acme/repo-b', 'campaign/repo-b', 'main', true, ['campaign'], ['octocat']],
    ]);
    expect(remoteBranches(dir, 'repo-c')).toEqual(['refs/heads/main']);
    // The pushed commit is exactly the instance's patch on the start commit.
    const bareA = join(dir, 'remotes', 'repo-a.git');
    expect(git(bareA, 'show', 'campaign/repo-a:greet.txt')).toBe('goodbye from repo-a\n');
    expect(git(bareA, 'rev-parse', 'campaign/repo-a^')).toBe(git(bareA, 'rev-parse', 'main'));
    expect(git(bareA, 'log', '-1', '--format=%s', 'campaign/repo-a').trim()).toBe('Change the greeting of repo-a');
    const file = readChangesets(runDir)!;
    expect(file.changesets.map((c) => [c.state, c.pr?.number])).toEqual([
      ['published', 1],
      ['published', 1],
    ]);
    expect(gh.writes.filter((w) => w.startsWith('POST') && w.endsWith('/pulls'))).toHaveLength(2);
  });

  it('applying again makes no request that changes anything', async () => {
    const before = gh.writes.length;
    const headA = git(join(dir, 'remotes', 'repo-a.git'), 'rev-parse', 'campaign/repo-a');
    const r = await cli('publish', runDir, '--apply');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/change\.repo-a: unchanged/);
    expect(gh.writes.length).toBe(before);
    expect(git(join(dir, 'remotes', 'repo-a.git'), 'rev-parse', 'campaign/repo-a')).toBe(headA);
  });

  it('an edited title template is named, and with --reload-recipe updates both pull requests in place (no second pull request)', async () => {
    writeFileSync(join(dir, 'recipe.yaml'), recipe(dir, 'github', gh.url, 'Greeting of ${{ repo.name }} changed'));
    const before = gh.writes.length;
    const kept = await cli('publish', runDir, '--apply');
    expect(kept.code).toBe(0);
    expect(kept.stderr).toMatch(/recipe\.yaml: modified\n(.*\n)*.*\+.*Greeting of \$\{\{ repo\.name \}\} changed/);
    expect(kept.stderr).toContain('--reload-recipe');
    expect(gh.writes.length).toBe(before);
    const r = await cli('publish', runDir, '--apply', '--reload-recipe');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/change\.repo-b: updated/);
    expect(gh.pulls).toHaveLength(2);
    expect(gh.pulls.map((p) => p.title)).toEqual(['Greeting of repo-a changed', 'Greeting of repo-b changed']);
    expect(gh.writes.slice(before)).toEqual(['PATCH /repos/acme/repo-a/pulls/1', 'PATCH /repos/acme/repo-b/pulls/1']);
  });

  it('status shows one merged and one with failing checks; the burndown counts one merged', async () => {
    gh.merge('acme/repo-a', 1);
    const b = gh.pulls.find((p) => p.repo === 'acme/repo-b')!;
    gh.setChecks('acme/repo-b', b.headSha, 'failure');
    const j = await cli('status', runDir, '--json');
    expect(j.code).toBe(0);
    const status = JSON.parse(j.stdout) as {
      changesets: { key: string; state: string; checks: string; url: string; review: string; mergeable: string }[];
      merged: number;
      total: number;
      burndown: { merged: number }[];
    };
    expect(status.changesets.map((c) => [c.key, c.state, c.checks])).toEqual([
      ['change.repo-a', 'merged', 'none'],
      ['change.repo-b', 'draft', 'failing'],
    ]);
    expect(status.changesets[1]!.review).toBe('review_required');
    expect(status.changesets[1]!.mergeable).toBe('mergeable');
    expect(status.merged).toBe(1);
    expect(status.burndown.at(-1)!.merged).toBe(1);
    const t = await cli('status', runDir);
    expect(t.stdout).toMatch(/change\.repo-b\s+draft\s+failing/);
    expect(t.stdout).toContain('burndown: 1/2 merged');
    // report.html and show draw the changesets table and the burndown from the recorded observations.
    const report = await cli('report', runDir);
    expect(report.code).toBe(0);
    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('Changesets <span class="muted">(1 of 2 merged)</span>');
    expect(html).toContain('aria-label="merged pull requests over time: 1 of 2"');
    const show = await cli('show', runDir);
    expect(show.stdout).toMatch(/change\.repo-a\s+merged/);
    expect(show.stdout).toContain('burndown: 1/2 merged');
  });

  it("a branch holding someone else's commit is refused, and their commit stays", async () => {
    const clone = mkdtempSync(join(tmpdir(), 'orch-someone-'));
    git(clone, 'clone', '-q', '-b', 'campaign/repo-b', `file://${join(dir, 'remotes', 'repo-b.git')}`, 'w');
    writeFileSync(join(clone, 'w', 'extra.txt'), 'mine\n');
    git(join(clone, 'w'), 'add', '-A');
    git(join(clone, 'w'), '-c', 'user.name=x', '-c', 'user.email=x@example.com', 'commit', '-qm', 'theirs');
    git(join(clone, 'w'), 'push', '-q', 'origin', 'campaign/repo-b');
    const theirs = git(join(clone, 'w'), 'rev-parse', 'HEAD').trim();
    // A new title makes the branch worth pushing again (the commit message follows the title);
    // with the same commit, their commit on top would be left as it is (branch-push.test.ts).
    writeFileSync(
      join(dir, 'recipe.yaml'),
      recipe(dir, 'github', gh.url, 'Greeting of ${{ repo.name }} changed again'),
    );
    const r = await cli('publish', runDir, '--apply', '--only', 'change.repo-b', '--reload-recipe');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /change\.repo-b: refused\s+refusing to push: campaign\/repo-b .* a commit orchestrate did not push/,
    );
    expect(git(join(dir, 'remotes', 'repo-b.git'), 'rev-parse', 'campaign/repo-b').trim()).toBe(theirs);
    expect(readChangesets(runDir)!.changesets[1]!.error).toMatch(/refusing to push/);
  });

  it('--only with a key that selects no single changeset is a usage error that lists the changesets (exit 2)', async () => {
    const writes = gh.writes.length;
    for (const [key, said] of [
      ['change.nope', 'orchestrate: no changeset "change.nope"'],
      ['change.repo', 'orchestrate: "change.repo" matches change.repo-a, change.repo-b'],
    ] as const) {
      const r = await cli('publish', runDir, '--apply', '--only', key);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${said}\n  changesets: change.repo-a, change.repo-b\n`);
    }
    expect(gh.writes.length).toBe(writes);
  });

  it('--close-empty closes the pull request of a change that became empty', async () => {
    const c = readChangesets(runDir)!.changesets[1]!;
    writeFileSync(join(runDir, c.patchFile), '');
    const without = await cli('publish', runDir, '--apply', '--only', 'change.repo-b');
    expect(without.stdout).toMatch(/change\.repo-b: empty .*--close-empty closes it/);
    expect(gh.pulls[1]!.state).toBe('open');
    const r = await cli('publish', runDir, '--apply', '--only', 'change.repo-b', '--close-empty');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/change\.repo-b: closed/);
    expect(gh.pulls[1]!.state).toBe('closed');
    expect(readChangesets(runDir)!.changesets[1]!.state).toBe('closed');
  });

  it('the token appears in no file of the run folder and in no output', () => {
    for (const f of filesUnder(runDir)) expect(readFileSync(f).includes(TOKEN), f).toBe(false);
    for (const o of outputs) expect(o.stdout + o.stderr).not.toContain(TOKEN);
    expect(outputs.length).toBeGreaterThan(5);
  });

  it('without a token --apply says how to give one and publishes nothing', async () => {
    const before = gh.writes.length;
    const r = await runCli(['publish', runDir, '--apply', '--only', 'change.repo-a', '--run-dir', join(dir, 'runs')], {
      cwd: dir,
      env: { PATH: `/nonexistent:${process.env.PATH ?? ''}`, HOME: dir },
    });
    // gh may be installed and logged in on a developer's machine: only assert when it is not.
    if (r.code !== 0) expect(r.stdout).toMatch(/no GitHub token: set GITHUB_TOKEN/);
    if (r.code !== 0) expect(gh.writes.length).toBe(before);
  });
});
