// The worker pool runs as many agents at once as the recipe's concurrency allows, whatever the
// number of cores: by default they are spread over one thread per core but one (shared threads), and with
// agentsPerThread 1 each gets a thread of its own (an isolated task carries an abort signal, and
// piscina runs only one such task per thread, so the pool needs a thread per running agent).
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createWorkerPool,
  defaultAgentsPerThread,
  defaultThreadCount,
  startWarmPool,
  takeWarmPool,
  threadsNeeded,
} from '../../../src/orchestrator/execution/pool.js';
import { runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, startedBeforeFirstDone, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('worker pool sizing', () => {
  it('by default spreads the agents that run at once over one thread per core but one, and never leaves an agent without a slot', () => {
    expect(defaultThreadCount(2)).toBe(1); // the coordinator keeps the other core busy
    expect(defaultThreadCount(8)).toBe(7);
    expect(defaultThreadCount(1)).toBe(1);
    expect(defaultThreadCount(64)).toBe(8); // capped: agents wait on the model, not on a core
    expect(defaultAgentsPerThread(32, 0, 2)).toBe(32);
    expect(defaultAgentsPerThread(4, 0, 8)).toBe(1); // enough cores: every agent isolated
    expect(defaultAgentsPerThread(5, 0, 3)).toBe(3);
    expect(defaultAgentsPerThread(4, 4, 3)).toBe(4); // a pair slot per agent slot: 8 agents
    for (const [conc, pairs, cores] of [
      [32, 0, 2],
      [5, 0, 3],
      [4, 4, 3],
      [7, 7, 4],
      [1, 0, 64],
      [100, 0, 64],
    ] as const) {
      const per = defaultAgentsPerThread(conc, pairs, cores);
      const threads = threadsNeeded(conc, pairs, per);
      expect(threads).toBeLessThanOrEqual(defaultThreadCount(cores));
      expect(threads * per).toBeGreaterThanOrEqual(conc + Math.min(pairs, conc));
    }
  });

  it.each([
    ['default sharing', undefined],
    ['a thread per agent', 1],
  ])('six slow agents with concurrency 6 all run at the same time (%s)', async (_label, agentsPerThread) => {
    const dir = tempProject({
      'recipe.yaml': `name: wide
provider: scripted
script: script.yaml
concurrency: 6
agents:
  waiter: { tools: [bash] }
tasks:
  - id: wait
    for_each: [a, b, c, d, e, f]
    agent: waiter
    prompt: "Wait \${{ item }}"
`,
      // A barrier, not a delay: each agent marks that it runs, then waits until all six do. With
      // fewer than six at once the barrier never opens and its own limit fails the run; however
      // slow the machine, six that do run together always pass.
      'script.yaml': `conversations:
  - match: "Wait (\\\\w+)"
    turns:
      - tools: [{ name: bash, args: { command: "touch started-{{match.1}}; for i in $(seq 1 600); do [ $(ls started-* | wc -l) -ge 6 ] && exit 0; sleep 0.1; done; echo barrier never opened; exit 1" } }]
      - text: "waited"
`,
    });
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { runsDir: join(dir, 'runs'), ...(agentsPerThread ? { agentsPerThread } : {}) },
    );
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    // Agents that started before the first one finished were running together.
    const log = events(r.outcome.dir);
    expect(startedBeforeFirstDone(log).size).toBe(6);
  });
});

describe('worker heap limits', () => {
  it('a thread of one agent gets 512 MB; a shared thread (and the warm threads) room for many agents', async () => {
    const isolated = createWorkerPool({ concurrency: 2, agentsPerThread: 1, minThreads: 0 });
    const shared = createWorkerPool({ concurrency: 8, agentsPerThread: 4, minThreads: 0 });
    const given = createWorkerPool({
      concurrency: 8,
      agentsPerThread: 4,
      minThreads: 0,
      resourceLimits: { maxOldGenerationSizeMb: 96 },
    });
    startWarmPool(2);
    const warm = takeWarmPool()!;
    try {
      expect(isolated.options.resourceLimits?.maxOldGenerationSizeMb).toBe(512);
      expect(shared.options.resourceLimits?.maxOldGenerationSizeMb).toBe(4096);
      expect(warm.options.resourceLimits?.maxOldGenerationSizeMb).toBe(4096);
      expect(given.options.resourceLimits?.maxOldGenerationSizeMb).toBe(96);
    } finally {
      await Promise.all([isolated, shared, given, warm].map((p) => p.destroy()));
    }
  });
});
