// The same trace for a distributed run: `orchestrate run --redis` (the CLI in process) with a real
// redis-server and an in-process ClusterWorker running the agents on its own worker threads
// (scripted model). The coordinator builds the spans from the events the worker sends back, so
// the trace has the same shape as a local run's, names the worker, and holds no secret: the
// model's reply quotes a provider key the recipe declares (api_key_env) and the environment holds.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterTrust } from '../../src/cluster/cluster-trust.js';
import { ClusterWorker } from '../../src/cluster/cluster-worker.js';
import type { MessagePort } from 'node:worker_threads';
import { RedisExecutor } from '../../src/cluster/redis-executor.js';
import type { InstanceTask } from '../../src/orchestrator/execution/instance-task.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { type RunTracing, traceRun } from '../../src/telemetry/run-tracing.js';
import { runCli } from '../cli/run-cli.js';
import { type RedisServerHandle, skipWithoutRedis, startRedis } from '../helpers/redis-server.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { startOtlpReceiver } from './otlp-receiver.js';

const SECRET = 'test-cluster-secret-otel-0123456789abcdef';
const KEY = `sk-otel-dist-${Math.random().toString(36).slice(2)}`;
const skip = skipWithoutRedis('distributed trace');
let redis: RedisServerHandle;
let worker: ClusterWorker | undefined;

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  worker = new ClusterWorker({
    url: redis.url,
    trust: ClusterTrust.withSecret(SECRET),
    name: 'w-otel',
    concurrency: 2,
    workdir: mkdtempSync(join(tmpdir(), 'orch-otel-worker-')),
  });
});
afterAll(async () => {
  await worker?.drain();
  await redis?.stop();
  cleanupTempDirs();
});

describe.skipIf(skip)('a distributed run exports the same GenAI trace', { timeout: 120_000 }, () => {
  it('invoke_agent spans name the worker; chat and execute_tool spans hang under them; no key in the bytes', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const dir = tempProject({
        'recipe.yaml': `name: traced-cluster
provider: scripted
script: script.yaml
providers:
  unused:
    type: openai-compatible
    base_url: http://127.0.0.1:9
    api_key_env: OTEL_DIST_KEY
agents:
  editor: { tools: [read, write], summaries: extractive }
tasks:
  - id: note
    agent: editor
    prompt: "Write the note"
`,
        'script.yaml': `turns:
  - tools: [{ name: write, args: { path: NOTE.md, content: "hello\\n" }, id: call_write_1 }]
  - text: "Done; the key was ${KEY}."
`,
      });
      const r = await runCli(['run', 'recipe.yaml', '--redis', redis.url, '--otel', receiver.url], {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          ORCHESTRATE_CLUSTER_SECRET: SECRET,
          OTEL_DIST_KEY: KEY,
          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        },
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const spans = receiver.spans;
      const run = spans.find((s) => s.name === 'invoke_workflow traced-cluster');
      const agent = spans.find((s) => s.name === 'invoke_agent note');
      expect(run?.parentSpanId).toBe('');
      expect(agent).toMatchObject({ parentSpanId: run?.spanId, traceId: run?.traceId, kind: 1 });
      expect(agent?.attributes['orchestrate.worker']).toBe('w-otel');
      const chats = spans.filter((s) => s.parentSpanId === agent?.spanId && s.name.startsWith('chat '));
      expect(chats).toHaveLength(2);
      for (const c of chats)
        expect(c.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted' });
      const tool = spans.find((s) => s.name === 'execute_tool write');
      expect(tool).toMatchObject({ parentSpanId: agent?.spanId, kind: 1 });
      expect(tool?.attributes['gen_ai.tool.call.id']).toBe('call_write_1');
      // The patch came back from the worker and landed: a land span under the attempt.
      const land = spans.find((s) => s.name === 'land');
      expect(land?.parentSpanId).toBe(agent?.spanId);
      expect(land?.attributes['orchestrate.land.files']).toBe(1);
      expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
      // Captured reply, redacted; no byte holds the key.
      expect(chats.map((c) => String(c.attributes['gen_ai.output.messages'])).join('\n')).toContain(
        '[REDACTED:OTEL_DIST_KEY]',
      );
      for (const body of receiver.raw) expect(body.includes(KEY)).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it('each agent task the executor sends carries a traceparent in the run trace (InstanceTask.traceparent, in the Redis job)', async () => {
    const receiver = await startOtlpReceiver();
    const sent: (string | undefined)[] = [];
    /** The real Redis executor; only what it is given to ship is noted. */
    class NotingExecutor extends RedisExecutor {
      override run(task: InstanceTask, options: { transferList: MessagePort[]; signal?: AbortSignal }) {
        sent.push(task.traceparent);
        return super.run(task, options);
      }
    }
    const executor = new NotingExecutor({ url: redis.url, trust: ClusterTrust.withSecret(SECRET) });
    try {
      const dir = tempProject({
        'recipe.yaml': `name: carried
provider: scripted
script: script.yaml
agents:
  talker: { tools: [], summaries: extractive }
tasks:
  - id: hi
    agent: talker
    prompt: "Say hi"
`,
        'script.yaml': 'turns:\n  - text: "hi"\n',
      });
      let tracing: RunTracing | undefined;
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        {
          runsDir: join(dir, 'runs'),
          executor,
          onStore: (store) => {
            tracing = traceRun(store, { tracesUrl: `${receiver.url}/v1/traces`, captureContent: false }, () => {});
          },
          traceparentOf: (key, attempt) => tracing?.traceparentOf(key, attempt),
        },
      );
      await tracing?.finish();
      expect(r.ok && r.outcome.status).toBe('succeeded');
      expect(sent.length).toBeGreaterThan(0);
      const run = receiver.spans.find((s) => s.name === 'invoke_workflow carried');
      const ids = new Set(receiver.spans.map((s) => s.spanId));
      for (const tp of sent) {
        const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(tp ?? '');
        expect(m?.[1]).toBe(run?.traceId);
        expect(ids.has(m?.[2] ?? '')).toBe(true);
      }
    } finally {
      await executor.close();
      await receiver.close();
    }
  });
});
