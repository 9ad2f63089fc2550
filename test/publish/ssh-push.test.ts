// `forge: git` over ssh, against a real sshd on 127.0.0.1 started by the test (Debian's
// openssh-server) with a host key and a user key the test makes: the branches of a campaign are
// pushed to bare repositories over ssh://, with the ssh the user's environment names
// (GIT_SSH_COMMAND: the key, the known_hosts file; or their ssh agent, SSH_AUTH_SOCK) and nothing
// from the repository: a
// core.sshCommand the model wrote into its repository is never run. An unknown host key fails
// with what to do. Skipped, saying why, where sshd or ssh-keygen is missing.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChangesets } from '../../src/run/changesets.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { git, gitForgeRecipe, project, remoteBranches, runCampaign } from './campaign-fixtures.js';

const SSHD = '/usr/sbin/sshd';
const missing = [SSHD, '/usr/bin/ssh-keygen', '/usr/bin/ssh'].filter((p) => !existsSync(p));
if (missing.length)
  console.warn(`SKIPPED ssh-push.test.ts: ${missing.join(', ')} not installed (apt-get install openssh-server)`);

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Starts sshd -D -e on `port` and resolves once it says it listens (its stderr), or rejects with what it said. */
function startSshd(config: string, port: number): Promise<ChildProcess> {
  // As root, sshd needs its privilege separation folder (Debian's service makes it at boot).
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const child = spawn(SSHD, ['-D', '-e', '-p', String(port), '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let said = '';
    child.stderr!.on('data', (c: Buffer) => {
      said += c.toString();
      if (/Server listening on 127\.0\.0\.1 port/.test(said)) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`sshd exited (${code}): ${said}`)));
  });
}

describe.skipIf(missing.length > 0)('forge: git over ssh (a real sshd)', () => {
  let dir: string;
  let runDir: string;
  let sshd: ChildProcess | undefined;
  let port: number;
  let sshCommand: string;
  const marker = () => join(dir, 'repo-sshcommand-ran');

  beforeAll(async () => {
    port = await freePort();
    dir = project('github', () => 'http://127.0.0.1:1').dir;
    const remote = `ssh://${userInfo().username}@127.0.0.1:${port}${dir}/remotes/\${{ repo.name }}.git`;
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, remote));
    const keys = join(dir, 'ssh');
    mkdirSync(keys, { mode: 0o700 });
    for (const k of ['host', 'user'])
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', k, '-f', join(keys, k)]);
    writeFileSync(join(keys, 'authorized_keys'), readFileSync(join(keys, 'user.pub')));
    const config = join(keys, 'sshd_config');
    writeFileSync(
      config,
      [
        'ListenAddress 127.0.0.1',
        `HostKey ${join(keys, 'host')}`,
        `AuthorizedKeysFile ${join(keys, 'authorized_keys')}`,
        'StrictModes no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'PermitRootLogin prohibit-password',
        'UsePAM no',
        `PidFile ${join(keys, 'sshd.pid')}`,
        '',
      ].join('\n'),
    );
    writeFileSync(join(keys, 'known_hosts'), `[127.0.0.1]:${port} ${readFileSync(join(keys, 'host.pub'), 'utf8')}`);
    sshCommand = `ssh -F /dev/null -i ${join(keys, 'user')} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${join(keys, 'known_hosts')}`;
    sshd = await startSshd(config, port);
    runDir = await runCampaign(dir);
    // What a model can write into its repository: an ssh command of its own.
    for (const r of ['repo-a', 'repo-b']) git(join(dir, r), 'config', 'core.sshCommand', `touch ${marker()}; ssh`);
  });
  let agent: ChildProcess | undefined;
  afterAll(() => {
    agent?.kill();
    sshd?.kill();
    cleanupTempDirs();
  });

  const publish = (env: Record<string, string>) =>
    runCli(['publish', runDir, '--apply'], { cwd: dir, env: { PATH: process.env.PATH, ...env } });

  it('an unknown host key fails with what to do, and pushes nothing', async () => {
    const r = await publish({
      GIT_SSH_COMMAND: sshCommand.replace(/UserKnownHostsFile=\S+/, `UserKnownHostsFile=${join(dir, 'ssh', 'none')}`),
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/host key.*\(the host is not in your known_hosts/i);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/main']);
    expect(existsSync(marker())).toBe(false);
  });

  it("pushes the branches over ssh with the user's GIT_SSH_COMMAND, never the repository's core.sshCommand", async () => {
    const r = await publish({ GIT_SSH_COMMAND: sshCommand });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/change\.repo-a: pushed/);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/campaign/repo-a', 'refs/heads/main']);
    expect(git(join(dir, 'remotes', 'repo-a.git'), 'show', 'campaign/repo-a:greet.txt')).toBe('goodbye from repo-a\n');
    expect(readChangesets(runDir)?.changesets.map((c) => c.state)).toEqual(['published', 'published']);
    expect(existsSync(marker())).toBe(false);
  });

  it("with the user's ssh agent (SSH_AUTH_SOCK) and no key named, the push goes through the agent", async () => {
    const sock = join(dir, 'ssh', 'agent.sock');
    agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: ['ignore', 'pipe', 'ignore'] });
    // ssh-agent -D prints its variables once the socket listens.
    await new Promise<void>((r) => agent!.stdout!.once('data', () => r()));
    execFileSync('ssh-add', ['-q', join(dir, 'ssh', 'user')], {
      env: { PATH: process.env.PATH, SSH_AUTH_SOCK: sock },
      stdio: 'ignore',
    });
    git(join(dir, 'remotes', 'repo-b.git'), 'update-ref', '-d', 'refs/heads/campaign/repo-b');
    const viaAgent = sshCommand.replace(/-i \S+ -o IdentitiesOnly=yes /, '');
    expect(viaAgent).not.toContain(' -i ');
    const r = await publish({ GIT_SSH_COMMAND: viaAgent, SSH_AUTH_SOCK: sock });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/change\.repo-b: pushed/);
    expect(remoteBranches(dir, 'repo-b')).toEqual(['refs/heads/campaign/repo-b', 'refs/heads/main']);
  });

  it('status marks a changeset merged once its branch is reachable from main on the remote (fetched over ssh)', async () => {
    const env = { PATH: process.env.PATH, GIT_SSH_COMMAND: sshCommand };
    const before = await runCli(['status', runDir, '--json'], { cwd: dir, env });
    expect(before.code).toBe(0);
    const states = (out: string) =>
      (JSON.parse(out) as { changesets: { key: string; state: string }[] }).changesets.map((c) => [c.key, c.state]);
    expect(states(before.stdout)).toEqual([
      ['change.repo-a', 'pushed'],
      ['change.repo-b', 'pushed'],
    ]);
    // Someone merges campaign/repo-a into main on the remote (a merge commit).
    const bare = join(dir, 'remotes', 'repo-a.git');
    const tree = git(bare, 'rev-parse', 'campaign/repo-a^{tree}').trim();
    const merge = git(
      bare,
      '-c',
      'user.name=m',
      '-c',
      'user.email=m@example.com',
      'commit-tree',
      tree,
      '-p',
      'main',
      '-p',
      'campaign/repo-a',
      '-m',
      'Merge campaign/repo-a',
    ).trim();
    git(bare, 'update-ref', 'refs/heads/main', merge);
    const after = await runCli(['status', runDir, '--json'], { cwd: dir, env });
    expect(after.code).toBe(0);
    expect(states(after.stdout)).toEqual([
      ['change.repo-a', 'merged'],
      ['change.repo-b', 'pushed'],
    ]);
    expect((JSON.parse(after.stdout) as { merged: number }).merged).toBe(1);
    expect(existsSync(marker())).toBe(false);
  });
});
