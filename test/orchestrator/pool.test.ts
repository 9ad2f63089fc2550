// The worker pool runs as many agents at once as the recipe's concurrency allows, whatever the
// number of cores: every agent task carries an abort signal, and piscina runs only one such task
// per thread, so the pool must have a thread per concurrently running agent.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('worker pool sizing', () => {
  it('six slow agents with concurrency 6 all run at the same time', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: wide
provider: scripted
script: script.yaml
concurrency: 6
tasks:
  - id: wait
    for_each: [a, b, c, d, e, f]
    prompt: "Wait \${{ item }}"
`,
      'script.yaml': `turns:
  - { text: "waited", delay_ms: 700 }
`,
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    // Agents that started before the first one finished were running together.
    const log = events(r.outcome.dir);
    const firstDone = log.findIndex((e) => e.type === 'instance_done');
    const startedBefore = new Set(log.slice(0, firstDone).flatMap((e) => (e.type === 'agent_event' && e.event.type === 'agent_start' ? [e.key] : [])));
    expect(startedBefore.size).toBe(6);
  });
});
