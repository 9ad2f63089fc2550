// The web view of a distributed run acts the same way as on a local one: a real redis-server, one
// in-process ClusterWorker, a coordinator whose executor is Redis (its run folder and control
// socket on this machine, as `orchestrate plan.yaml --redis` keeps them). The page's snapshot names
// the worker each agent ran on; the gate is approved through the web server's API over the run's
// control socket, and the run goes on to success. Waits are on run.jsonl and the run's end.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisExecutor } from '../../src/cluster/redis-executor.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { RunSnapshot } from '../../src/web/run-snapshot.js';
import { startWebServer } from '../../src/web/web-server.js';
import { clusterTrust, useCluster } from '../cluster/helpers/cluster-fixture.js';
import { cleanupTempDirs, logOf, ofType, tempProject, until } from '../orchestrator/helpers/run-fixtures.js';

const cluster = useCluster('web view of a distributed run');
const skip = cluster.skip;
const trust = clusterTrust();

beforeAll(() => {
  if (!skip) cluster.inProcessWorker('w1', 2);
});
afterAll(() => cleanupTempDirs());

describe.skipIf(skip)('the web view of a distributed run', { timeout: 120_000 }, () => {
  it('shows the worker each agent ran on and approves its gate over the control socket', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: web-remote
provider: scripted
script: script.yaml
agents:
  w: { tools: [read] }
tasks:
  - id: first
    agent: w
    prompt: "FIRST task"
  - id: gated
    needs: [first]
    agent: w
    prompt: "GATED task"
    approve: { prompt: "Go on?" }
`,
      'script.yaml': `turns:
  - text: "done remotely"
`,
    });
    const runsDir = join(dir, 'runs');
    const runDir = join(runsDir, 'web-remote');
    const executor = new RedisExecutor({ url: cluster.redis.url, trust });
    const started = await startWebServer({
      runsDir,
      cwd: dir,
      host: '127.0.0.1',
      port: 0,
      token: 'distributed-token-0123456789',
      env: {},
      log: () => {},
    });
    if (!started.ok) throw new Error(started.message);
    const base = `http://127.0.0.1:${started.server.port}/api/runs/web-remote`;
    const headers = { authorization: 'Bearer distributed-token-0123456789' };
    try {
      const done = runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir, runId: 'web-remote', executor });
      await until('the gate', () => ofType(logOf(runDir), 'approval_requested').length > 0);

      const snap = (await (await fetch(base, { headers })).json()) as RunSnapshot;
      expect(snap.instances.find((i) => i.key === 'first')).toMatchObject({ status: 'done', workers: ['w1'] });
      expect(snap.gates).toEqual([expect.objectContaining({ instance: 'gated', state: 'waiting', prompt: 'Go on?' })]);
      expect(snap.readOnly).toBeUndefined();

      const answer = await fetch(`${base}/approve`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ task: 'gated', note: 'from the page' }),
      });
      expect(answer.status).toBe(200);
      const r = await done;
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('succeeded');
      expect(ofType(logOf(runDir), 'approval_given')).toEqual([
        expect.objectContaining({ key: 'gated', decision: 'approved', via: 'web', note: 'from the page' }),
      ]);
      const after = (await (await fetch(base, { headers })).json()) as RunSnapshot;
      expect(after.instances.find((i) => i.key === 'gated')).toMatchObject({ status: 'done', workers: ['w1'] });
    } finally {
      await executor.close();
      await started.server.close();
    }
  });
});
