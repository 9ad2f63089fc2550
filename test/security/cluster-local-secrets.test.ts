// A distributed run must not send this machine's own credentials to its workers: the run's
// redaction set (run/secrets.ts) holds forge tokens, provider keys named by api_key_env and
// provider header tokens, but only what the recipe lists under `secrets:` travels with a task (as
// before). Checked where it would show: a run without a cluster secret (--insecure-no-secret, so
// the job data is readable in Redis), with a MONITOR of every command during the whole run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { recordRedisCommands, skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { removeWorkdirs, runDistributed, startCliWorker, type CliWorker } from './cluster-fixtures.js';

const skip = skipWithoutRedis('local secrets stay local');
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

const FORGE_TOKEN = 'ghp-decoy-forge-token-3c91a0';
const GATEWAY_KEY = 'decoy-gateway-key-77e2b1';
const LISTED = 'decoy-listed-secret-0d4f';

describe.skipIf(skip)("this machine's credentials in a distributed run", () => {
  it('forge tokens and provider keys never reach Redis; the secrets the recipe lists still travel', async () => {
    worker = await startCliWorker(redis.url, 'plain', ['--insecure-no-secret'], {});
    const monitor = await recordRedisCommands(redis.url);
    const dir = tempProject({
      'recipe.yaml': `name: local-secrets
provider: scripted
script: script.yaml
secrets: [LISTED_TOKEN]
providers:
  gateway:
    type: openai-compatible
    base_url: http://127.0.0.1:9/v1
    api_key_env: GATEWAY_KEY
agents:
  writer: { tools: [write] }
tasks:
  - id: note
    agent: writer
    prompt: "Write the note"
`,
      'script.yaml': `conversations:
  - match: "Write the note"
    turns:
      - tools: [{ name: write, args: { path: note.txt, content: "noted\\n" } }]
      - text: "Noted."
`,
    });
    try {
      const { outcome } = await runDistributed(
        redis.url,
        dir,
        { ...process.env, GITHUB_TOKEN: FORGE_TOKEN, GATEWAY_KEY, LISTED_TOKEN: LISTED },
        { 'insecure-no-secret': true },
      );
      expect(outcome.status, JSON.stringify(ofType(events(outcome.dir), 'instance_failed'))).toBe('succeeded');
      expect(readFileSync(join(dir, 'note.txt'), 'utf8')).toBe('noted\n');
      const all = monitor.seen.join('\n');
      // The job was readable: the listed secret went with it, as it always has.
      expect(all).toContain(LISTED);
      expect(all).not.toContain(FORGE_TOKEN);
      expect(all).not.toContain(GATEWAY_KEY);
    } finally {
      monitor.stop();
    }
  }, 120_000);
});
