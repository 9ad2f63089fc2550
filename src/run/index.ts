// orchestrate-agents/run: the run record without the machinery that makes it. A run folder holds
// run.jsonl (one event per line, each valid against RunEventSchema), result.json, plan.md and the
// agents' sessions; this entry reads and follows them: the event schema and its types, the store
// that lists and reads runs, the fold every view uses to turn events into the state of a run, the
// lease that says whether a run is live, and the client that steers or cancels a live run.
//
//   import { readRunLog, foldEvents } from 'orchestrate-agents/run';
//   const { events } = readRunLog('.orchestrate/runs/<run-id>/run.jsonl');
//   console.log(foldEvents(events).status);
export {
  RunEventSchema,
  RUN_EVENT_VERSION,
  FAILURE_CLASSES,
  FailureClassSchema,
  UsageSummarySchema,
  zeroUsage,
  addUsageSummary,
  type RunEvent,
  type RunEventType,
  type RunEventInput,
  type FailureClass,
  type UsageSummary,
} from './run-events.js';
export {
  RunStore,
  readRunLog,
  listRuns,
  resolveRunDir,
  newRunId,
  RUN_LOG,
  type RunListing,
  type ReadLog,
} from './run-store.js';
export { createRunState, applyEvent, foldEvents, type RunState } from './run-fold.js';
export { readRunLease, liveLeaseHolder, leaseState, type LeaseHolder } from './run-lease.js';
export { connectRunControl, type RunControlClientOptions } from './run-control-client.js';
export { CONTROL_SOCKET_NAME, type ControlAction, type ControlReply, type RunControl } from './run-control.js';
export { RUN_DEFAULTS } from './defaults.js';
export type { ResultFile } from './run-state.js';
