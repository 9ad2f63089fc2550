// Worker faults: an agent whose tool hangs (a shell command past the task timeout, and a tool
// that ignores the abort so only terminating its thread ends it), and workers that throw, call
// process.exit or run out of memory. The coordinator survives every one, retries per policy,
// the killed command's process group is gone, and result.json says what each attempt died of.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerPool } from '../../src/orchestrator/execution/pool.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { ResultFile } from '../../src/run/run-state.js';
import { interruptedCallText } from '../../src/runtime/session-resume.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { childModule } from '../helpers/cli-entry.js';
import { printSummary } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

const EXT = join(import.meta.dirname, 'fixtures', 'fault-extension.ts');
/**
 * The worker thread's entry: built (dist/) when current, else the sources (see cli-entry.ts). This
 * run starts a dozen threads (five up front, one after each crash, one after each terminated
 * hang), and a thread of the sources loads each module through tsx's loader, twice the CPU.
 */
const WORKER = pathToFileURL(childModule('orchestrator/worker/worker-entry.cts')).href;

describe('worker faults (real threads, scripted model)', { timeout: 240_000 }, () => {
  it('hung tools, throws, exits and out-of-memory: the run survives, retries per policy, and result.json names each attempt failure', async () => {
    const sleep = `400.${process.pid}${Date.now() % 1000}`;
    const sleeping = () =>
      spawnSync('pgrep', ['-f', `sleep ${sleep}`])
        .stdout.toString()
        .trim() !== '';
    // A task's timeout counts from its launch, thread start included, and a loaded machine took
    // 40 s to start five threads at once: with 8 s, both attempts timed out before the hung tool
    // ever ran. So the hung tasks start after the crashing ones, on threads the pool already
    // started (five threads for two agents): their timeout only has to cover an agent's start on
    // a warm thread and one scripted reply, about 2 s with a load average of 37 here. It is the
    // time the test waits for the hang, once. Load spikes have stretched such a start past 10 s,
    // so a hung task may retry more than once: an attempt that timed out while starting or while
    // finishing the turn after the hang is absorbed, and the checks below tell it from the attempt
    // that hung (on a machine with room there is none).
    const HANG_TIMEOUT_S = 8;
    const dir = tempProject({
      'recipe.yaml': `name: worker-faults
provider: scripted
script: script.yaml
concurrency: 5
agents:
  breaker: { tools: [bash, fault], extensions: ["${EXT}"] }
tasks:
  - id: crash
    for_each: [throw, exit, oom]
    agent: breaker
    prompt: "Break by \${{ item }}"
    retries: { count: 1, on: [crashed], backoff: { initial: 10ms } }
  - id: hang
    needs: [crash]
    for_each: [stuck, shell]
    agent: breaker
    prompt: "Break by \${{ item }}"
    timeout: ${HANG_TIMEOUT_S}s
    retries: { count: 3, on: [timeout], backoff: { initial: 10ms } }
`,
      'script.yaml': `conversations:
  - match: "Break by shell"
    turns:
      - tools: [{ name: bash, args: { command: "echo $$ > shell.pid; sleep ${sleep}; echo late > late.txt" } }]
      - text: "Recovered after shell."
  - match: "Break by (\\\\w+)"
    turns:
      - tools: [{ name: fault, args: { mode: "{{match.1}}" } }]
      - text: "Recovered after {{match.1}}."
`,
    });
    const t0 = Date.now();
    // The pool the run would make itself (a thread per agent, all five started up front, these
    // heap limits), on the built worker.
    const resourceLimits = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16 };
    const pool = createWorkerPool({ concurrency: 5, agentsPerThread: 1, resourceLimits, filename: WORKER });
    try {
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        { runsDir: join(dir, 'runs'), agentsPerThread: 1, resourceLimits, pool },
      );
      if (!r.ok) throw new Error(JSON.stringify(r));
      const out = r.outcome;
      expect(out.status, readFileSync(out.resultFile, 'utf8')).toBe('succeeded');
      // The shell command ran, and its whole group is gone now; it never finished.
      // (In the sandbox `$$` is a pid of the command's own PID namespace, so the host-side check is pgrep.)
      expect(readFileSync(join(dir, 'shell.pid'), 'utf8').trim()).not.toBe('');
      expect(sleeping()).toBe(false);
      expect(() => readFileSync(join(dir, 'late.txt'))).toThrow();

      const log = events(out.dir);
      const result = JSON.parse(readFileSync(out.resultFile, 'utf8')) as ResultFile;
      const byId = Object.fromEntries(result.instances.map((i) => [i.id.replace(/^(crash|hang)\./, ''), i]));
      const classes = Object.fromEntries(
        Object.entries(byId).map(([k, i]) => [
          k,
          [i.status, i.attempts, (i.attemptFailures ?? []).map((a) => `${a.attempt}:${a.failure}`)],
        ]),
      );
      expect({ throw: classes.throw, exit: classes.exit, oom: classes.oom }).toEqual({
        throw: ['done', 2, ['1:crashed']],
        exit: ['done', 2, ['1:crashed']],
        oom: ['done', 2, ['1:crashed']],
      });
      expect(byId.oom!.attemptFailures![0]!.error).toMatch(/memory/);
      expect(byId.exit!.attemptFailures![0]!.error).toMatch(/exited/);
      expect(byId.throw!.attemptFailures![0]!.error).toMatch(/boom from the fault tool/);

      const agentEvents = ofType(log, 'agent_event');
      for (const item of ['stuck', 'shell']) {
        const key = `hang.${item}`;
        const inst = byId[item]!;
        // Every attempt but the last timed out (on a machine with room: ['done', 2, ['1:timeout']]).
        const failed = Array.from({ length: inst.attempts - 1 }, (_, i) => `${i + 1}:timeout`);
        expect(classes[item], key).toEqual(['done', inst.attempts, failed]);
        for (const f of inst.attemptFailures ?? []) expect(f.error, key).toMatch(/timeout/);
        // Exactly one attempt hung in its tool: the call ran (it was not answered as interrupted)
        // until the timeout stopped it. The attempts after it finished the turn without running
        // the call again.
        const mine = agentEvents.filter((e) => e.key === key);
        const answeredAsInterrupted = new Set(
          mine
            .filter(
              (e) =>
                e.event.type === 'tool_execution_end' &&
                JSON.stringify(e.event.result).includes(interruptedCallText(String(e.event.toolName))),
            )
            .map((e) => `${e.attempt}:${String(e.event.toolCallId)}`),
        );
        const hung = mine
          .filter((e) => e.event.type === 'tool_execution_start')
          .filter((e) => !answeredAsInterrupted.has(`${e.attempt}:${String(e.event.toolCallId)}`))
          .map((e) => e.attempt);
        expect(hung, `${key}: the attempts that ran the hanging call`).toHaveLength(1);
        expect(hung[0]!, key).toBeLessThan(inst.attempts);
        // Its timeout, counted from the launch (after instance_start), did not fire early.
        const start = ofType(log, 'instance_start').find((e) => e.key === key && e.attempt === hung[0])!;
        const retry = ofType(log, 'instance_retry').find((e) => e.key === key && e.attempt === hung[0])!;
        expect(retry.ts - start.ts, key).toBeGreaterThanOrEqual(HANG_TIMEOUT_S * 1000);
      }

      printSummary('worker-faults', {
        faults_injected: 5,
        thread_deaths: ofType(log, 'instance_retry').filter((e) => e.failure === 'crashed').length,
        timeouts: ofType(log, 'instance_retry').filter((e) => e.failure === 'timeout').length,
        retries: ofType(log, 'instance_retry').length,
        tasks_completed: ofType(log, 'instance_done').length,
        orphan_processes: sleeping() ? 1 : 0,
        coordinator_survived: 1,
        ms: Date.now() - t0,
      });
    } finally {
      await pool.destroy();
      spawnSync('pkill', ['-f', `sleep ${sleep}`]);
    }
  });
});

describe('attempt failures across a resume', { timeout: 120_000 }, () => {
  it('are rebuilt from the log (instance_retry, instance_failed), one per attempt', async () => {
    const { foldEvents, getInstance } = await import('../../src/run/run-fold.js');
    const base = { v: 1 as const, ts: 0, runId: 'r' };
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
    const s = foldEvents([
      { ...base, type: 'run_start', recipe: '/r.yaml', name: 'n', recipeHash: 'h', inputs: {}, plan: [] },
      { ...base, type: 'instance_start', task: 't', key: 't', attempt: 1 },
      {
        ...base,
        type: 'instance_retry',
        task: 't',
        key: 't',
        attempt: 1,
        failure: 'crashed',
        error: 'worker thread exited',
        delayMs: 1,
      },
      { ...base, type: 'instance_start', task: 't', key: 't', attempt: 2 },
      {
        ...base,
        type: 'instance_failed',
        task: 't',
        key: 't',
        attempt: 2,
        failure: 'timeout',
        error: 'timeout: 3s',
        final: true,
        usage,
        durationMs: 1,
      },
    ]);
    expect(getInstance(s, 't', 't')!.attemptFailures).toEqual([
      { attempt: 1, failure: 'crashed', error: 'worker thread exited' },
      { attempt: 2, failure: 'timeout', error: 'timeout: 3s' },
    ]);
  });
});
