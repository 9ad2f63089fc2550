// Attack (issue #37, last bullet): anyone who can reach Redis copies a verified job while it waits
// in the queue and queues it again once its launch finished. Its MAC verifies (it is the real
// job), so the worker used to claim it and hold a slot for the whole start timeout, waiting for a
// start its coordinator never sends: a few replays starve a cluster. Now the worker drops such a
// job at once with a log line, and the slot stays free for the next real job.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWorker } from '../../src/cluster/cluster-worker.js';
import { AGENTS_QUEUE, BULLMQ_PREFIX } from '../../src/cluster/cluster-wire.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { until } from '../reliability/helpers/reliability-fixtures.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { runDistributed, trust } from './cluster-fixtures.js';

const skip = skipWithoutRedis('replayed job');
let redis: RedisServerHandle;
let attacker: Redis;
let queue: Queue;
const log: string[] = [];
let worker: ClusterWorker | undefined;

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  attacker = connectRedis(redis.url, { name: 'attacker', forBullmq: true });
  queue = new Queue(AGENTS_QUEUE, { connection: attacker, prefix: BULLMQ_PREFIX });
});
afterAll(async () => {
  await worker?.drain();
  await queue?.close();
  attacker?.disconnect();
  await redis?.stop();
  cleanupTempDirs();
});

const project = (name: string) =>
  tempProject({
    'recipe.yaml': `name: ${name}\nprovider: scripted\nscript: script.yaml\nagents:\n  a: { tools: [read] }\ntasks:\n  - id: ${name}\n    agent: a\n    prompt: "Hello"\n`,
    'script.yaml': 'conversations:\n  - match: "Hello"\n    turns:\n      - text: "Hi."\n',
  });

/** Polls `check` (an async look at Redis) until it holds. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > 60_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

describe.skipIf(skip)('a verified job queued again after its launch finished', () => {
  it('is dropped at once with a log line; the one slot stays free and the next run goes at once', async () => {
    // The coordinator queues the job before any worker exists: the attacker copies it from the queue.
    const first = runDistributed(redis.url, project('first'));
    let copied: { id: string; data: unknown } | undefined;
    await eventually(async () => {
      const [job] = await queue.getWaiting();
      if (job?.id) copied = { id: job.id, data: job.data };
      return copied !== undefined;
    }, 'the first run to queue its job');

    // One slot: a replay that held it would keep every other job waiting.
    worker = new ClusterWorker({
      url: redis.url,
      trust,
      name: 'target',
      concurrency: 1,
      workdir: mkdtempSync(join(tmpdir(), 'orch-replayed-job-')),
      env: { PATH: process.env.PATH },
      log: (line) => log.push(line),
    });
    const { outcome } = await first;
    expect(ofType(events(outcome.dir), 'instance_done').map((e) => e.key)).toEqual(['first']);

    // The replay: the same sealed job, under its own job id again.
    await queue.add('agent', copied!.data, { jobId: copied!.id, removeOnComplete: true, removeOnFail: true });
    const dropped = `dropped job ${copied!.id} (first of run `;
    // Either the worker drops it, or it takes the slot and waits for a start (what it used to do).
    await until(
      () => log.some((l) => l.startsWith(dropped)) || worker!.activeCount > 0,
      'the worker to take the replay',
    );
    expect(worker.activeCount).toBe(0);
    expect(log.find((l) => l.startsWith(dropped))).toMatch(
      /unrun: its launch \S+ already finished; a replayed job takes no slot/,
    );

    // The slot is free: the next real job runs now, not after the replay's start timeout.
    const { outcome: second } = await runDistributed(redis.url, project('second'));
    expect(ofType(events(second.dir), 'instance_done').map((e) => e.key)).toEqual(['second']);
    expect(log.filter((l) => / \(job [^)]+\): no start/.test(l))).toEqual([]);
  }, 120_000);
});
