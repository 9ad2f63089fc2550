import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { policyRefusal, STRICT_POLICY } from '../../src/cluster/worker-policy.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai-server.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle, recordRedisCommands } from '../helpers/redis-server.js';
import { removeWorkdirs, runDistributed, SECRET_ENV, startCliWorker, type CliWorker } from './cluster-fixtures.js';

const skip = skipWithoutRedis('worker provider key');
let redis: RedisServerHandle;
let worker: CliWorker | undefined;
let server: FakeOpenAI | undefined;

const KEY = 'sk-worker-own-key-3c9d1f7a02';

beforeAll(async () => {
  if (!skip) redis = await startRedis();
});
afterAll(async () => {
  await worker?.stop();
  await server?.close();
  await redis?.stop();
  removeWorkdirs();
  cleanupTempDirs();
});

describe.skipIf(skip)("a distributed worker's own provider key", () => {
  it('reaches the provider from the worker only, never through Redis', async () => {
    server = await startFakeOpenAI({ apiKey: KEY, respond: () => ({ kind: 'chat', text: 'hello from the gpu box' }) });
    worker = await startCliWorker(redis.url, 'gpu', ['--allow-base-url'], { ...SECRET_ENV, GPU_BOX_KEY: KEY });
    const monitor = await recordRedisCommands(redis.url);
    const seen = monitor.seen;
    const dir = tempProject({
      'recipe.yaml': `name: own-key
providers:
  gpu:
    type: openai-compatible
    base_url: ${server.url}
    api_key_env: GPU_BOX_KEY
models:
  fake-model:
    price: { input: 0.1, output: 0.2 }
agents:
  greeter: { tools: [], provider: gpu, model: fake-model, summaries: extractive }
tasks:
  - id: greet
    agent: greeter
    prompt: "Say hello"
`,
    });
    try {
      // The coordinator has no provider key of any kind.
      const env: Record<string, string | undefined> = { ...process.env, ...SECRET_ENV };
      for (const k of ['GPU_BOX_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY']) delete env[k];
      const { outcome } = await runDistributed(redis.url, dir, env);
      expect(outcome.status, JSON.stringify(ofType(events(outcome.dir), 'instance_failed'))).toBe('succeeded');
      expect(ofType(events(outcome.dir), 'instance_start')[0]).toMatchObject({ worker: 'gpu' });
      expect(server.requests.length).toBeGreaterThan(0);
      for (const q of server.requests) expect(q.headers.authorization).toBe(`Bearer ${KEY}`);
      // Every command the coordinator and the worker sent, and every key left: no key in them.
      expect(seen.length).toBeGreaterThan(20);
      expect(seen.join('\n')).toContain('orchestrate:bull:agents');
      expect(seen.join('\n')).not.toContain(KEY);
      const scan = connectRedis(redis.url, { name: 'scan' });
      try {
        for (const key of await scan.keys('*')) {
          const type = await scan.type(key);
          const value =
            type === 'string'
              ? await scan.getBuffer(key).then((b) => b?.toString('latin1') ?? '')
              : type === 'hash'
                ? JSON.stringify(await scan.hgetall(key))
                : type === 'stream'
                  ? JSON.stringify(await scan.xrange(key, '-', '+'))
                  : type === 'list'
                    ? JSON.stringify(await scan.lrange(key, 0, -1))
                    : '';
          expect(value, key).not.toContain(KEY);
        }
      } finally {
        scan.disconnect();
      }
    } finally {
      monitor.stop();
    }
  }, 180_000);

  it("refuses a job whose provider would send a worker variable to the coordinator's endpoint, unless --allow-base-url", () => {
    const task = {
      sandbox: { mode: 'workspace', network: false },
      agent: { providerConfig: { baseUrl: 'https://collector.example/v1', apiKeyEnv: 'AWS_SECRET_ACCESS_KEY' } },
    };
    expect(policyRefusal(task, STRICT_POLICY, undefined)).toMatch(
      /sends its requests with this worker's AWS_SECRET_ACCESS_KEY to https:\/\/collector\.example; start the worker with --allow-base-url/,
    );
    expect(policyRefusal(task, { ...STRICT_POLICY, allowBaseUrl: true }, undefined)).toBeUndefined();
  });
});
