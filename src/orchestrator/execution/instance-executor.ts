// Where instance attempts run. The default is the local worker-thread pool (piscina, pool.ts);
// a distributed backend (src/cluster, BullMQ on Redis) implements the same call for workers on
// other machines. The contract is piscina's: the task crosses with its MessagePorts in the
// transfer list, the coordinator talks to the agent over `task.port` (protocol.ts) whatever
// carries the messages, and the promise resolves with the worker's result (validated by the
// caller) or rejects when the agent's host died.
import type { MessagePort } from 'node:worker_threads';
import type { InstanceTask } from './instance-task.js';

export interface InstanceExecutor {
  run(task: InstanceTask, options: { transferList: MessagePort[]; signal?: AbortSignal }): Promise<unknown>;
  /**
   * Executors whose agents share threads (the local pool, thread-pool-executor.ts): ends thread
   * `threadId` (a hard abort of one of its agents; the pool replaces it). False when there is none.
   */
  terminateThread?(threadId: number): boolean;
}

/** An executor the caller owns and hands to the coordinator (it is not closed by the run). */
export interface ExternalExecutor extends InstanceExecutor {
  /** Shown in events and messages: where the agents run (e.g. "redis://host:6379"). */
  readonly description: string;
}
