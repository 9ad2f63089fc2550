// A distributed worker measures the agent's work with its own git (cluster/workspace-patch.ts). When
// that measurement fails, the attempt must fail with class `workspace`: before, the worker sent an
// empty patch with a successful result, so the coordinator landed nothing and called the instance
// done (the work, and any change the guards should have judged, silently dropped). The agent here
// deletes the ref that names the workspace's baseline, so there is nothing to diff against.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { removeWorkdirs, runDistributed, SECRET_ENV, startCliWorker, type CliWorker } from './cluster-fixtures.js';

const skip = skipWithoutRedis('a distributed workspace that cannot be measured fails closed');
let redis: RedisServerHandle;
let worker: CliWorker | undefined;

beforeAll(async () => {
  if (!skip) redis = await startRedis();
});
afterAll(async () => {
  await worker?.stop();
  await redis?.stop();
  removeWorkdirs();
  cleanupTempDirs();
});

const RECIPE = `name: measure
provider: scripted
script: script.yaml
agents:
  maker: { tools: [bash] }
tasks:
  - id: make
    agent: maker
    retries: 0
    prompt: "Make the files"
`;
const script = (command: string) => `conversations:
  - match: "Make the files"
    turns:
      - tools: [{ name: bash, args: { command: ${JSON.stringify(command)} } }]
      - text: "Made."
`;

describe.skipIf(skip)('a distributed worker whose workspace cannot be measured', () => {
  it('fails the attempt with class workspace instead of reporting success with no patch; a measurable one lands', async () => {
    worker = await startCliWorker(redis.url, 'measure');
    const bad = tempProject({
      'recipe.yaml': RECIPE,
      'script.yaml': script('echo work > top.txt && git update-ref -d refs/orchestrate/base'),
    });
    const failed = await runDistributed(redis.url, bad, { ...process.env, ...SECRET_ENV });
    const ends = ofType(events(failed.outcome.dir), 'instance_failed');
    expect(failed.outcome.status).toBe('failed');
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ key: 'make', failure: 'workspace' });
    expect(String(ends[0]!.error)).toMatch(/could not be measured/);
    expect(ofType(events(failed.outcome.dir), 'instance_done')).toHaveLength(0);

    const good = tempProject({
      'recipe.yaml': RECIPE,
      'script.yaml': script('echo work > top.txt'),
    });
    const done = await runDistributed(redis.url, good, { ...process.env, ...SECRET_ENV });
    expect(done.outcome.status).toBe('succeeded');
    expect(existsSync(join(good, 'top.txt'))).toBe(true);
  }, 180_000);
});
