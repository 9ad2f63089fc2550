// What every run in this process gets around the coordinator, whether new (start-run.ts) or
// resumed (resume-run.ts): the publish layer's part (its gate at the run's end, changesets.json
// after it), the Redis executor and lease of a distributed run, OpenTelemetry traces folded from
// the run's events, the cluster secret file in the run's redaction set, and a thrown error's text
// redacted with the run's secrets. The caller keeps what is its own: the signals that stop the run
// (a terminal's Ctrl-C), and what it shows of the store (a live view, --json lines, a web page).
import { resolve } from 'node:path';
import type { RunOutcome } from '../orchestrator/coordinator.js';
import type { RunOptions, StartResult } from '../orchestrator/run-recipe.js';
import { runPublishing } from '../publish/run-publishing.js';
import type { RecipeProblem } from '../recipe/index.js';
import type { RunStore } from '../run/run-store.js';
import { resolveOtelSettings } from '../telemetry/otel-settings.js';
import type { RunTracing } from '../telemetry/run-tracing.js';
import type { RedisRun, RedisRunSettings } from './redis-run.js';

export type { RedisRunAccess, RedisRunSettings } from './redis-run.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How a run executes in this process, beside what it runs. */
export interface RunExecution {
  /** Folder relative paths resolve against. */
  cwd: string;
  /** The environment the run sees (API keys, OTEL_*, ORCHESTRATE_*). */
  env: Env;
  /** First stop: every agent is asked to stop cleanly, sessions are kept (the run is `interrupted`). */
  signal?: AbortSignal;
  /** Second stop: the threads are terminated now. */
  killSignal?: AbortSignal;
  /** Also log streaming deltas of every agent in run.jsonl. */
  fullEvents?: boolean;
  /** Agents sharing one worker thread (default: spread over the CPU cores). */
  agentsPerThread?: number;
  /** A distributed run: the agents go to workers through this Redis. */
  redis?: RedisRunSettings;
  /** `--otel`: undefined when absent, '' for the default address; OTEL_EXPORTER_OTLP_* apply too. */
  otel?: string;
  /** The cluster secret's file (`--secret-file`): its content joins the run's redaction set. */
  secretFile?: string;
  /**
   * Called once the checks before a run passed (Redis answers, the trace address is good), right
   * before the run starts: a terminal installs its Ctrl-C handling here, so a Ctrl-C while Redis
   * is being reached still ends the process at once.
   */
  beforeStart?: () => void;
  /** Called with the run's store before its first event is written: subscribe to show the run. */
  onStore?: (store: RunStore) => void;
  /** A line for the user (Redis warnings, traces that cannot be sent, what a resume did with changed files). */
  onNotice?: (line: string) => void;
}

/**
 * Why a run did not start: `problems`, the recipe's (file:line:col); `usage`, a run that cannot
 * start as asked (no such run, an unwritable runs folder, a missing API key, a run already held);
 * `redis_unreachable`; `bad_otel_address` (`--otel` or an OTEL_* variable that is no http(s) URL).
 */
export type RunFailure =
  | { ok: false; code: 'problems'; problems: readonly RecipeProblem[] }
  | { ok: false; code: 'usage' | 'redis_unreachable' | 'bad_otel_address'; message: string };

/** A run that ran (to its end, or until it was interrupted: `outcome.status` says which), or why not. */
export type RunResult = { ok: true; outcome: RunOutcome } | RunFailure;

/** The run's environment: the secret file named as ORCHESTRATE_CLUSTER_SECRET_FILE names it, for run/secrets.ts. */
function runEnvOf(exec: RunExecution): Env {
  const file = exec.secretFile;
  if (file === undefined || file.trim() === '') return exec.env;
  return { ...exec.env, ORCHESTRATE_CLUSTER_SECRET_FILE: resolve(exec.cwd, file) };
}

/** Runs `start` (a new run or a resume, from the orchestrator) with everything `exec` asks for around it. */
export async function executeRun(
  start: (opts: RunOptions) => Promise<StartResult>,
  exec: RunExecution,
): Promise<RunResult> {
  const notice = (line: string): void => exec.onNotice?.(line);
  // --redis: the agents run on worker processes; Redis must answer before anything runs.
  let redisRun: RedisRun | undefined;
  if (exec.redis) {
    const opened = await (await import('./redis-run.js')).openRedisRun(exec.redis, notice);
    if (!opened.ok) return opened;
    redisRun = opened.run;
  }
  // Traces: a bad address is refused before anything runs.
  const otel = resolveOtelSettings(exec.otel, exec.env);
  if (!otel.ok) {
    await redisRun?.close();
    return { ok: false, code: 'bad_otel_address', message: otel.message };
  }
  const settings = otel.settings;
  const traceRun = settings ? (await import('../telemetry/run-tracing.js')).traceRun : undefined;
  let tracing: RunTracing | undefined;
  let redact = (s: string): string => s;
  let result: StartResult;
  try {
    exec.beforeStart?.();
    result = await start({
      ...runPublishing(),
      ...(redisRun?.options ?? {}),
      env: runEnvOf(exec),
      ...(exec.signal ? { signal: exec.signal } : {}),
      ...(exec.killSignal ? { killSignal: exec.killSignal } : {}),
      fullEvents: exec.fullEvents === true,
      traceparentOf: (key, attempt) => tracing?.traceparentOf(key, attempt),
      ...(exec.agentsPerThread !== undefined ? { agentsPerThread: exec.agentsPerThread } : {}),
      onStore: (store) => {
        redact = (s) => store.redactText(s);
        if (traceRun && settings) tracing = traceRun(store, settings, notice);
        exec.onStore?.(store);
      },
    });
  } catch (e) {
    // An internal error's message and stack reach a user (printed, or a tool's error): keep secrets out.
    if (e instanceof Error) {
      e.message = redact(e.message);
      if (e.stack) e.stack = redact(e.stack);
    }
    throw e;
  } finally {
    await tracing?.finish();
    await redisRun?.close();
  }
  if (result.ok) return result;
  if (result.kind === 'recipe') return { ok: false, code: 'problems', problems: result.problems };
  return { ok: false, code: 'usage', message: result.message };
}
