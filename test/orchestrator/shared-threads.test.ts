// Opt-in thread sharing (--agents-per-thread N): agents on one thread really run together, and
// when one of them ignores an abort its thread is terminated; the agent sharing that thread did
// nothing wrong, so it is retried as collateral (even without a retry policy) and finishes.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, ofType, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const FAULTS = join(import.meta.dirname, '..', 'reliability', 'fixtures', 'fault-extension.ts');

describe('agents sharing worker threads', { timeout: 60_000 }, () => {
  it('four slow agents on two threads all run at the same time', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: shared
provider: scripted
script: script.yaml
concurrency: 4
tasks:
  - id: wait
    for_each: [a, b, c, d]
    prompt: "Wait \${{ item }}"
`,
      'script.yaml': `turns:
  - { text: "waited", delay_ms: 600 }
`,
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs'), agentsPerThread: 2 });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    const log = events(r.outcome.dir);
    const firstDone = log.findIndex((e) => e.type === 'instance_done');
    const startedBefore = new Set(log.slice(0, firstDone).flatMap((e) => (e.type === 'agent_event' && e.event.type === 'agent_start' ? [e.key] : [])));
    expect(startedBefore.size).toBe(4);
  });

  it('a stuck agent is stopped by terminating its thread; the agent that shared it is retried as collateral and succeeds', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: collateral
provider: scripted
script: script.yaml
concurrency: 2
agents:
  breaker: { tools: [fault], extensions: ["${FAULTS}"] }
tasks:
  - id: stuck
    agent: breaker
    prompt: "Get stuck"
    timeout: 1s
    on_failure: continue
  - id: patient
    prompt: "Be patient"
`,
      'script.yaml': `conversations:
  - match: "Get stuck"
    turns:
      - tools: [{ name: fault, args: { mode: stuck } }]
  - match: "Be patient"
    turns:
      - { text: "finished patiently", delay_ms: 6000 }
`,
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs'), agentsPerThread: 2 });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    const failed = ofType(log, 'instance_failed').find((e) => e.key === 'stuck');
    expect(failed).toMatchObject({ failure: 'timeout', final: true });
    const retry = ofType(log, 'instance_retry').find((e) => e.key === 'patient');
    expect(retry?.failure).toBe('crashed');
    expect(retry?.error).toMatch(/stuck, which shared it, did not stop when aborted/);
    const done = ofType(log, 'instance_done').find((e) => e.key === 'patient');
    expect(done).toMatchObject({ attempt: 2, text: 'finished patiently' });
  });
});
