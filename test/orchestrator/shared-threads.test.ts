// Thread sharing (the default when more agents run at once than there are cores; forced here with
// agentsPerThread): agents on one thread really run together. When one of them ignores an abort
// its thread is terminated; the agent sharing that thread did nothing wrong, so it is retried as
// collateral (even without a retry policy) and finishes. When a shared thread crashes, nobody can
// tell which agent did it: each is retried uncharged on a thread of its own, where a crash is its own.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import { runFolderName } from '../helpers/run-folder.js';
import { cleanupTempDirs, events, ofType, startedBeforeFirstDone, tempProject, until } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

/** Runs the recipe in `dir` with `agentsPerThread` agents to a thread; the outcome and its run log. */
async function runSharing(dir: string, agentsPerThread: number, env?: NodeJS.ProcessEnv) {
  const r = await runRecipeFile(
    join(dir, 'recipe.yaml'),
    { cwd: dir },
    { runsDir: join(dir, 'runs'), agentsPerThread, ...(env ? { env } : {}) },
  );
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { outcome: r.outcome, log: events(r.outcome.dir) };
}

const FAULTS = join(import.meta.dirname, '..', 'reliability', 'fixtures', 'fault-extension.ts');

/**
 * The patient agent's model: a local API that answers no call before the patient's retry is
 * logged in `runsDir`. Its first attempt is surely still waiting when their shared thread ends,
 * however late a loaded machine starts them, and its retry is answered at once.
 */
async function startPatientApi(runsDir: string) {
  const retried = () => {
    const run = runFolderName(runsDir);
    return run !== undefined && ofType(events(join(runsDir, run)), 'instance_retry').some((e) => e.key === 'patient');
  };
  const server = await startFakeAnthropic({
    respond: async () => {
      await until('the patient to be retried', () => retried() || undefined, 90_000);
      return { kind: 'message', content: [{ type: 'text', text: 'finished patiently' }] };
    },
  });
  const env = { ...process.env, ANTHROPIC_API_KEY: 'sk-test-patient', ANTHROPIC_BASE_URL: server.url };
  return { env, close: () => server.close() };
}

/** The agent of the patient task in these recipes (its model is startPatientApi's). */
const WAITER = 'waiter: { tools: [], provider: anthropic, model: claude-haiku-4-5, summaries: extractive }';

describe('agents sharing worker threads', { timeout: 60_000 }, () => {
  it('four slow agents on two threads all run at the same time', async () => {
    // Each agent marks its start, then waits in bash until all four have (a barrier, not a clock:
    // a fixed 600 ms reply let a loaded machine finish the first agent before the last started).
    // Were two agents on a thread unable to run together, the last two would start only once the
    // first two gave up waiting (after 30 s or more), and the count below fails.
    const barrier =
      'touch started-{{match.1}}; for i in $(seq 600); do [ $(ls started-* | wc -l) -ge 4 ] && break; sleep 0.05; done';
    const dir = tempProject({
      'recipe.yaml': `name: shared
provider: scripted
script: script.yaml
concurrency: 4
agents:
  w: { tools: [bash] }
tasks:
  - id: wait
    for_each: [a, b, c, d]
    agent: w
    prompt: "Wait \${{ item }}"
`,
      'script.yaml': `conversations:
  - match: "^Wait (\\\\w)"
    turns:
      - tools: [{ name: bash, args: { command: "${barrier}" } }]
      - text: "waited"
`,
    });
    const { outcome, log } = await runSharing(dir, 2);
    expect(outcome.status).toBe('succeeded');
    expect(startedBeforeFirstDone(log).size).toBe(4);
  });

  it('a stuck agent is stopped by terminating its thread; the agent that shared it is retried as collateral and succeeds', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: collateral
provider: scripted
script: script.yaml
concurrency: 2
agents:
  breaker: { tools: [fault], extensions: ["${FAULTS}"] }
  ${WAITER}
tasks:
  - id: stuck
    agent: breaker
    prompt: "Get stuck"
    timeout: 1s
    on_failure: continue
  - id: patient
    agent: waiter
    prompt: "Be patient"
`,
      'script.yaml': `conversations:
  - match: "Get stuck"
    turns:
      - tools: [{ name: fault, args: { mode: stuck } }]
`,
    });
    const api = await startPatientApi(join(dir, 'runs'));
    try {
      const { log } = await runSharing(dir, 2, api.env);
      const failed = ofType(log, 'instance_failed').find((e) => e.key === 'stuck');
      expect(failed).toMatchObject({ failure: 'timeout', final: true });
      const retry = ofType(log, 'instance_retry').find((e) => e.key === 'patient');
      expect(retry?.failure).toBe('crashed');
      expect(retry?.error).toMatch(/stuck, which shared it, did not stop when aborted/);
      const done = ofType(log, 'instance_done').find((e) => e.key === 'patient');
      expect(done).toMatchObject({ attempt: 2, text: 'finished patiently' });
    } finally {
      await api.close();
    }
  }, 120_000);

  it('a crash of a shared thread is charged to nobody: both agents retry on threads of their own, where the crasher fails alone', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: shared-crash
provider: scripted
script: script.yaml
concurrency: 2
agents:
  breaker: { tools: [fault], extensions: ["${FAULTS}"] }
  ${WAITER}
tasks:
  - id: crasher
    agent: breaker
    prompt: "Crash every time"
    retries: { count: 0 }
    on_failure: continue
  - id: patient
    agent: waiter
    prompt: "Be patient"
    retries: { count: 0 }
`,
      'script.yaml': `conversations:
  - match: "Crash every time"
    turns:
      - tools: [{ name: fault, args: { mode: throw } }]
      - tools: [{ name: fault, args: { mode: throw } }]
      - tools: [{ name: fault, args: { mode: throw } }]
`,
    });
    const api = await startPatientApi(join(dir, 'runs'));
    const { outcome, log } = await runSharing(dir, 2, api.env).finally(() => api.close());
    // Both were on the one thread when it died: neither retry is charged, both move to threads of their own.
    const retries = ofType(log, 'instance_retry');
    expect(retries.map((e) => [e.key, e.failure, e.uncharged, e.isolated]).sort()).toEqual([
      ['crasher', 'crashed', true, true],
      ['patient', 'crashed', true, true],
    ]);
    expect(retries[0]!.error).toMatch(/also ran other agents/);
    // With `retries: { count: 0 }` the patient agent still finishes: the shared crash was not its retry.
    expect(ofType(log, 'instance_done').find((e) => e.key === 'patient')).toMatchObject({
      attempt: 2,
      text: 'finished patiently',
    });
    // Alone on its thread, the crasher's next crash is its own, and with no retries left it fails.
    expect(ofType(log, 'instance_failed').find((e) => e.key === 'crasher')).toMatchObject({
      attempt: 2,
      failure: 'crashed',
      final: true,
    });
    expect(outcome.status).toBe('failed'); // the crasher's own failure, after the patient agent finished
  });
});
