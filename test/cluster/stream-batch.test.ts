// Down entries go to Redis as one pipeline per event-loop turn (issue 41: a wide distributed run's
// coordinator spent seconds on one XADD each). Against a real redis-server: 50 entries added in
// one turn reach their streams in order with one write on the connection's socket; the same 50
// sent one XADD each take 50 (what the coordinator did before).
import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { StreamBatch } from '../../src/cluster/stream-batch.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';

const skip = skipWithoutRedis('stream batch');
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

/** Counts the writes on the connection's socket while `fn` runs and its commands are answered. */
async function socketWrites(fn: () => Promise<void>): Promise<number> {
  const socket = (redis as unknown as { stream: Socket }).stream;
  const write = socket.write;
  let writes = 0;
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    writes++;
    return write.apply(this, args);
  } as Socket['write'];
  try {
    await fn();
  } finally {
    socket.write = write;
  }
  return writes;
}

const ids = (entries: [string, string[]][]) => entries.map(([, fields]) => fields[1]);

describe.skipIf(skip)('StreamBatch', () => {
  it("writes one turn's entries as one pipeline, in order", async () => {
    const batch = new StreamBatch(redis);
    const writes = await socketWrites(async () => {
      for (let i = 0; i < 50; i++) batch.add(i % 2 ? 'odd' : 'even', ['n', String(i)]);
      // The batch goes at the end of this turn; a command sent after it is answered after it.
      await new Promise((r) => setImmediate(r));
      await batch.flush();
    });
    expect(writes).toBe(1);
    expect(ids(await redis.xrange('even', '-', '+'))).toEqual(Array.from({ length: 25 }, (_, k) => String(2 * k)));
    expect(ids(await redis.xrange('odd', '-', '+'))).toEqual(Array.from({ length: 25 }, (_, k) => String(2 * k + 1)));
  });

  it('one XADD per entry (the coordinator before) is one write each', async () => {
    const writes = await socketWrites(async () => {
      await Promise.all(Array.from({ length: 50 }, (_, i) => redis.xadd('single', '*', 'n', String(i))));
    });
    expect(writes).toBe(50);
  });
});
