// Tunable numbers of the run record: where run folders live and when a run's lease is stale.
// The orchestrator's own numbers (orchestrator/defaults.ts) include these, so both layers read
// one value; the run layer cannot import the orchestrator's file (it sits above it).

export const RUN_DEFAULTS = {
  /**
   * Folder (under the current working folder, unless --run-dir) that holds `runs/<run-id>/`. Not
   * beside the recipe: a recipe of an installed package would write into the package.
   */
  stateDirName: '.orchestrate',
  runsDirName: 'runs',
  /**
   * A run's lease (run-lease.ts) is stale, and another coordinator may take the run over, when its
   * heartbeat is this old: six missed heartbeats, far beyond a busy event loop's stall, short
   * enough that a run whose machine died can be resumed elsewhere within a minute. (On the
   * holder's own host a lease whose process is gone is stale at once.)
   */
  leaseStaleMs: 30_000,
  /** How often the coordinator renews its lease (and checks it still holds it). */
  leaseHeartbeatMs: 5_000,
} as const;
