// The cluster worker (src/cluster/cluster-worker.ts) in this process, with a real redis-server,
// real coordinator processes (`orchestrate <recipe> --redis`, then `resume --redis`) and the real
// SDK on the wire against a local fake API: what the worker does with the agents of a coordinator
// that lost its run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterWorker } from '../../src/cluster/cluster-worker.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { runFolderName } from '../helpers/run-folder.js';
import {
  cleanupTempDirs,
  conversationKey,
  conversationResponder,
  isSummaryRequest,
  tempProject,
} from '../orchestrator/helpers/run-fixtures.js';
import { exited, spawnCli, until } from '../reliability/helpers/reliability-fixtures.js';
import { clusterTrust, SECRET_ENV, useCluster } from './helpers/cluster-fixture.js';

const cluster = useCluster('the cluster worker');
afterAll(() => cleanupTempDirs());

describe.skipIf(cluster.skip)('ClusterWorker', () => {
  it("a job of the run's new coordinator stops the agents of the old one at once, not at their next lease check", async () => {
    // The first coordinator's agents hang in their model call; it is killed, and the run resumed.
    // The worker's periodic lease check is an hour apart here: only the resumed run's first job,
    // taken in the worker's one free slot, can tell the worker that the old agents are orphans.
    // Before, they held their three slots until that check (2 s by default).
    const names = ['o1', 'o2', 'o3'];
    const responder = conversationResponder(
      names.map((n) => ({ match: new RegExp(`Say ${n}\\b`), turns: [{ text: `said ${n}` }] })),
    );
    const held = new Set<string>();
    let holding = true;
    // Answered only when the test ends, so an agent that was never stopped ends and the worker drains.
    let releaseHeld = (): void => {};
    const heldReleased = new Promise<void>((r) => (releaseHeld = r));
    const server = await startFakeAnthropic({
      respond: async (req) => {
        if (holding && !isSummaryRequest(req.body)) {
          held.add(/Say (\w+)/.exec(conversationKey(req.body))?.[1] ?? '?');
          await heldReleased;
        }
        return responder(req);
      },
    });
    const lines: string[] = [];
    const workdir = mkdtempSync(join(tmpdir(), 'orch-worker-fenced-'));
    const worker = new ClusterWorker({
      url: cluster.redis.url,
      trust: clusterTrust(),
      name: 'fenced',
      concurrency: names.length + 1,
      workdir,
      env: { ANTHROPIC_API_KEY: 'sk-test-worker', ANTHROPIC_BASE_URL: server.url },
      fenceMs: 3_600_000,
      log: (line) => lines.push(line),
    });
    try {
      const dir = tempProject({
        'recipe.yaml': `name: fenced
model: claude-haiku-4-5
concurrency: ${names.length}
agents:
  speaker: { tools: [read] }
tasks:
  - id: say
    for_each: [${names.join(', ')}]
    agent: speaker
    prompt: "Say \${{ item }}"
`,
      });
      const runs = join(dir, 'runs');
      const first = spawnCli([join(dir, 'recipe.yaml'), '--redis', cluster.redis.url, '--run-dir', runs], SECRET_ENV);
      const firstExit = exited(first);
      await until(() => held.size === names.length, "every agent's model call held", 90_000);
      first.kill('SIGKILL');
      await firstExit;
      holding = false;
      const runDir = join(runs, runFolderName(runs) ?? '');
      const resumed = await exited(
        spawnCli(['resume', runDir, '--redis', cluster.redis.url, '--run-dir', runs], SECRET_ENV),
      );
      expect(resumed.code, resumed.stderr).toBe(0);
      const cancelled = (): string[] => lines.filter((l) => /^say\.\w+ \(job [^)]+\): cancelled$/.test(l));
      await until(() => cancelled().length === names.length, 'the old agents to be cancelled', 60_000);
      expect(
        cancelled()
          .map((l) => l.split(' ')[0])
          .sort(),
      ).toEqual(names.map((n) => `say.${n}`));
    } finally {
      releaseHeld();
      // An agent that was never stopped waits for a permit from the dead coordinator for ever: the
      // drain would too. Only then (the test failed) is the worker left to the end of the file.
      if (lines.filter((l) => / cancelled$/.test(l)).length === names.length) await worker.drain();
      else void worker.drain();
      await server.close();
      rmSync(workdir, { recursive: true, force: true });
    }
  }, 240_000);
});
