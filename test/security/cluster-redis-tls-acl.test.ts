// Redis with TLS and an ACL user: a real redis-server on 127.0.0.1 with a self-signed certificate
// made here with openssl, the default user switched off and a user `orch` limited to the
// project's keys. A small distributed recipe runs through it with the password from the
// environment and the CA from a flag; neither the Redis password nor the cluster secret is on any
// command line. Without the CA the connection is refused with the fix in the message.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAccessOf } from '../../src/cli/redis-options.js';
import { checkRedis, connectRedis, type RedisEndpoint } from '../../src/cluster/redis-connection.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { redisAvailable, skipWithoutRedis } from '../helpers/redis-server.js';
import { selfSignedCert } from '../helpers/self-signed-cert.js';
import {
  removeWorkdirs,
  runDistributed,
  SECRET,
  SECRET_ENV,
  startCliWorker,
  type CliWorker,
} from './cluster-fixtures.js';

/** Whether this redis-server was built with TLS (linked against OpenSSL). */
const tlsBuilt =
  redisAvailable() &&
  /libssl/.test(
    spawnSync('sh', ['-c', 'ldd "$(command -v redis-server)" 2>/dev/null'], { encoding: 'utf8' }).stdout ?? '',
  );
if (redisAvailable() && !tlsBuilt)
  process.stderr.write('\n!!!!! SKIPPED: Redis TLS: this redis-server is built without TLS !!!!!\n\n');
const skip = skipWithoutRedis('Redis TLS and ACL');
const PASSWORD = 'acl-user-password-3d9f1b';
let dir = '';
let server: ChildProcess | undefined;
let port = 0;
let worker: CliWorker | undefined;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

beforeAll(async () => {
  if (skip || !tlsBuilt) return;
  dir = mkdtempSync(join(tmpdir(), 'orch-redis-tls-'));
  selfSignedCert(dir);
  port = await freePort();
  server = spawn(
    'redis-server',
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      join(dir, 'tls-cert.pem'),
      '--tls-key-file',
      join(dir, 'tls-key.pem'),
      '--tls-ca-cert-file',
      join(dir, 'tls-cert.pem'),
      '--tls-auth-clients',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  process.on('exit', () => server?.kill('SIGKILL'));
  const admin: RedisEndpoint = {
    url: `rediss://127.0.0.1:${port}`,
    tls: { ca: readFileSync(join(dir, 'tls-cert.pem')) },
  };
  // Until it answers over TLS (or has exited: then the ACL calls below fail and say so).
  for (let i = 0; i < 300 && server.exitCode === null; i++) {
    if ((await checkRedis(admin, 2_000)).ok) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  const c = connectRedis(admin, { name: 'admin' });
  try {
    await c.call('ACL', 'SETUSER', 'orch', 'on', `>${PASSWORD}`, '~orchestrate:*', '&*', '+@all');
    await c.call('ACL', 'SETUSER', 'default', 'off');
  } finally {
    c.disconnect();
  }
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  server?.kill('SIGTERM');
  removeWorkdirs();
  cleanupTempDirs();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip || !tlsBuilt)('a distributed run through Redis with TLS and an ACL user', () => {
  it('works with the CA from a flag and the password from the environment; neither secret is on a command line', async () => {
    const url = `rediss://127.0.0.1:${port}`;
    const access = { ...SECRET_ENV, ORCHESTRATE_REDIS_USER: 'orch', ORCHESTRATE_REDIS_PASSWORD: PASSWORD };
    worker = await startCliWorker(url, 'tls-box', ['--redis-tls-ca', join(dir, 'tls-cert.pem')], access);
    const cmdline = readFileSync(`/proc/${worker.child.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('--redis-tls-ca');
    expect(cmdline).not.toContain(PASSWORD);
    expect(cmdline).not.toContain(SECRET);
    const project = tempProject({
      'recipe.yaml': `name: tls
provider: scripted
script: script.yaml
agents:
  writer: { tools: [write] }
tasks:
  - id: note
    agent: writer
    prompt: "Write the note"
`,
      'script.yaml': `conversations:
  - match: "Write the note"
    turns:
      - tools: [{ name: write, args: { path: note.txt, content: "over tls\\n" } }]
      - text: "Written."
`,
    });
    const { outcome } = await runDistributed(
      url,
      project,
      { ...process.env, ...access },
      { 'redis-tls-ca': join(dir, 'tls-cert.pem') },
    );
    expect(outcome.status).toBe('succeeded');
    expect(readFileSync(join(project, 'note.txt'), 'utf8')).toBe('over tls\n');
  }, 120_000);

  it('a password given inside --redis works, is warned about, and is masked from ps once the worker started', async () => {
    const inUrl = await startCliWorker(
      `rediss://orch:${PASSWORD}@127.0.0.1:${port}`,
      'url-pw-box',
      ['--redis-tls-ca', join(dir, 'tls-cert.pem')],
      SECRET_ENV,
    );
    try {
      expect(inUrl.stderr()).toMatch(/password is part of --redis.*ps/);
      expect(inUrl.stderr()).not.toContain(PASSWORD);
      const cmdline = readFileSync(`/proc/${inUrl.child.pid}/cmdline`, 'utf8');
      expect(cmdline).toContain('rediss://orch:***@127.0.0.1');
      expect(cmdline).not.toContain(PASSWORD);
    } finally {
      await inUrl.stop();
    }
  }, 120_000);

  it('says what to do when the CA is missing or the password is wrong, without showing the password', async () => {
    const url = `rediss://127.0.0.1:${port}`;
    const noCa = await checkRedis({ url, username: 'orch', password: PASSWORD }, 5_000);
    expect(noCa.ok).toBe(false);
    expect(!noCa.ok && noCa.error).toMatch(/--redis-tls-ca/);
    const wrong = await checkRedis(
      { url, username: 'orch', password: 'not-the-password', tls: { ca: readFileSync(join(dir, 'tls-cert.pem')) } },
      5_000,
    );
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.error).toMatch(/authentication failed/);
    expect(!wrong.ok && wrong.error).not.toContain('not-the-password');
  }, 30_000);
});

describe('redisAccessOf', () => {
  const env = { ORCHESTRATE_CLUSTER_SECRET: SECRET };
  it('warns that a password in --redis is visible in ps, and takes one from a file instead', () => {
    const r = redisAccessOf(
      'redis://:hunter2hunter2@127.0.0.1:6379',
      { redis: 'redis://:hunter2hunter2@127.0.0.1:6379' },
      env,
    );
    expect(r.ok && r.access.warnings.join(' ')).toMatch(/visible|ps/);
    expect(r.ok && r.access.warnings.join(' ')).not.toContain('hunter2');
    const pwDir = mkdtempSync(join(tmpdir(), 'orch-pw-'));
    writeFileSync(join(pwDir, 'pw'), 'from-a-file\n');
    const f = redisAccessOf('redis://127.0.0.1:6379', { 'redis-password-file': join(pwDir, 'pw') }, env);
    expect(f.ok && f.access.endpoint.password).toBe('from-a-file');
    expect(f.ok && f.access.warnings).toEqual([]);
    rmSync(pwDir, { recursive: true, force: true });
  });
  it('refuses to run without a cluster secret unless --insecure-no-secret, and says how to set one', () => {
    const none = redisAccessOf('redis://127.0.0.1:6379', {}, {});
    expect(none.ok).toBe(false);
    expect(!none.ok && none.error).toMatch(/ORCHESTRATE_CLUSTER_SECRET.*--secret-file.*--insecure-no-secret/s);
    const insecure = redisAccessOf('redis://127.0.0.1:6379', { 'insecure-no-secret': true }, {});
    expect(insecure.ok && insecure.access.trust.secured).toBe(false);
    expect(insecure.ok && insecure.access.warnings.join(' ')).toMatch(/without a cluster secret/);
    const short = redisAccessOf('redis://127.0.0.1:6379', {}, { ORCHESTRATE_CLUSTER_SECRET: 'short' });
    expect(!short.ok && short.error).toMatch(/at least 16/);
    expect(!short.ok && short.error).not.toContain("'short'");
  });
  it('refuses TLS files with a redis:// URL', () => {
    const pwDir = mkdtempSync(join(tmpdir(), 'orch-ca-'));
    writeFileSync(join(pwDir, 'ca.pem'), 'x');
    const r = redisAccessOf('redis://127.0.0.1:6379', { 'redis-tls-ca': join(pwDir, 'ca.pem') }, env);
    expect(!r.ok && r.error).toMatch(/rediss:\/\//);
    rmSync(pwDir, { recursive: true, force: true });
  });
});
