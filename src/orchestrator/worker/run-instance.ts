// One attempt of one task instance, inside a worker thread (a plain module, so tests can run it
// in-process too): a solo agent runs its prompt, checks its work and summarizes; a pair member
// runs the pair protocol (pair.ts). Every outcome is a WorkerResult: errors lose their class
// across threads, so failures travel as data.
import { AgentHost, checkWork, failedResult, succeededResult } from './agent-host.js';
import type { InstanceTask } from '../execution/instance-task.js';
import { runPairMember } from './pair.js';
import type { WorkerResult } from '../protocol.js';
import { WorkerLink } from './worker-link.js';
import { threadId } from 'node:worker_threads';
import { rememberContextWindow } from '../../ai/learned-windows.js';

/** A solo agent: prompt (or continue), SubagentStop hooks, check the work, summarize. */
async function runSolo(host: AgentHost): Promise<WorkerResult> {
  const first = await host.start();
  if (!first.ok) return failedResult(host, first);
  const stopped = await host.subagentStop();
  if (!stopped.ok) return failedResult(host, stopped);
  const checked = await checkWork(host);
  if (!checked.ok) return failedResult(host, checked);
  return succeededResult(host, checked.verifyAttempts);
}

/** Entry point of a worker task: one attempt of one instance (or one pair member). */
export async function runInstance(task: InstanceTask): Promise<WorkerResult> {
  const link = new WorkerLink(task.port);
  // Which thread runs this agent: the coordinator terminates exactly this one if the agent
  // ignores an abort (threads may be shared, so piscina's per-task abort is not used then).
  link.post({ type: 'hello', threadId });
  // Windows the run's other agents learned (ai/learned-windows.ts): this session starts with them.
  for (const w of task.learnedWindows ?? []) rememberContextWindow(w);
  const opened = await AgentHost.open(task, link);
  if (!('session' in opened)) {
    task.peerPort?.close();
    link.close();
    return failedResult(undefined, { failure: 'error', error: opened.error });
  }
  const host = opened;
  host.attach();
  try {
    if (task.role === 'solo') return await runSolo(host);
    return await runPairMember(host);
  } catch (err) {
    // A bug here must still come back as data: the coordinator classifies and maybe retries.
    return failedResult(host, {
      failure: 'error',
      error: `worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    });
  } finally {
    await host.close();
    link.close();
  }
}
