// A campaign published over real https, as to a GitHub Enterprise host: one fake server on
// 127.0.0.1 with a self-signed certificate answers both the REST API (Octokit on the wire) and
// git's smart HTTP (git's own git-http-backend, which takes a push only with the token in Basic
// auth). The CLI runs as its own process, as a user runs it. What a user relies on:
// - git verifies the server's certificate: a CA the user's git does not trust fails the push with
//   git's reason, and the CA they give git (GIT_SSL_CAINFO, or http.sslCAInfo in their global
//   config) is the one orchestrate's sandboxed git trusts too;
// - the token goes to the forge's host only: a remote on another host name gets none (the push
//   fails with a 401, nothing sent);
// - with both right, the branches arrive on the remote and the pull requests open;
// - a remote given as the forge's ssh address (git@host:owner/repo.git) is the same repository,
//   pushed over https with the token;
// - the token appears in no output and no file of the run folder.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChangesets } from '../../src/run/changesets.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import {
  REPOS,
  TOKEN,
  filesUnder,
  git,
  orchestrateProcess,
  project,
  recipe,
  runCampaign,
  remoteBranches,
  withoutReloadNotice,
} from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';
import { selfSignedCert } from '../helpers/self-signed-cert.js';

/** `orchestrate publish …` as its own process (TLS trust is read at process start). */
const orchestrate = orchestrateProcess;

// Limits of 120 s only turn a hang into a failure: a test starts the CLI as a process (the
// setup runs a campaign), which took over 30 s with a load average of 50.
describe('publishing over https', { timeout: 120_000 }, () => {
  let gh: FakeGitHub;
  let dir: string;
  let runDir: string;
  let certFile: string;
  const outputs: string[] = [];
  const publish = async (env: Record<string, string>, ...more: string[]) => {
    // Each test rewrites the recipe's remote: --reload-recipe takes it instead of the run's captured copy.
    const r = await orchestrate(['publish', runDir, '--apply', '--reload-recipe', ...more], {
      GITHUB_TOKEN: TOKEN,
      ...env,
    });
    outputs.push(r.out);
    return r;
  };
  /** The recipe with its pushes going to `host` (the API stays on 127.0.0.1). */
  const writeRecipe = (host: string) => {
    const spec = recipe(dir, 'github', gh.url, 'Change the greeting of ${{ repo.name }}')
      .replace(/remote: .*/, `remote: https://${host}/acme/\${{ repo.name }}.git`)
      .replace(/\n {2}labels: \[campaign\]\n {2}reviewers: \[octocat\]/, '');
    writeFileSync(join(dir, 'recipe.yaml'), spec);
  };
  const port = () => new URL(gh.url).port;

  beforeAll(async () => {
    dir = project('github', () => 'http://127.0.0.1:1').dir;
    const tls = selfSignedCert(dir);
    certFile = tls.certFile;
    // The smart HTTP root: acme/<repo>.git are the bare remotes the project made.
    mkdirSync(join(dir, 'forge'));
    symlinkSync(join(dir, 'remotes'), join(dir, 'forge', 'acme'));
    gh = await fakeGitHub(
      TOKEN,
      Object.fromEntries(REPOS.map((r) => [`acme/${r}`, join(dir, 'remotes', `${r}.git`)])),
      { tls, gitRoot: join(dir, 'forge') },
    );
    writeRecipe(`127.0.0.1:${port()}`);
    runDir = await runCampaign(dir);
  }, 120_000);
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('a remote on another host name gets no token: git is refused, nothing is pushed', async () => {
    writeRecipe(`localhost:${port()}`);
    const r = await publish({ NODE_EXTRA_CA_CERTS: certFile, GIT_SSL_CAINFO: certFile });
    expect(r.code).not.toBe(0);
    expect(gh.gitRequests.length).toBeGreaterThan(0);
    expect(gh.gitRequests.every((q) => !q.authorized)).toBe(true);
    expect(r.out).toMatch(/change\.repo-a: .*the token goes only to 127\.0\.0\.1:\d+, the forge's host/);
    for (const repo of REPOS) expect(remoteBranches(dir, repo)).toEqual(['refs/heads/main']);
    expect(gh.pulls).toEqual([]);
  });

  it("git checks the certificate: a CA git does not trust fails the push with git's reason", async () => {
    writeRecipe(`127.0.0.1:${port()}`);
    gh.gitRequests.length = 0;
    // Octokit trusts the CA (NODE_EXTRA_CA_CERTS), git does not: no request gets through the handshake.
    const r = await publish({ NODE_EXTRA_CA_CERTS: certFile });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/change\.repo-a: .*(SSL certificate problem|certificate verify failed|server certificate)/i);
    expect(gh.gitRequests).toEqual([]);
    for (const repo of REPOS) expect(remoteBranches(dir, repo)).toEqual(['refs/heads/main']);
  });

  it('with the CA git trusts, the branches are pushed over https and the pull requests opened', async () => {
    // The user's global git config names the CA (http.sslCAInfo), as for a company's own forge.
    const home = join(dir, 'home');
    mkdirSync(home);
    writeFileSync(join(home, '.gitconfig'), `[http]\n\tsslCAInfo = ${certFile}\n`);
    const r = await publish({ NODE_EXTRA_CA_CERTS: certFile, HOME: home });
    expect(withoutReloadNotice(r.out)).not.toContain('orchestrate:');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/change\.repo-a: opened\s+https:\/\/github\.example\/acme\/repo-a\/pull\/1/);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/campaign/repo-a', 'refs/heads/main']);
    expect(git(join(dir, 'remotes', 'repo-a.git'), 'show', 'campaign/repo-a:greet.txt')).toBe('goodbye from repo-a\n');
    expect(gh.gitRequests.some((q) => q.path.endsWith('/git-receive-pack'))).toBe(true);
    expect(gh.gitRequests.every((q) => q.authorized)).toBe(true);
    expect(gh.pulls.map((p) => [p.repo, p.state])).toEqual([
      ['acme/repo-a', 'open'],
      ['acme/repo-b', 'open'],
    ]);
    expect(readChangesets(runDir)?.changesets.map((c) => c.state)).toEqual(['published', 'published']);

    // GIT_SSL_CAINFO works as well, and applying again pushes nothing new (the same identity, none
    // configured, makes the same commit).
    const bare = join(dir, 'home2');
    mkdirSync(bare);
    const again = await publish({ NODE_EXTRA_CA_CERTS: certFile, GIT_SSL_CAINFO: certFile, HOME: bare });
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/change\.repo-a: unchanged/);
  });

  it("the forge's ssh address as the remote is pushed over https, with the token, to the same repository", async () => {
    const spec = recipe(dir, 'github', gh.url, 'Change the greeting of ${{ repo.name }}')
      .replace(/remote: .*/, 'remote: git@127.0.0.1:acme/${{ repo.name }}.git')
      .replace(/\n {2}labels: \[campaign\]\n {2}reviewers: \[octocat\]/, '');
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    for (const repo of ['repo-a', 'repo-b'])
      git(join(dir, 'remotes', `${repo}.git`), 'update-ref', '-d', `refs/heads/campaign/${repo}`);
    gh.gitRequests.length = 0;
    const r = await publish({ NODE_EXTRA_CA_CERTS: certFile, GIT_SSL_CAINFO: certFile });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/change\.repo-a: pushed/);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/campaign/repo-a', 'refs/heads/main']);
    expect(gh.gitRequests.some((q) => q.path === '/acme/repo-a.git/git-receive-pack' && q.authorized)).toBe(true);
  });

  it('the token is in no output and no file of the run folder', () => {
    expect(outputs.length).toBe(5);
    for (const out of outputs) expect(out).not.toContain(TOKEN);
    const b64 = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    for (const f of filesUnder(runDir)) {
      const text = readFileSync(f, 'utf8');
      expect(text, f).not.toContain(TOKEN);
      expect(text, f).not.toContain(b64);
    }
  });
});
