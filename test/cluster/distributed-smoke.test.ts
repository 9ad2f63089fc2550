// A distributed run in one test process: a real redis-server, two ClusterWorkers (each with its
// own workdir and worker threads), and a coordinator whose executor is Redis.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisExecutor } from '../../src/cluster/redis-executor.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, ofType, sessionLines, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { clusterTrust, useCluster } from './helpers/cluster-fixture.js';

const cluster = useCluster('distributed smoke');
const skip = cluster.skip;
/** The cluster secret of the coordinator and its workers. */
const trust = clusterTrust();

beforeAll(() => {
  if (skip) return;
  for (const name of ['w1', 'w2']) cluster.inProcessWorker(name, 2);
});
afterAll(() => cleanupTempDirs());

describe.skipIf(skip)('distributed run (in-process workers)', () => {
  it('a fan-out over 6 folders runs on the workers and its edits land in the original folders', async () => {
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
    const files: Record<string, string> = {
      'recipe.yaml': `name: fan6
provider: scripted
script: script.yaml
concurrency: 4
agents:
  editor: { tools: [read, edit, write] }
tasks:
  - id: rename
    for_each: { glob: "svc/*" }
    agent: editor
    cwd: \${{ item }}
    prompt: "Rename the service in \${{ item }}"
`,
      'script.yaml': `conversations:
  - match: "Rename the service in svc/(\\\\w+)"
    turns:
      - tools: [{ name: edit, args: { path: config.txt, edits: [{ oldText: "name: old", newText: "name: {{match.1}}-renamed" }] } }]
      - tools: [{ name: write, args: { path: NOTES.md, content: "renamed {{match.1}}\\n" } }]
      - text: "Renamed {{match.1}}."
`,
    };
    for (const n of names) files[`svc/${n}/config.txt`] = 'name: old\nport: 80\n';
    const dir = tempProject(files);
    const executor = new RedisExecutor({ url: cluster.redis.url, trust });
    try {
      const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs'), executor });
      if (!r.ok) throw new Error(JSON.stringify(r));
      const out = r.outcome;
      if (out.status !== 'succeeded')
        console.log(JSON.stringify(ofType(events(out.dir), 'instance_failed').map((e) => e.error)));
      expect(out.status).toBe('succeeded');
      for (const n of names) {
        expect(readFileSync(join(dir, 'svc', n, 'config.txt'), 'utf8')).toBe(`name: ${n}-renamed\nport: 80\n`);
        expect(readFileSync(join(dir, 'svc', n, 'NOTES.md'), 'utf8')).toBe(`renamed ${n}\n`);
      }
      const log = events(out.dir);
      const starts = ofType(log, 'instance_start');
      expect(new Set(starts.map((e) => e.worker))).toEqual(new Set(['w1', 'w2']));
      for (const n of names)
        expect(sessionLines(join(out.dir, 'sessions', `rename.svc-${n}.jsonl`)).length).toBeGreaterThan(4);
    } finally {
      await executor.close();
    }
  }, 60_000);
});
