// #37 item 2, the last gap: with `remote: origin` (a remote's name), publishing read the URL from
// the workspace's .git/config at publish time, which the agent can rewrite during the run. Here a
// scripted agent runs `git remote set-url origin <another bare repository>` in repo-a and adds
// `remote.origin.pushurl` in repo-b; repo-c is left alone. `orchestrate publish <run> --apply`
// with `forge: git` must push each branch to the repository origin named before the agent ran,
// and nothing may reach the other ones. A credential in a remote's URL never reaches the run log.
// A later task in the same repository records what origin was before the first task's agent
// rewrote it. A run recorded before remotes were recorded still publishes, reading the
// repository with a warning that names the risk.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, gitInit, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { REPOS, git, gitForgeRecipe, project, remoteBranches, runCampaign } from '../publish/campaign-fixtures.js';

/** What each instance does: every repository changes; repo-a and repo-b also redirect origin. */
function script(dir: string): string {
  const change = (r: string, extra?: string) => `  - match: "Change ${r}"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
${extra ? `      - tools: [{ name: bash, args: { command: "${extra}" } }]\n` : ''}      - text: "${r}: greeting changed"
`;
  return `conversations:
${change('repo-a', `git remote set-url origin ${join(dir, 'elsewhere', 'repo-a.git')}`)}${change(
  'repo-b',
  `git config remote.origin.pushurl ${join(dir, 'elsewhere', 'repo-b.git')}`,
)}${change('repo-c')}`;
}

describe('publish pushes to the remote the repository had before the agent ran (#37)', { timeout: 180_000 }, () => {
  let dir: string;
  let runDir: string;

  beforeAll(async () => {
    dir = project('github', () => 'http://127.0.0.1:1').dir;
    for (const r of REPOS) {
      const repo = join(dir, r);
      git(repo, 'remote', 'add', 'origin', join(dir, 'remotes', `${r}.git`));
      // The other repository the agent points origin at: a copy of the same project.
      git(dir, 'clone', '-q', '--bare', repo, join(dir, 'elsewhere', `${r}.git`));
    }
    // A remote whose URL holds a credential: recorded without it.
    git(join(dir, 'repo-c'), 'remote', 'add', 'mirror', 'https://bot:s3cretTok3n@git.example.com/acme/repo-c.git');
    writeFileSync(join(dir, 'script.yaml'), script(dir));
    writeFileSync(
      join(dir, 'recipe.yaml'),
      gitForgeRecipe(dir, 'origin').replace('tools: [read, edit]', 'tools: [read, edit, bash]'),
    );
    runDir = await runCampaign(dir);
  });
  afterAll(() => cleanupTempDirs());

  it("the agent's rewrites took effect in the workspaces (the attack is real)", () => {
    expect(git(join(dir, 'repo-a'), 'config', '--get', 'remote.origin.url').trim()).toBe(
      join(dir, 'elsewhere', 'repo-a.git'),
    );
    expect(git(join(dir, 'repo-b'), 'config', '--get', 'remote.origin.pushurl').trim()).toBe(
      join(dir, 'elsewhere', 'repo-b.git'),
    );
  });

  it('records the remotes before the agent ran, without credentials', () => {
    const log = readFileSync(join(runDir, 'run.jsonl'), 'utf8');
    expect(log).not.toContain('s3cretTok3n');
    const starts = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; repoRoot?: string; remotes?: Record<string, string> })
      .filter((e) => e.type === 'instance_start');
    const of = (r: string) => starts.find((e) => e.repoRoot === r)?.remotes;
    expect(of('repo-a')).toEqual({ origin: join(dir, 'remotes', 'repo-a.git') });
    expect(of('repo-c')).toEqual({
      origin: join(dir, 'remotes', 'repo-c.git'),
      mirror: 'https://git.example.com/acme/repo-c.git',
    });
  });

  it('publish --apply pushes to the original origin and nothing reaches the other repositories', async () => {
    const r = await runCli(['publish', runDir, '--apply'], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(r.stderr + r.stdout).not.toMatch(/warning/);
    expect(r.code).toBe(0);
    for (const repo of REPOS) {
      expect(remoteBranches(dir, repo)).toEqual([`refs/heads/campaign/${repo}`, 'refs/heads/main']);
      expect(
        git(join(dir, 'elsewhere', `${repo}.git`), 'for-each-ref', '--format=%(refname)', 'refs/heads/').trim(),
      ).toBe('refs/heads/main');
    }
    expect(git(join(dir, 'remotes', 'repo-a.git'), 'show', 'campaign/repo-a:greet.txt')).toBe('goodbye from repo-a\n');
  });
});

describe('a run recorded before remotes were recorded (#37)', { timeout: 180_000 }, () => {
  it("reads the repository's remote as it is now, and says so with the risk", async () => {
    const dir = project('github', () => 'http://127.0.0.1:1').dir;
    for (const r of REPOS) git(join(dir, r), 'remote', 'add', 'origin', join(dir, 'remotes', `${r}.git`));
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, 'origin'));
    const runDir = await runCampaign(dir);
    // The log as an older orchestrate wrote it: no remotes on instance_start.
    const log = join(runDir, 'run.jsonl');
    const old = readFileSync(log, 'utf8').replace(/,"remotes":\{[^}]*\}/g, '');
    expect(old).not.toContain('"remotes"');
    writeFileSync(log, old);
    const r = await runCli(['publish', runDir, '--apply'], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(r.code).toBe(0);
    expect(r.stderr + r.stdout).toMatch(
      /change\.repo-a: warning: this run was recorded before orchestrate kept each repository's remotes, so remote "origin" of \S+repo-a is read from the repository as it is now .*an agent of the run could have changed it/,
    );
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/campaign/repo-a', 'refs/heads/main']);
    // status reads the same remote to tell whether the branch was merged, and says the same.
    const s = await runCli(['status', runDir], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(s.code).toBe(0);
    expect(s.stderr).toMatch(
      /orchestrate: change\.repo-a: warning: this run was recorded before .* could have changed it/,
    );
  });
});

describe('a later task in the same repository (#37)', { timeout: 180_000 }, () => {
  it('records the remotes read before the first agent, not the one the first agent set', async () => {
    const dir = tempProject({
      'repo/a.txt': 'a\n',
      'repo/b.txt': 'b\n',
      'recipe.yaml': `name: two
provider: scripted
script: script.yaml
agents:
  editor: { tools: [read, edit, bash] }
publish:
  forge: git
  remote: origin
  branch: change/\${{ task }}
  title: "Change \${{ task }}"
  body: "\${{ summary }}"
tasks:
  - id: first
    agent: editor
    cwd: repo
    prompt: "First"
  - id: second
    agent: editor
    cwd: repo
    needs: [first]
    prompt: "Second"
`,
    });
    const repo = join(dir, 'repo');
    gitInit(repo);
    git(repo, 'branch', '-M', 'main');
    git(dir, 'clone', '-q', '--bare', repo, join(dir, 'origin.git'));
    git(dir, 'clone', '-q', '--bare', repo, join(dir, 'elsewhere.git'));
    git(repo, 'remote', 'add', 'origin', join(dir, 'origin.git'));
    writeFileSync(
      join(dir, 'script.yaml'),
      `conversations:
  - match: "First"
    turns:
      - tools: [{ name: edit, args: { path: a.txt, edits: [{ oldText: "a", newText: "A" }] } }]
      - tools: [{ name: bash, args: { command: "git remote set-url origin ${join(dir, 'elsewhere.git')}" } }]
      - text: "first done"
  - match: "Second"
    turns:
      - tools: [{ name: edit, args: { path: b.txt, edits: [{ oldText: "b", newText: "B" }] } }]
      - text: "second done"
`,
    );
    const runDir = await runCampaign(dir);
    const r = await runCli(['publish', runDir, '--apply'], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(r.stderr + r.stdout).not.toMatch(/warning/);
    expect(r.code).toBe(0);
    const heads = (bare: string) =>
      git(join(dir, bare), 'for-each-ref', '--format=%(refname)', 'refs/heads/').split('\n').filter(Boolean);
    expect(heads('origin.git')).toEqual(['refs/heads/change/first', 'refs/heads/change/second', 'refs/heads/main']);
    expect(heads('elsewhere.git')).toEqual(['refs/heads/main']);
  });
});
