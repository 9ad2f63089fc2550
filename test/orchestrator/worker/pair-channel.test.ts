// The pair channel's close, seen from the other end of a real piscina thread. A distributed
// worker relays a pair member's channel and sends the member's result only once that channel
// closed; a piscina thread sleeps between tasks (Atomics.wait), so a close still pending when the
// task returned never arrived, and every distributed pair member waited a 10 s fallback.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerPool } from '../../../src/orchestrator/execution/pool.js';

const pool = createWorkerPool({
  concurrency: 1,
  filename: pathToFileURL(join(import.meta.dirname, '../fixtures/pair-close-worker.ts')).href,
});
afterAll(() => pool.destroy());

describe('PairChannel.close in a pool thread', () => {
  it('the other end sees the close by the time the task returned, after every message sent before it', async () => {
    const { port1, port2 } = new MessageChannel();
    const received: unknown[] = [];
    port1.on('message', (m: unknown) => received.push(m));
    // What the other end held when the close came: every message sent before the close.
    const closed = new Promise<unknown[]>((resolve) => port1.once('close', () => resolve([...received])));
    const result = await pool.run({ peerPort: port2 }, { transferList: [port2] });
    expect(result).toBe('returned');
    // On the old code this waited until the thread's next task (here: forever, the test's timeout).
    expect(await closed).toEqual([{ type: 'end', reason: 'done' }]);
  });
});
