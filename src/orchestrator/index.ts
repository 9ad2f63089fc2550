// Public surface of the orchestrator: run or resume a recipe, the run store and its event log,
// and the pieces a host needs to embed the coordinator (pool sizing, failure policy, summary
// merge). The worker side (worker.ts, run-instance.ts) is loaded by the pool, not imported here.
export { runRecipeFile, runLoadedRecipe, resumeRunDir, defaultRunsDir, missingApiKey, type RunOptions, type ResumeOptions, type StartResult } from './run-recipe.js';
export { Coordinator, type CoordinatorOptions, type RunOutcome } from './coordinator.js';
export { ORCHESTRATOR_DEFAULTS } from './defaults.js';
export { RunStore, readRunLog, listRuns, resolveRunDir, newRunId, RUN_LOG, type RunListing, type ReadLog } from '../run/run-store.js';
export {
  RunEventSchema,
  RUN_EVENT_VERSION,
  FAILURE_CLASSES,
  zeroUsage,
  addUsageSummary,
  type RunEvent,
  type RunEventType,
  type RunEventInput,
  type FailureClass,
  type UsageSummary,
} from '../run/run-events.js';
export { FileRunLease, takeRunLease, readRunLease, liveLeaseHolder, leaseState, type RunLease, type LeaseHolder, type LeaseAcquire, type LeaseRenew } from '../run/run-lease.js';
export { replayRunLog, type ReplayState, type ReplayedInstance } from '../run/replay.js';
export { CONTROL_SOCKET_NAME, type ControlAction, type ControlReply, type RunControl } from '../run/run-control.js';
export { connectRunControl, type RunControlClientOptions } from '../run/run-control-client.js';
export { RunControlServer, parseControlRequest, type RunControlServerOptions } from './run-control-server.js';
export { controlSocketPath, CONTROL_PATH_NAME } from '../run/run-control-socket.js';
export { renderPlan, renderNeedsContext, type PlanInput, type PlanTask, type PlanInstance } from '../run/merge-summaries.js';
export { createWorkerPool, threadsNeeded, siblingWorker, workerExecArgv, type WorkerPoolOptions } from './pool.js';
export { backoffDelay, shouldRetry, classifyErrorText, describeThreadFailure, abortClass, type RetryPolicy } from './failure-policy.js';
export { Scheduler, type SchedulableInstance, type Admission } from './scheduler.js';
export { globsOverlap, scopesOverlap, absoluteGlob, writeGlobs } from './write-scopes.js';
export { MessageRouter, type Endpoint, type RouteResult } from './message-router.js';
export { PermitBroker, type PermitRequest, type PermitOutcome } from './permit-broker.js';
export { BudgetLedger, type BudgetLimits, type Spend } from './budget.js';
export { SlidingWindowLimiter } from './rate-limiter.js';
export { withPermits, PermitDenied, type PermitChannel, type PermitKind } from './worker/permitted-stream.js';
export { parseJsonOutput, extractJson, checkJsonSchema } from './output-json.js';
export { runCommand, type CommandResult } from './verify.js';
export { snapshot, diffSince, addWorktree, removeWorktree, type Snapshot } from './git-workspace.js';
export type { InstanceTask, AgentSpec, InstanceRole } from './instance-task.js';
export type { InstanceState, TaskState, RunStatus, ResultFile } from '../run/run-state.js';
export type { WorkerResult, WorkerMessage, CoordinatorMessage } from './protocol.js';
