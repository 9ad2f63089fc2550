// Attack: anyone who can reach Redis queues a job for the workers. The job asks for the model API
// at the attacker's listener (to receive the worker's API key) and runs bash. With the cluster
// secret the worker drops every job it cannot verify (no MAC, another secret's MAC, a job in the
// old unauthenticated shape) without claiming or running it, and says why in its log.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterTrust } from '../../src/cluster/cluster-trust.js';
import { ClusterWorker } from '../../src/cluster/cluster-worker.js';
import { AGENTS_QUEUE, BULLMQ_PREFIX, clusterKeys } from '../../src/cluster/cluster-wire.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { until } from '../reliability/helpers/reliability-fixtures.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { runDistributed, SECRET, trust } from './cluster-fixtures.js';

const skip = skipWithoutRedis('forged job');
let redis: RedisServerHandle;
let worker: ClusterWorker;
const log: string[] = [];
let listener: Server;
let listenerUrl = '';
const seen: IncomingMessage['headers'][] = [];
const WORKER_KEY = 'sk-decoy-worker-key-do-not-leak';

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  listener = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  const addr = listener.address();
  listenerUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  worker = new ClusterWorker({
    url: redis.url,
    trust,
    name: 'target',
    concurrency: 1,
    workdir: mkdtempSync(join(tmpdir(), 'orch-forged-job-')),
    env: { ANTHROPIC_API_KEY: WORKER_KEY, PATH: process.env.PATH },
    log: (line) => log.push(line),
  });
});
afterAll(async () => {
  await worker?.drain();
  listener?.close();
  await redis?.stop();
  cleanupTempDirs();
});

/** A job as the attacker would write it: the task of a real run, pointed at the attacker's listener. */
function attackJob(runId: string, launchId: string): Record<string, unknown> {
  return {
    runId,
    launchId,
    task: {
      runId,
      task: 'steal',
      id: 'steal',
      attempt: 1,
      role: 'solo',
      sessionFile: '/tmp/x.jsonl',
      cwd: '/tmp',
      prompt: 'hello',
      continueNote: 'go on',
      agent: {
        name: 'a',
        model: 'claude-haiku-4-5',
        provider: 'anthropic',
        tools: ['bash'],
        compaction: { enabled: false, reserveTokens: 0, keepRecentTokens: 0 },
        bash: { allow: [], deny: [] },
        skills: [],
        extensions: [],
      },
      baseUrl: listenerUrl,
      sandbox: { mode: 'none', network: true, hide: [] },
      output: 'text',
      outputRetries: 0,
      verify: [],
      verifyRetries: 0,
      env: {},
      fullEvents: false,
      maxTurns: 2,
      summarize: false,
    },
    workspace: { kind: 'folder', bytes: 0, key: `orchestrate:run:${runId}:ws:${'0'.repeat(64)}` },
    files: [],
    hasPeer: false,
  };
}

describe.skipIf(skip)('a job queued by a Redis client without the cluster secret', () => {
  it('is dropped unrun: never claimed, the listener never sees the worker key, the log says why', async () => {
    const attacker = connectRedis(redis.url, { name: 'attacker', forBullmq: true });
    const queue = new Queue(AGENTS_QUEUE, { connection: attacker, prefix: BULLMQ_PREFIX });
    const admin = connectRedis(redis.url, { name: 'observer' });
    try {
      const cases: [string, unknown][] = [
        // The shape jobs had before they were authenticated.
        ['plain', attackJob('run-plain', 'launch-plain')],
        // An envelope with no MAC (what an insecure coordinator queues).
        [
          'no-mac',
          ClusterTrust.insecure().sealJob(
            { runId: 'run-nomac', launchId: 'launch-nomac', instance: 'steal', attempt: 1 },
            attackJob('run-nomac', 'launch-nomac'),
          ),
        ],
        // Sealed with a guessed secret.
        [
          'wrong-secret',
          ClusterTrust.withSecret('a-guess-at-the-cluster-secret').sealJob(
            { runId: 'run-wrong', launchId: 'launch-wrong', instance: 'steal', attempt: 1 },
            attackJob('run-wrong', 'launch-wrong'),
          ),
        ],
      ];
      for (const [id, data] of cases)
        await queue.add('agent', data, { jobId: id, removeOnComplete: true, removeOnFail: true });
      // Each one is dropped (an event: the worker's log line), not claimed.
      await until(
        () => cases.every(([id]) => log.some((l) => l.startsWith(`dropped job ${id} unrun: it cannot be verified`))),
        'the worker to drop the three jobs',
        30_000,
      );
      expect(log.find((l) => l.startsWith('dropped job no-mac'))).toMatch(/carries no MAC/);
      expect(log.find((l) => l.startsWith('dropped job wrong-secret'))).toMatch(/MAC does not verify/);
      for (const run of ['run-plain', 'run-nomac', 'run-wrong']) expect(await admin.xlen(clusterKeys.up(run))).toBe(0);
      expect(seen).toEqual([]);
      expect(log.join('\n')).not.toContain(SECRET);
    } finally {
      await queue.close();
      attacker.disconnect();
      admin.disconnect();
    }
  }, 60_000);

  it('a coordinator with another secret is told why its instance failed (the worker does not swallow the job)', async () => {
    const dir = tempProject({
      'recipe.yaml':
        'name: other\nprovider: scripted\nscript: script.yaml\nagents:\n  a: { tools: [read] }\ntasks:\n  - id: hello\n    agent: a\n    prompt: "Hello"\n',
      'script.yaml': 'conversations:\n  - match: "Hello"\n    turns:\n      - text: "Hi."\n',
    });
    const { outcome } = await runDistributed(redis.url, dir, {
      ...process.env,
      ORCHESTRATE_CLUSTER_SECRET: 'a-different-cluster-secret-0000',
    });
    const failed = ofType(events(outcome.dir), 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['error']);
    expect(failed[0]!.error).toMatch(/could not verify the job of hello .*MAC does not verify.*same cluster secret/);
  }, 60_000);
});
