// The piscina worker module: its default export runs one instance attempt on this thread.
// Kept tiny so the thread's import graph is only what an agent needs (the Anthropic SDK itself
// is loaded on the first real model call, never at thread start).
import type { InstanceTask } from '../execution/instance-task.js';
import type { WorkerResult } from '../protocol.js';
import { runInstance } from './run-instance.js';

export default function handle(task: InstanceTask): Promise<WorkerResult> {
  return runInstance(task);
}
