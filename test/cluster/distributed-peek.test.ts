// `peek` on a distributed run: the `stream` request and the `partial` replies travel through Redis
// like every other port message. A real redis-server, one in-process ClusterWorker, the scripted
// model writing its reply slowly; the test peeks through the run's control socket until the run ends.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisExecutor } from '../../src/cluster/redis-executor.js';
import { connectRunControl } from '../../src/run/run-control-client.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { clusterTrust, useCluster } from './helpers/cluster-fixture.js';

const cluster = useCluster('distributed peek');
const skip = cluster.skip;
/** The cluster secret of the coordinator and its workers. */
const trust = clusterTrust();

beforeAll(() => {
  if (!skip) cluster.inProcessWorker('w1', 1);
});
afterAll(() => cleanupTempDirs());

/** 60 words, 24 characters a chunk every 60 ms: about 1.2 s of writing. */
const REPLY = Array.from({ length: 60 }, (_, i) => `word${String(i).padStart(2, '0')}`).join(' ');

describe.skipIf(skip)('peek on a distributed run', () => {
  it('returns a growing prefix of the reply written on a remote worker; nothing of it is logged', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: peek-remote
provider: scripted
script: script.yaml
agents:
  w: { tools: [read] }
tasks:
  - id: writer
    agent: w
    prompt: "WRITE something"
`,
      'script.yaml': `turns:
  - stream_delay_ms: 60
    text: ${JSON.stringify(REPLY)}
`,
    });
    const runsDir = join(dir, 'runs');
    const runDir = join(runsDir, 'peek-remote');
    const executor = new RedisExecutor({ url: cluster.redis.url, trust });
    try {
      let ended = false;
      const done = runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        { runsDir, runId: 'peek-remote', executor },
      ).finally(() => (ended = true));
      const control = connectRunControl(runDir, { timeoutMs: 30_000 });
      const seen: string[] = [];
      while (!ended) {
        const r = await control.send({ action: 'peek', instance: 'writer' });
        if (r.ok && r.message !== '' && r.message !== seen[seen.length - 1]) seen.push(r.message);
        await new Promise((res) => setTimeout(res, 20));
      }
      const r = await done;
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('succeeded');
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const s of seen) expect(REPLY.startsWith(s)).toBe(true);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.length).toBeGreaterThan(seen[i - 1]!.length);
      expect(seen[0]!.length).toBeLessThan(REPLY.length);
      const log = events(runDir);
      expect(ofType(log, 'instance_start').map((e) => e.worker)).toEqual(['w1']);
      expect(ofType(log, 'control')).toEqual([]);
      const raw = readFileSync(join(runDir, 'run.jsonl'), 'utf8');
      for (const s of seen.filter((p) => p !== REPLY)) expect(raw).not.toContain(JSON.stringify(s));
    } finally {
      await executor.close();
    }
  }, 60_000);
});
