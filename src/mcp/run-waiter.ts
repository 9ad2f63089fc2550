// Waits for a run this server launched to end, reading its log as it grows and sending MCP
// progress notifications: one when an instance starts or finishes, and at least one every
// `progressMs` in between, so a client that resets its request timeout on progress (Claude
// Code, the SDK's resetTimeoutOnProgress) keeps waiting however long the run takes. The wait ends
// at the run's run_end, when its process exits without one (a crash: the log says how far it
// got), or when the client cancels the request (the run goes on; run_status / run_events follow it).
import { applyEvent, countStatuses, createRunState, instancesInTaskOrder, type RunState } from '../run/run-fold.js';
import { MCP_SERVER_DEFAULTS } from '../service/mcp-server-defaults.js';
import type { LaunchedRun } from '../service/run-launcher.js';
import { readEventsPage } from '../service/run-events-page.js';
import type { ToolCall } from './tool-table.js';

export type WaitEnd = 'ended' | 'process_exited' | 'cancelled';

/** Sends progress for one request; a no-op when the client asked for none (no progress token). */
export class ProgressSender {
  private count = 0;
  private lastSent = 0;
  constructor(private readonly call: ToolCall) {}

  send(message: string): void {
    const token = this.call._meta?.progressToken;
    if (token === undefined) return;
    this.count++;
    this.lastSent = Date.now();
    // progress must grow with every notification (MCP spec); the run's own numbers are in the message.
    this.call
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: this.count, message },
      })
      .catch(() => {
        // The client went away: the wait notices through the request's abort signal.
      });
  }

  /** A notification when none went out for `everyMs` (a heartbeat while nothing happens). */
  heartbeat(everyMs: number, message: () => string): void {
    if (this.lastSent === 0 || Date.now() - this.lastSent >= everyMs) this.send(message());
  }
}

/** "2/3 instances finished (1 cancelled); running: slow" */
export function progressText(state: RunState): string {
  if (!state.runId) return 'the run is starting';
  const c = countStatuses(state);
  const finished = c.done + c.failed + c.cancelled + c.notPicked + c.skipped;
  const notes = [
    c.failed && `${c.failed} failed`,
    c.cancelled && `${c.cancelled} cancelled`,
    c.notPicked && `${c.notPicked} not picked`,
    c.skipped && `${c.skipped} skipped`,
  ]
    .filter(Boolean)
    .join(', ');
  const inOrder = instancesInTaskOrder(state);
  // An instance at its approval gate waits on a person, not a permit: said apart, with what answers it.
  const atGate = (i: (typeof inOrder)[number]) => i.status === 'waiting' && i.approval?.state === 'waiting';
  const running = inOrder
    .filter((i) => (i.status === 'running' || i.status === 'waiting' || i.status === 'retrying') && !atGate(i))
    .map((i) => i.label);
  const gated = inOrder.filter(atGate).map((i) => i.label);
  const total = c.unexpandedTasks ? `${c.total}+` : String(c.total);
  return `run ${state.runId}: ${finished}/${total} instances finished${notes ? ` (${notes})` : ''}${listed('running', running)}${gated.length ? `${listed('waiting for approval', gated)} (the approve or reject tool answers)` : ''}`;
}

/** "; running: a, b, c +2" (at most five named), or nothing when there are none. */
function listed(what: string, labels: readonly string[]): string {
  if (labels.length === 0) return '';
  return `; ${what}: ${labels.slice(0, 5).join(', ')}${labels.length > 5 ? ` +${labels.length - 5}` : ''}`;
}

const MILESTONES = new Set([
  'instance_start',
  'instance_done',
  'instance_failed',
  'instance_skipped',
  'task_expanded',
  'budget_exhausted',
  'approval_requested',
  'approval_given',
]);

/**
 * Follows `run` until it ends. `sinceTs`: when this session of the run was launched (a resumed
 * run's log already holds the run_end of the session it continues, written before then).
 */
export async function waitForRun(
  run: LaunchedRun,
  sinceTs: number,
  progress: ProgressSender,
  progressMs: number,
  signal: AbortSignal,
): Promise<WaitEnd> {
  const state = createRunState();
  let cursor = 0;
  let sawEnd = false;
  const readNew = (): boolean => {
    let milestone = false;
    for (;;) {
      const page = readEventsPage(run.runDir, cursor, { limit: 10_000, maxBytes: 8 << 20 });
      for (const e of page.events) {
        applyEvent(state, e);
        if (e.ts < sinceTs) continue;
        if (e.type === 'run_end') sawEnd = true;
        else if (MILESTONES.has(e.type)) milestone = true;
      }
      cursor = page.next;
      if (!page.more) break;
    }
    // The session's own run_end, not every instance being done: the run ends after its last
    // instance (plan.md, result.json, then run_end). The fold says whether the last session
    // (run_start, or the run_resume a resume wrote before it was launched) has ended; the
    // timestamp keeps an earlier session's run_end from counting within the same millisecond.
    const ended = sawEnd && state.status !== 'running';
    if (milestone && !ended) progress.send(progressText(state));
    return ended;
  };
  for (;;) {
    if (readNew()) return 'ended';
    if (run.hasExited()) return readNew() ? 'ended' : 'process_exited';
    if (signal.aborted) return 'cancelled';
    progress.heartbeat(progressMs, () => progressText(state));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, MCP_SERVER_DEFAULTS.pollMs);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
