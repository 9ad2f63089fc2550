// Attack: read what a distributed run writes to Redis. Recipe secrets, the prompt and the session
// travel there (job data, stream entries). With the cluster secret all of it is encrypted: a
// MONITOR of every command the server executed during the whole run, and a scan of every key left,
// never show the decoy values, while the run itself works with them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle, recordRedisCommands } from '../helpers/redis-server.js';
import {
  removeWorkdirs,
  runDistributed,
  SECRET,
  SECRET_ENV,
  startCliWorker,
  type CliWorker,
} from './cluster-fixtures.js';

const skip = skipWithoutRedis('secrets at rest');
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

const DECOY_SECRET = 'decoy-recipe-secret-5b0e77c2';
const DECOY_PROMPT = 'decoy-prompt-text-91ac4f';

describe.skipIf(skip)('what a distributed run leaves readable in Redis', () => {
  it('no recipe secret, prompt or session text in clear, in any command or key', async () => {
    worker = await startCliWorker(redis.url, 'keeper');
    const monitor = await recordRedisCommands(redis.url);
    const seen = monitor.seen;
    const dir = tempProject({
      'recipe.yaml': `name: keep
provider: scripted
script: script.yaml
secrets: [DECOY_TOKEN]
agents:
  writer: { tools: [write] }
tasks:
  - id: note
    agent: writer
    prompt: "Write the note ${DECOY_PROMPT}"
`,
      'script.yaml': `conversations:
  - match: "Write the note"
    turns:
      - tools: [{ name: write, args: { path: note.txt, content: "noted\\n" } }]
      - text: "Noted."
`,
    });
    try {
      const { outcome } = await runDistributed(redis.url, dir, {
        ...process.env,
        ...SECRET_ENV,
        DECOY_TOKEN: DECOY_SECRET,
      });
      expect(outcome.status, JSON.stringify(ofType(events(outcome.dir), 'instance_failed'))).toBe('succeeded');
      expect(readFileSync(join(dir, 'note.txt'), 'utf8')).toBe('noted\n');
      // The prompt did travel (the streamed-back session holds it).
      expect(readFileSync(join(outcome.dir, 'sessions', 'note.jsonl'), 'utf8')).toContain(DECOY_PROMPT);
      // Every command the coordinator and the worker sent while the run went.
      expect(seen.length).toBeGreaterThan(20);
      const all = seen.join('\n');
      expect(all).toContain('orchestrate:bull:agents');
      for (const decoy of [DECOY_SECRET, DECOY_PROMPT, SECRET]) expect(all).not.toContain(decoy);
      // And whatever is left in Redis now.
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
                    : type === 'zset'
                      ? JSON.stringify(await scan.zrange(key, '0', '-1'))
                      : type === 'set'
                        ? JSON.stringify(await scan.smembers(key))
                        : '';
          for (const decoy of [DECOY_SECRET, DECOY_PROMPT, SECRET]) expect(value, key).not.toContain(decoy);
        }
      } finally {
        scan.disconnect();
      }
    } finally {
      monitor.stop();
    }
  }, 120_000);
});
