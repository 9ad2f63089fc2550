// #37: the repository is the model's to configure, and the git that pushes holds the forge token.
// An agent that ran `git config http.proxy http://127.0.0.1:P && git config http.sslVerify false`
// in its repository got `Authorization: Basic x-access-token:<token>` sent through its proxy by
// `orchestrate publish --apply` (during ls-remote, before any push). The same for
// url.<x>.insteadOf and include.path, or any network key a future git adds: the product's network
// git must read no repository config at all. Here a TLS fake GitHub (REST API and git's smart
// HTTP on one host, token in Basic auth) takes the pushes, and a loopback listener stands in for
// the model's proxy and records every connection it gets: it must get none, while publishing over
// https to the forge still works.
import { once } from 'node:events';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { type Server, type Socket, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REPOS,
  TOKEN,
  git,
  orchestrateProcess,
  project,
  recipe,
  remoteBranches,
  runCampaign,
} from '../publish/campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from '../publish/fake-forges.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { selfSignedCert } from '../helpers/self-signed-cert.js';

/** A listener on 127.0.0.1 that keeps the first bytes of every connection and closes it. */
async function recordingListener(): Promise<{ server: Server; url: string; port: number; got: string[] }> {
  const got: string[] = [];
  const server = createServer((socket: Socket) => {
    socket.once('data', (chunk: Buffer) => got.push(chunk.toString('latin1')));
    socket.on('error', () => {});
    // Answers nothing a client could use, so a git that came here fails instead of hanging.
    socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
    got.push('(connection)');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${port}`, port, got };
}

// Limits of 120 s only turn a hang into a failure: a test starts the CLI as a process (the
// setup runs a campaign), which took over 30 s with a load average of 50.
describe("the product's network git reads no repository config (#37)", { timeout: 120_000 }, () => {
  let gh: FakeGitHub;
  let proxy: Awaited<ReturnType<typeof recordingListener>>;
  let dir: string;
  let runDir: string;
  let certFile: string;
  const forgeBase = () => `https://127.0.0.1:${new URL(gh.url).port}/`;
  const publish = () =>
    orchestrateProcess(['publish', runDir, '--apply'], {
      GITHUB_TOKEN: TOKEN,
      NODE_EXTRA_CA_CERTS: certFile,
      GIT_SSL_CAINFO: certFile,
    });
  /** What the model can do in its repository: `git config` in repo-a and repo-b. */
  const modelConfig = (...args: string[]) => {
    for (const r of ['repo-a', 'repo-b']) git(join(dir, r), 'config', ...args);
  };

  beforeAll(async () => {
    dir = project('github', () => 'http://127.0.0.1:1').dir;
    const tls = selfSignedCert(dir);
    certFile = tls.certFile;
    mkdirSync(join(dir, 'forge'));
    symlinkSync(join(dir, 'remotes'), join(dir, 'forge', 'acme'));
    gh = await fakeGitHub(
      TOKEN,
      Object.fromEntries(REPOS.map((r) => [`acme/${r}`, join(dir, 'remotes', `${r}.git`)])),
      { tls, gitRoot: join(dir, 'forge') },
    );
    proxy = await recordingListener();
    const spec = recipe(dir, 'github', gh.url, 'Change the greeting of ${{ repo.name }}')
      .replace(/remote: .*/, `remote: ${forgeBase()}acme/\${{ repo.name }}.git`)
      .replace(/\n {2}labels: \[campaign\]\n {2}reviewers: \[octocat\]/, '');
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    runDir = await runCampaign(dir);
  }, 120_000);
  afterAll(async () => {
    await gh?.close();
    proxy?.server.close();
    cleanupTempDirs();
  });

  it('http.proxy and http.sslVerify=false in the repository: nothing reaches the proxy, the push goes to the forge', async () => {
    modelConfig('http.proxy', proxy.url);
    modelConfig('http.sslVerify', 'false');
    modelConfig(`http.${forgeBase()}.proxy`, proxy.url);
    const r = await publish();
    expect(proxy.got).toEqual([]);
    expect(r.out).toMatch(/change\.repo-a: opened/);
    expect(r.code).toBe(0);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/campaign/repo-a', 'refs/heads/main']);
    expect(gh.gitRequests.some((q) => q.path.endsWith('/git-receive-pack') && q.authorized)).toBe(true);
  });

  it("url.<proxy>.insteadOf the forge: the remote stays the recipe's, nothing reaches the other address", async () => {
    modelConfig('--unset-all', 'http.proxy');
    modelConfig(`url.https://127.0.0.1:${proxy.port}/.insteadOf`, forgeBase());
    modelConfig(`url.https://127.0.0.1:${proxy.port}/.pushInsteadOf`, forgeBase());
    gh.gitRequests.length = 0;
    const r = await publish();
    expect(proxy.got).toEqual([]);
    expect(r.out).toMatch(/change\.repo-a: unchanged/);
    expect(r.code).toBe(0);
    // The forge was asked (ls-remote, with the token) and said the branch is already there.
    expect(gh.gitRequests.length).toBeGreaterThan(0);
    expect(gh.gitRequests.every((q) => q.authorized)).toBe(true);
  });

  it('include.path naming a file of proxy settings: nothing reaches the proxy', async () => {
    const evil = join(dir, 'evil.gitconfig');
    writeFileSync(
      evil,
      `[http]\n\tproxy = ${proxy.url}\n\tsslVerify = false\n[http "${forgeBase()}"]\n\tproxy = ${proxy.url}\n`,
    );
    modelConfig('include.path', evil);
    // The branch deleted on the forge meanwhile: this apply pushes it again, through the same config.
    git(join(dir, 'remotes', 'repo-a.git'), 'update-ref', '-d', 'refs/heads/campaign/repo-a');
    gh.gitRequests.length = 0;
    const r = await publish();
    expect(proxy.got).toEqual([]);
    expect(r.out).toMatch(/change\.repo-a: pushed/);
    expect(r.code).toBe(0);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/campaign/repo-a', 'refs/heads/main']);
    expect(gh.gitRequests.some((q) => q.path.endsWith('/git-receive-pack') && q.authorized)).toBe(true);
  });
});
