// The worker roster on a real redis-server: a running `ClusterWorker`-shaped beat counts as live,
// an old one and a foreign value do not (a coordinator warns "no orchestrate worker serves" then).
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../src/cluster/cluster-wire.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { beatTime, liveWorkerCount, WORKER_SEEN_MS, type WorkerBeat } from '../../src/cluster/worker-roster.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';

const skip = skipWithoutRedis('worker roster');

describe.skipIf(skip)('worker roster', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedis();
    redis = connectRedis(server.url, { name: 'roster-test' });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  const beat = (at: number): string =>
    JSON.stringify({ name: 'w', host: 'h', pid: 1, concurrency: 2, at, running: 0 } satisfies WorkerBeat);

  it('counts the workers whose last beat is fresh, not the gone ones nor values it cannot read', async () => {
    const now = 1_000_000_000;
    expect(await liveWorkerCount(redis, now)).toBe(0);
    await redis.hset(clusterKeys.workers(), 'old', beat(now - WORKER_SEEN_MS));
    await redis.hset(clusterKeys.workers(), 'torn', '{"at":');
    await redis.hset(clusterKeys.workers(), 'null', 'null');
    expect(await liveWorkerCount(redis, now)).toBe(0);
    await redis.hset(clusterKeys.workers(), 'fresh', beat(now - WORKER_SEEN_MS + 1));
    await redis.hset(clusterKeys.workers(), 'now', beat(now));
    expect(await liveWorkerCount(redis, now)).toBe(2);
  });

  it('reads the time of a beat, and nothing from what is not a JSON object', () => {
    expect(beatTime(beat(42))).toBe(42);
    expect(beatTime('{}')).toBe(0);
    expect(beatTime('null')).toBeUndefined();
    expect(beatTime('not json')).toBeUndefined();
  });
});
