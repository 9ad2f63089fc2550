// The reader of a Redis stream (a coordinator's up stream, a worker's down stream), against a real
// redis-server: every entry once, in order; and a read of many entries is handled in slices, the
// event loop getting a turn between them (issue 41: a coordinator handled up to 200 entries in one
// turn, holding its timers and I/O back meanwhile).
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEntry, type StreamEntry } from '../../src/cluster/cluster-wire.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { StreamReader } from '../../src/cluster/stream-reader.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';

const skip = skipWithoutRedis('stream reader');
let server: RedisServerHandle;
let redis: Redis;

beforeAll(async () => {
  if (skip) return;
  server = await startRedis();
  redis = connectRedis(server.url);
  await redis.ping();
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

/** Adds `n` entries (launch `e<from>`, `e<from + 1>`, ...) to `key` in one pipeline, so one read brings them all. */
async function addEntries(key: string, n: number, from = 0): Promise<void> {
  const p = redis.pipeline();
  for (let i = from; i < from + n; i++) p.xadd(key, '*', 'l', `e${i}`, 'i', 'inc', 'b', '{}', 'm', '');
  await p.exec();
}

describe.skipIf(skip)('StreamReader', () => {
  it('hands every entry over once, in order, across reads and trims', async () => {
    const seen: string[] = [];
    let reader: StreamReader | undefined;
    const all = new Promise<void>((resolve) => {
      reader = new StreamReader(connectRedis(server.url), 'in-order', (e: StreamEntry) => {
        seen.push(e.launch);
        if (seen.length === 450) resolve();
      });
    });
    await addEntries('in-order', 250);
    await addEntries('in-order', 200, 250);
    await all;
    await reader!.stop();
    expect(seen).toEqual(Array.from({ length: 450 }, (_, i) => `e${i}`));
  });

  it('gives the event loop a turn between slices of one read (a slice of 0 ms: after every entry)', async () => {
    await addEntries('sliced', 20);
    const log: string[] = [];
    let reader: StreamReader | undefined;
    const all = new Promise<void>((resolve) => {
      reader = new StreamReader(
        connectRedis(server.url),
        'sliced',
        (e) => {
          log.push(e.launch);
          // Queued behind this entry: runs before the next entry only if the reader lets the loop turn.
          setImmediate(() => log.push(`turn after ${e.launch}`));
          if (log.filter((x) => !x.startsWith('turn')).length === 20) setImmediate(resolve);
        },
        () => {},
        0,
      );
    });
    await all;
    await reader!.stop();
    const expected = Array.from({ length: 20 }, (_, i) => [`e${i}`, `turn after e${i}`]).flat();
    expect(log).toEqual(expected);
  });

  it('entries it cannot read (no launch or body) are skipped', () => {
    expect(parseEntry(['l', 'x', 'i', 'y'])).toBeUndefined();
    expect(parseEntry(['b', '{}'])).toBeUndefined();
    expect(parseEntry(['l', 'x', 'b', '{}'])).toEqual({ launch: 'x', incarnation: '', body: '{}', mac: '' });
  });
});
