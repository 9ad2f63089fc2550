// Worker policy: a verified job still runs on the worker's machine with the worker's API key, so
// the worker's own flags decide what it accepts. By default it refuses a job that sends its key to
// another base URL (the coordinator's ANTHROPIC_BASE_URL: an exfiltration path), runs commands
// unconfined (sandbox: none), or lets them reach the network; each refusal fails the instance and
// names the flag. With --allow-base-url and --allow-network the same jobs work.
import { createServer, type Server } from 'node:net';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { policyRefusal, STRICT_POLICY } from '../../src/cluster/worker-policy.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { removeWorkdirs, runDistributed, SECRET_ENV, startCliWorker, type CliWorker } from './cluster-fixtures.js';

const skip = skipWithoutRedis('worker policy') || skipWithoutBwrap('worker policy');
const WORKER_KEY = 'sk-decoy-worker-key-policy-test';
let redis: RedisServerHandle;
let api: FakeAnthropic;
/** A TCP listener standing for "the network": what reaches it. */
let net: Server;
let netPort = 0;
const netData: string[] = [];
const workers: CliWorker[] = [];

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  api = await startFakeAnthropic({
    respond: () => ({ kind: 'message', content: [{ type: 'text', text: 'Answered.' }] }),
  });
  net = createServer((sock) => sock.on('data', (d) => netData.push(d.toString())));
  await new Promise<void>((r) => net.listen(0, '127.0.0.1', () => r()));
  const addr = net.address();
  netPort = typeof addr === 'object' && addr ? addr.port : 0;
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  net?.close();
  await api?.close();
  await redis?.stop();
  removeWorkdirs();
  cleanupTempDirs();
});

/** The worker's environment: its own key, no base URL of its own. */
const workerEnv = { ...SECRET_ENV, ANTHROPIC_API_KEY: WORKER_KEY };
/** A coordinator that points the model API at `baseUrl` (undefined: none). */
const coordinatorEnv = (baseUrl: string | undefined) => ({
  ...process.env,
  ...SECRET_ENV,
  ANTHROPIC_API_KEY: undefined,
  ANTHROPIC_BASE_URL: baseUrl,
});

const askProject = (): string =>
  tempProject({
    'recipe.yaml': `name: ask
model: claude-haiku-4-5
agents:
  asker: { tools: [read] }
tasks:
  - id: ask
    agent: asker
    prompt: "Say something."
`,
  });

/** Two scripted tasks: one unconfined, one with network; both run bash. */
function commandsProject(marker: string): string {
  return tempProject({
    'recipe.yaml': `name: cmds
provider: scripted
script: script.yaml
agents:
  loose: { tools: [bash], sandbox: none }
  online: { tools: [bash], network: true }
tasks:
  - id: unconfined
    agent: loose
    prompt: "Run unconfined"
  - id: online
    agent: online
    prompt: "Call out"
`,
    'script.yaml': `conversations:
  - match: "Run unconfined"
    turns:
      - tools: [{ name: bash, args: { command: "touch ${marker}" } }]
      - text: "Ran."
  - match: "Call out"
    turns:
      - tools: [{ name: bash, args: { command: "echo hello-network > /dev/tcp/127.0.0.1/${netPort}" } }]
      - text: "Called."
`,
  });
}

describe.skipIf(skip)('what a worker accepts', () => {
  it('a strict worker refuses base URL overrides, sandbox: none and network, naming the flag; the key never reaches the listener', async () => {
    workers.push(await startCliWorker(redis.url, 'strict', [], workerEnv));
    const asked = await runDistributed(redis.url, askProject(), coordinatorEnv(api.url));
    const refusedAsk = ofType(events(asked.outcome.dir), 'instance_failed');
    expect(refusedAsk.map((e) => e.failure)).toEqual(['error']);
    expect(refusedAsk[0]!.error).toMatch(/refused the job: .*--allow-base-url/);
    expect(api.requests).toEqual([]);

    const marker = join(mkdtempSync(join(tmpdir(), 'orch-policy-')), 'ran-unconfined');
    const cmds = await runDistributed(redis.url, commandsProject(marker), coordinatorEnv(undefined));
    const failed = new Map(ofType(events(cmds.outcome.dir), 'instance_failed').map((e) => [e.key, e.error ?? '']));
    expect(failed.get('unconfined')).toMatch(/unconfined \(sandbox: none\).*--allow-unsandboxed/);
    expect(failed.get('online')).toMatch(/network: true.*--allow-network/);
    expect(existsSync(marker)).toBe(false);
    expect(netData).toEqual([]);
  }, 120_000);

  it('with --allow-base-url and --allow-network the same jobs work', async () => {
    workers.push(await startCliWorker(redis.url, 'open', ['--allow-base-url', '--allow-network'], workerEnv));
    const asked = await runDistributed(redis.url, askProject(), coordinatorEnv(api.url));
    expect(asked.outcome.status).toBe('succeeded');
    expect(api.requests.length).toBeGreaterThan(0);
    // The worker's own key, at the base URL the coordinator named (it was allowed).
    expect(JSON.stringify(api.requests[0]!.headers)).toContain(WORKER_KEY);

    const dir = tempProject({
      'recipe.yaml': `name: online
provider: scripted
script: script.yaml
agents:
  online: { tools: [bash], network: true }
tasks:
  - id: online
    agent: online
    prompt: "Call out"
`,
      'script.yaml': `conversations:
  - match: "Call out"
    turns:
      - tools: [{ name: bash, args: { command: "echo hello-network > /dev/tcp/127.0.0.1/${netPort}" } }]
      - text: "Called."
`,
    });
    const online = await runDistributed(redis.url, dir, coordinatorEnv(undefined));
    expect(online.outcome.status).toBe('succeeded');
    await expect.poll(() => netData.join('')).toContain('hello-network');
  }, 120_000);
});

describe('policyRefusal', () => {
  const sandboxed = { sandbox: { mode: 'workspace', network: false }, agent: { extensions: [] } };
  it('accepts a sandboxed job without network, base URL or extensions', () => {
    expect(policyRefusal(sandboxed, STRICT_POLICY, undefined)).toBeUndefined();
  });
  it('refuses shipped extensions unless --allow-extensions', () => {
    const ext = { ...sandboxed, agent: { extensions: ['/p/ext.ts'] } };
    expect(policyRefusal(ext, STRICT_POLICY, undefined)).toMatch(/--allow-extensions/);
    expect(policyRefusal(ext, { ...STRICT_POLICY, allowExtensions: true }, undefined)).toBeUndefined();
  });
  it("lets the worker's own ANTHROPIC_BASE_URL win over the job's without refusing", () => {
    expect(
      policyRefusal({ ...sandboxed, baseUrl: 'http://evil.example' }, STRICT_POLICY, 'https://api.anthropic.com'),
    ).toBeUndefined();
  });
  it('treats a job with no sandbox at all as unconfined', () => {
    expect(policyRefusal({ agent: { extensions: [] } }, STRICT_POLICY, undefined)).toMatch(/--allow-unsandboxed/);
  });
});
