// What a run is started with (CoordinatorOptions) and what it ends with (RunOutcome).
import type { Piscina } from 'piscina';
import type { LoadedRecipe } from '../recipe/index.js';
import type { RunControl } from '../run/run-control.js';
import type { RunState } from '../run/run-fold.js';
import type { RunEventInput, UsageSummary } from '../run/run-events.js';
import type { RunStatus, TaskState } from '../run/run-state.js';
import type { RunStore } from '../run/run-store.js';
import type { InputsUsed } from '../run/trusted-recipe.js';
import type { EndGate } from './control/approval-gates.js';
import type { ExternalExecutor } from './execution/instance-executor.js';

/** What a gate at the run's end (endGate) is built from. */
export interface EndGateRun {
  runId: string;
  runDir: string;
  recipe: LoadedRecipe;
  env: Readonly<Record<string, string | undefined>>;
  replay?: RunState;
  record(e: RunEventInput): void;
  /** The gate was answered or its work finished: the run may end now. */
  advance(): void;
}

export interface CoordinatorOptions {
  recipe: LoadedRecipe;
  /**
   * The gate that holds the run's end, if the recipe has one (the layer that composes a run passes
   * the publish gate's, publish/publish-gate.ts: the core knows only the EndGate shape).
   */
  endGate?: (run: EndGateRun) => EndGate | undefined;
  store: RunStore;
  /** Resuming: the fold of the run's log (run/run-fold.ts). */
  replay?: RunState;
  /** Command-line overrides, recorded in run_start so a resume runs the same way. */
  overrides?: Record<string, unknown>;
  /** Forward streaming deltas (message_update...) into run.jsonl; off by default (they are large). */
  fullEvents?: boolean;
  /** Rate-limit window (default 60 s: `rate_limit` is per minute); tests scale it down. */
  rateWindowMs?: number;
  /** A pool to run on (kept open afterwards); default: a pool sized for this recipe, closed at the end. */
  pool?: Piscina;
  /**
   * Run agents on this executor instead of local worker threads (distributed runs: `--redis`);
   * kept open afterwards. `run:` tasks still run here.
   */
  executor?: ExternalExecutor;
  /**
   * Agents sharing one worker thread (default: the agents that may run at once spread over one
   * thread per CPU core but one, see defaultAgentsPerThread; 1 isolates every agent on its own thread).
   */
  agentsPerThread?: number;
  /** Worker heap limits (default ORCHESTRATOR_DEFAULTS.workerResourceLimits). */
  resourceLimits?: { maxOldGenerationSizeMb?: number; maxYoungGenerationSizeMb?: number };
  /** Environment for expressions, keys and base URL (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting it interrupts the run (Ctrl-C): abort messages, then threads terminated after a grace period. */
  signal?: AbortSignal;
  /** Aborting it terminates every worker thread at once (a second Ctrl-C). */
  killSignal?: AbortSignal;
  /**
   * Listen on the run's control socket (`<run>/control.sock`, owner-only) so `orchestrate watch`,
   * `cancel` and `steer` can drive the run from another process (default true). Start the
   * coordinator only while holding the run's lease: a socket file left there is removed as stale.
   */
  controlSocket?: boolean;
  /** Called once the run starts with this run's in-process control (the run's own live view sends through it). */
  onControl?: (control: RunControl) => void;
  /**
   * Resume only: cancelled instances to run again (`orchestrate resume --retry KEY`); a resume
   * keeps every other cancelled instance cancelled. Each key is logged as a `control` retry.
   */
  retry?: readonly string[];
  /** Who asked for `retry` (the control events' `by`). */
  retryBy?: string;
  /** Resume only: where the recipe and its files came from (captured at the start, or reloaded), for run_resume. */
  inputs?: InputsUsed;
  /**
   * Tracing on (telemetry/): the W3C traceparent an attempt's agent runs under, handed to its
   * thread or worker in InstanceTask.traceparent so a span made there joins the run's trace.
   */
  traceparentOf?: (key: string, attempt: number) => string | undefined;
}

export interface RunOutcome {
  status: RunStatus;
  runId: string;
  dir: string;
  usage: UsageSummary;
  durationMs: number;
  planFile: string;
  resultFile: string;
  tasks: TaskState[];
  /** Why the run stopped on its own files (a log or result that could not be written). */
  error?: string;
  /** Another coordinator took the run over: it is running there, so this one must not suggest a resume. */
  leaseLost?: boolean;
}
