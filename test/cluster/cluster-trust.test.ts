// The cluster secret's envelope: what it binds (run id, launch, instance key, attempt, direction,
// incarnation, body) and what it hides; the lease token only a secret holder can make.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClusterTrust, loadClusterSecret } from '../../src/cluster/cluster-trust.js';

const trust = ClusterTrust.withSecret('unit-test-cluster-secret-0123');
const meta = { runId: 'run-1', launchId: 'launch-1', instance: 'fix.a', attempt: 2 };

describe('ClusterTrust', () => {
  it('a sealed job opens with the same secret and hides its content', () => {
    const env = trust.sealJob(meta, { task: { prompt: 'very secret prompt' } });
    expect(JSON.stringify(env)).not.toContain('very secret prompt');
    const opened = trust.openJob(env);
    expect(opened.ok && opened.value.job).toEqual({ task: { prompt: 'very secret prompt' } });
  });

  it('any change to the envelope, or another secret, fails verification', () => {
    const env = trust.sealJob(meta, { x: 1 });
    for (const changed of [
      { ...env, runId: 'run-2' },
      { ...env, launchId: 'launch-2' },
      { ...env, instance: 'fix.b' },
      { ...env, attempt: 3 },
      { ...env, body: env.body.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) },
    ]) {
      const r = trust.openJob(changed);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.why).toMatch(/MAC does not verify/);
    }
    expect(ClusterTrust.withSecret('another-cluster-secret-4567').openJob(env).ok).toBe(false);
    expect(trust.openJob(ClusterTrust.insecure().sealJob(meta, { x: 1 }))).toMatchObject({
      ok: false,
      why: expect.stringMatching(/no MAC/),
    });
    expect(ClusterTrust.insecure().openJob(env)).toMatchObject({ ok: false, why: expect.stringMatching(/has none/) });
  });

  it('a stream entry is bound to its direction, run, launch and incarnation', () => {
    const s = trust.sealEntry('up', 'run-1', 'launch-1', 'inc-1', '{"k":"result"}');
    expect(s.body).not.toContain('result');
    expect(trust.openEntry('up', 'run-1', 'launch-1', 'inc-1', s.body, s.mac)).toEqual({
      ok: true,
      value: '{"k":"result"}',
    });
    expect(trust.openEntry('down', 'run-1', 'launch-1', 'inc-1', s.body, s.mac).ok).toBe(false);
    expect(trust.openEntry('up', 'run-1', 'launch-2', 'inc-1', s.body, s.mac).ok).toBe(false);
    expect(trust.openEntry('up', 'run-1', 'launch-1', 'inc-2', s.body, s.mac).ok).toBe(false);
  });

  it('workspace bytes open only for the key they were sealed for', () => {
    const sealed = trust.sealBytes(Buffer.from('tar bytes'), 'orchestrate:run:r:ws:abc');
    expect(trust.openBytes(sealed, 'orchestrate:run:r:ws:abc').toString()).toBe('tar bytes');
    expect(() => trust.openBytes(sealed, 'orchestrate:run:r:ws:def')).toThrow();
  });

  it('lease tokens verify only for their run and only when made with the secret', () => {
    const token = trust.leaseToken('run-1');
    expect(trust.leaseTokenValid('run-1', token)).toBe(true);
    expect(trust.leaseTokenValid('run-2', token)).toBe(false);
    expect(
      trust.leaseTokenValid('run-1', ClusterTrust.withSecret('another-cluster-secret-4567').leaseToken('run-1')),
    ).toBe(false);
    expect(trust.leaseTokenValid('run-1', 'a1b2c3d4e5f6a1b2c3d4e5f6')).toBe(false);
  });
});

describe('loadClusterSecret', () => {
  it('reads a key file before the environment and refuses a short secret without showing it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-secret-'));
    writeFileSync(join(dir, 'k'), 'from-the-key-file-0123456789\n');
    expect(
      loadClusterSecret(join(dir, 'k'), { ORCHESTRATE_CLUSTER_SECRET: 'from-the-environment-0123' }),
    ).toMatchObject({ ok: true, secret: 'from-the-key-file-0123456789' });
    expect(loadClusterSecret(undefined, { ORCHESTRATE_CLUSTER_SECRET: 'from-the-environment-0123' })).toMatchObject({
      ok: true,
      secret: 'from-the-environment-0123',
    });
    expect(loadClusterSecret(undefined, {})).toMatchObject({ ok: true, secret: undefined });
    const short = loadClusterSecret(undefined, { ORCHESTRATE_CLUSTER_SECRET: 'tiny-one' });
    expect(!short.ok && short.error).toMatch(/at least 16/);
    expect(!short.ok && short.error).not.toContain('tiny-one');
    expect(loadClusterSecret(join(dir, 'missing'), {})).toMatchObject({
      ok: false,
      error: expect.stringMatching(/ENOENT.*--secret-file/),
    });
  });
});
