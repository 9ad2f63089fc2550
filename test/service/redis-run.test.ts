// service/redis-run.ts against a real redis-server: a Redis nobody answers on is a code after the
// access warnings; a Redis no worker serves opens with a notice saying so (the agents would wait
// in the queue with no sign why), and its lease taker holds the run in Redis too.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterTrust } from '../../src/cluster/cluster-trust.js';
import { openRedisRun } from '../../src/service/redis-run.js';
import { type RedisServerHandle, skipWithoutRedis, startRedis } from '../helpers/redis-server.js';

const skip = skipWithoutRedis('service/redis-run');
const trust = ClusterTrust.withSecret('service-redis-run-secret-0123456789');
let redis: RedisServerHandle | undefined;
const dirs: string[] = [];

beforeAll(async () => {
  if (!skip) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A 127.0.0.1 port nothing listens on (taken, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.skipIf(skip)('service: a distributed run opened on Redis', { timeout: 60_000 }, () => {
  it('a Redis nobody answers on: redis_unreachable, after the access warnings', async () => {
    const notices: string[] = [];
    const opened = await openRedisRun(
      { access: { endpoint: { url: `redis://127.0.0.1:${await deadPort()}` }, trust, warnings: ['a warning'] } },
      (line) => notices.push(line),
    );
    expect(opened).toMatchObject({ ok: false, code: 'redis_unreachable' });
    expect(notices).toEqual(['orchestrate: warning: a warning\n']);
  });

  it('a Redis no worker serves: a notice naming it; the lease taker holds the run', async () => {
    const notices: string[] = [];
    const opened = await openRedisRun({ access: { endpoint: { url: redis!.url }, trust, warnings: [] } }, (line) =>
      notices.push(line),
    );
    if (!opened.ok) throw new Error(opened.message);
    try {
      expect(notices).toEqual([
        `orchestrate: no orchestrate worker serves ${redis!.url} right now: the agents wait in the queue until one starts (orchestrate worker --redis ${redis!.url}).\n`,
      ]);
      expect(opened.run.options.executor).toBeDefined();
      const dir = mkdtempSync(join(tmpdir(), 'service-redis-run-'));
      dirs.push(dir);
      const taken = await opened.run.options.takeLease!(dir, 'run-1');
      expect(taken.ok, taken.ok ? '' : taken.message).toBe(true);
      if (taken.ok) await taken.lease.release();
    } finally {
      await opened.run.close();
    }
  });
});
