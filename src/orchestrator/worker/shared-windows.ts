// Context windows learned from a server, shared across a run's threads. Learned windows live per
// process (ai/learned-windows.ts), and a run's agents live in several worker threads: what one
// agent's server stated in an overflow error goes to the coordinator (which records it in
// run.jsonl and passes it to the other threads), and what the others learned comes back in. A
// session already running on that model switches to the smaller window at once, so its next
// compaction threshold already fits; sessions started later begin with it.
import { onWindowLearned, rememberContextWindow, windowIsFor, type LearnedWindow } from '../../ai/learned-windows.js';
import type { AgentSession } from '../../runtime/agent-session.js';
import type { WorkerLink } from './worker-link.js';

/** Posts what this thread learns to the coordinator until the returned function is called. */
export function reportLearnedWindows(link: WorkerLink): () => void {
  return onWindowLearned((learned) => link.post({ type: 'window_learned', learned }));
}

/** A window another agent of the run learned: this thread knows it from now on, and `session` uses it if it is about its model. */
export function applyLearnedWindow(session: AgentSession, w: LearnedWindow): void {
  rememberContextWindow(w);
  const model = session.agent.state.model;
  if (windowIsFor(w, model) && w.window < model.contextWindow)
    session.agent.setModel({ ...model, contextWindow: w.window });
}
