// Where a user's actions on the live run arrive (the control socket for `orchestrate watch`,
// `cancel`, `steer`, and the run's own live view in-process) and are carried out: each action is
// decided by control-decisions.ts, logged as a `control` event (accepted or refused) before its
// effects, then done through the run's hands (RunHands). `peek` is a read: nothing is logged.
// Also the cancel bookkeeping of running instances: who asked, each `run:` step's own stop switch,
// and the cancels whose reply waits for the attempt's end, so that once `cancel` has answered,
// `show` and `run_status` read the instance as ended (cancelled), never as still running.
import { CONTROL_REPLY_TIMEOUT_MS } from '../../run/run-control-client.js';
import type { ApprovalAnswer, ControlAction, ControlReply, RunControl } from '../../run/run-control.js';
import type { RunEventInput } from '../../run/run-events.js';
import type { InstanceState, TaskState } from '../../run/run-state.js';
import type { AgentLaunch } from '../execution/agent-launch.js';
import {
  controlTarget,
  decideControl,
  endedRunError,
  type ControlEffect,
  type StopReason,
} from './control-decisions.js';
import type { MessageRouter } from './message-router.js';
import { RunControlServer } from './run-control-server.js';

/** What the desk reads of the run, and what it asks the coordinator to do. */
export interface RunHands {
  runId: string;
  runDir: string;
  instances: ReadonlyMap<string, InstanceState>;
  tasks: ReadonlyMap<string, TaskState>;
  launches: ReadonlyMap<string, AgentLaunch[]>;
  router: MessageRouter;
  stopping(): StopReason | undefined;
  /** The run has ended (or is ending): actions are refused. */
  ended(): boolean;
  record(e: RunEventInput): void;
  interrupt(): void;
  /** Runs a failed or cancelled instance again (its control retry is logged already). */
  retry(inst: InstanceState, t: TaskState): void;
  /** Ends an instance that is not running as cancelled. */
  cancelWaiting(inst: InstanceState, t: TaskState, by: string): void;
  /** Answers an approval gate (approval-gates.ts logs an accepted answer itself); absent: the run has no gates. */
  answerApproval?(a: ApprovalAnswer, by: string): ControlReply;
}

/**
 * How long a cancel's reply waits for the attempt to end: an agent stops within the abort grace
 * (its thread is terminated after it), so this only bounds a stuck executor; it stays below the
 * client's reply timeout, so the client always gets an answer.
 */
const CANCEL_REPLY_WAIT_MS = CONTROL_REPLY_TIMEOUT_MS - 2_000;

export class ControlDesk {
  /** Running instances a user cancelled, and by whom: their attempt ends `cancelled`, never retried. */
  private readonly cancelRequests = new Map<string, string>();
  /** The running `run:` steps' own stop switches (a cancel ends that step alone). */
  private readonly shellCancels = new Map<string, AbortController>();
  /** Cancel replies waiting for the attempt of an instance to end (attemptEnded). */
  private readonly endWaiters = new Map<string, (() => void)[]>();
  private server: RunControlServer | undefined;
  /** This run's control in-process (what the control socket carries for other processes). */
  readonly runControl: RunControl = {
    send: async (a) => {
      try {
        return await this.handle(a);
      } catch (err) {
        return {
          ok: false,
          error: `the coordinator could not carry out ${a.action}: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
    },
  };

  constructor(private readonly run: RunHands) {}

  /** Listens on the control socket; a run whose socket cannot be made goes on without it (the log says why). */
  async listen(): Promise<void> {
    try {
      this.server = await RunControlServer.start({ runDir: this.run.runDir, handle: (a) => this.handle(a) });
    } catch (err) {
      this.run.record({
        type: 'agent_event',
        task: '*',
        key: '*',
        attempt: 1,
        event: { type: 'control_unavailable', error: err instanceof Error ? err.message : String(err) },
      });
    }
  }

  close(): Promise<void> {
    for (const id of [...this.endWaiters.keys()]) this.attemptEnded(id);
    return this.server?.close().catch(() => undefined) ?? Promise.resolve();
  }

  /** Carries out one action on the live run (a cancel of a running instance answers once its attempt has ended). */
  handle(a: ControlAction): ControlReply | Promise<ControlReply> {
    if (a.action === 'peek') return this.peek(a.instance);
    const by = a.by?.trim() || 'unknown';
    if (this.run.ended()) return { ok: false, error: endedRunError(this.run.runId, a) };
    if (a.action === 'approve' || a.action === 'reject') return this.answerApproval(a, by);
    const d = decideControl(this.view(), a, by);
    const target = a.action !== 'cancel_run' ? { instance: a.instance } : {};
    this.run.record({
      type: 'control',
      action: a.action,
      ...target,
      by,
      ...(a.action === 'steer' ? { text: a.text } : {}),
      ok: d.ok,
      message: d.ok ? d.message : d.error,
    });
    if (!d.ok) return { ok: false, error: d.error };
    const ended = d.effect.kind === 'cancel_running' ? this.untilAttemptEnds(d.effect.id) : undefined;
    this.carryOut(d.effect);
    if (ended && d.effect.kind === 'cancel_running') return this.cancelReply(d.effect.id, d.message, ended);
    return { ok: true, message: d.message };
  }

  /** The attempt of instance `id` has ended and its end is logged: cancels waiting on it answer now. */
  attemptEnded(id: string): void {
    const waiters = this.endWaiters.get(id) ?? [];
    this.endWaiters.delete(id);
    for (const w of waiters) w();
  }

  /** Resolves true when the attempt of `id` ends, false if it has not within CANCEL_REPLY_WAIT_MS. */
  private untilAttemptEnds(id: string): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), CANCEL_REPLY_WAIT_MS);
      const list = this.endWaiters.get(id) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
      this.endWaiters.set(id, list);
    });
  }

  /** The reply to a cancel of a running instance: how its attempt ended (the decision's words if it has not yet). */
  private async cancelReply(id: string, decided: string, ended: Promise<boolean>): Promise<ControlReply> {
    if (!(await ended)) return { ok: true, message: `${decided} (it has not stopped yet)` };
    const inst = this.run.instances.get(id);
    const isRun = inst && this.run.tasks.get(inst.task)?.task.kind === 'run';
    if (inst?.status === 'cancelled')
      return {
        ok: true,
        message: isRun
          ? `cancelled ${id}: its command was stopped; the run goes on`
          : `cancelled ${id}: its agent stopped with its session kept; the run goes on`,
      };
    return { ok: true, message: `${id} ended ${inst?.status ?? 'already'} before the cancel reached it` };
  }

  /** An approval answer: the gates log an accepted one (approval_given); a refused one is logged here like any action. */
  private answerApproval(a: ApprovalAnswer, by: string): ControlReply {
    const reply = this.run.answerApproval?.(a, by) ?? {
      ok: false,
      error: `run ${this.run.runId} has no approval gates (no task has approve:)`,
    };
    if (!reply.ok)
      this.run.record({
        type: 'control',
        action: a.action,
        instance: a.instance ?? a.task,
        by,
        ok: false,
        message: reply.error,
      });
    return reply;
  }

  /** Who asked to cancel a running instance (its attempt then ends cancelled), if someone did. */
  cancelledBy(id: string): string | undefined {
    return this.cancelRequests.get(id);
  }

  /** The attempt ended: a cancel request is used up (or came too late). */
  forget(id: string): void {
    this.cancelRequests.delete(id);
    this.shellCancels.delete(id);
  }

  /** An agent of the instance started: one cancelled before it was running is stopped now that it can hear. */
  started(id: string): void {
    const by = this.cancelRequests.get(id);
    if (by !== undefined) this.abortLaunches(id, by);
  }

  /** A `run:` step's signal: the run's (interrupt) or its own (cancel); already aborted when cancelled before it began. */
  shellSignal(inst: InstanceState, runSignal: AbortSignal): AbortSignal {
    const own = new AbortController();
    this.shellCancels.set(inst.id, own);
    if (this.cancelRequests.has(inst.id)) own.abort();
    return AbortSignal.any([runSignal, own.signal]);
  }

  private view() {
    const run = this.run;
    return {
      runId: run.runId,
      stopping: run.stopping(),
      instances: run.instances,
      tasks: run.tasks,
      runningAgents: run.router.runningIds,
      cancelledBy: (id: string) => this.cancelRequests.get(id),
    };
  }

  private carryOut(e: ControlEffect): void {
    if (e.kind === 'interrupt') return void this.run.interrupt();
    if (e.kind === 'steer') return void this.run.router.send('user', e.target, e.text);
    const inst = this.run.instances.get(e.id)!;
    const t = this.run.tasks.get(inst.task)!;
    if (e.kind === 'cancel_running') {
      this.cancelRequests.set(e.id, e.by);
      this.abortLaunches(e.id, e.by);
      this.shellCancels.get(e.id)?.abort();
    } else if (e.kind === 'retry') {
      this.cancelRequests.delete(e.id);
      this.run.retry(inst, t);
    } else this.run.cancelWaiting(inst, t, e.by);
  }

  /** The text an instance's agent is writing now ('' when none); a pair's key: the member that wrote last (AgentLaunch.peek). */
  private peek(key: string): ControlReply {
    if (this.run.ended()) return { ok: false, error: `run ${this.run.runId} has ended` };
    const found = controlTarget(this.view(), key);
    if ('error' in found) return { ok: false, error: found.error };
    let best = { text: '', at: -1 };
    for (const l of this.run.launches.get(found.inst.id) ?? []) {
      if (key.includes('@') && l.ref.key !== key) continue;
      const p = l.peek();
      if (p.text !== '' && p.at > best.at) best = p;
    }
    return { ok: true, message: best.text };
  }

  private abortLaunches(id: string, by: string): void {
    for (const l of this.run.launches.get(id) ?? []) l.abort({ failure: 'cancelled', detail: `by ${by}` });
  }
}
