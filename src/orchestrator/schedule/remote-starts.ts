// Distributed runs: an instance's instance_start names the worker process that took it, so the
// event waits until a worker does (or until the attempt ends without one: then it is logged as
// it is). Later agents of the instance (a pair's other member, or a takeover after a worker
// died) are instance_worker events.
import type { RunEventInput } from '../../run/run-events.js';

export type StartEvent = Extract<RunEventInput, { type: 'instance_start' }>;

export class RemoteStarts {
  private readonly pending = new Map<string, StartEvent>();
  /** The worker each agent (key#attempt) runs on, to tell a takeover from a first start. */
  private readonly agentWorkers = new Map<string, string>();

  constructor(private readonly log: (e: RunEventInput) => void) {}

  /** The attempt's start, logged once a worker takes it. */
  defer(start: StartEvent): void {
    this.pending.set(start.key, start);
  }

  /** A worker process took agent `agent` of the instance whose start is `start`'s key. */
  workerTook(ref: { task: string; key: string; attempt: number }, agent: string, worker: string): void {
    const previous = this.agentWorkers.get(`${agent}#${ref.attempt}`);
    this.agentWorkers.set(`${agent}#${ref.attempt}`, worker);
    const start = this.pending.get(ref.key);
    if (start) {
      this.pending.delete(ref.key);
      this.log({ ...start, worker });
      return;
    }
    this.log({
      type: 'instance_worker',
      task: ref.task,
      key: ref.key,
      attempt: ref.attempt,
      parent: ref.task,
      agent,
      worker,
      ...(previous !== undefined ? { takeover: true } : {}),
    });
  }

  /** The attempt ended: a start no worker ever took (the run stopped while it was queued) is logged all the same. */
  settle(key: string): void {
    const start = this.pending.get(key);
    if (!start) return;
    this.pending.delete(key);
    this.log(start);
  }
}
