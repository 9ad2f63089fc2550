// Progress for a non-TTY (CI logs, pipes): one timestamped line per state change of the run or of
// an instance, never per token, so a log of a hundred-agent run stays readable and greppable:
//   12:00:01 apply/repo-a: started (attempt 1)
//   12:00:04 apply/repo-a: done in 3.2s, 3 turns, 1,234 tokens, $0.0012
import { describePick } from '../run/attempt-pick-record.js';
import type { RunEvent } from '../run/run-events.js';
import { boardLine } from './board-text.js';
import { trainStepText } from './train-text.js';
import { DISPLAY_DEFAULTS } from './defaults.js';
import { formatClock, formatCost, formatDuration, formatTokens, plural, withoutClassPrefix } from './format-units.js';
import {
  applyEvent,
  createRunState,
  getInstance,
  instanceLabel,
  instanceUsage,
  isControlEvent,
  runUsage,
  type ControlRecord,
  type RunState,
} from '../run/run-fold.js';
import { clip, oneLine } from './terminal-text.js';

export interface PlainLogOptions {
  /** Budget of the run in dollars: spending is reported as it crosses milestones. */
  budgetUsd?: number;
}

type Writable = Pick<NodeJS.WritableStream, 'write'>;

const seconds = (ms: number) => `${(ms / 1_000).toFixed(1)}s`;
const err = (s: string) => clip(oneLine(s), DISPLAY_DEFAULTS.errorPreviewChars);

/** One line for a user's action: "control: cancel apply/b by watch (pid 12, ana): ok, …". */
export function controlLine(c: ControlRecord): string {
  const what = c.action === 'cancel_run' ? 'cancel the run' : `${c.action}${c.instance ? ` ${c.instance}` : ''}`;
  const text = c.text ? ` "${clip(oneLine(c.text), DISPLAY_DEFAULTS.outputPreviewChars)}"` : '';
  return `control: ${what}${text} by ${c.by}: ${c.ok ? 'ok' : 'refused'}${c.message ? `, ${err(c.message)}` : ''}`;
}

/**
 * What a resume says about its inputs (run_resume.inputs): changed files it did not use, a
 * reload and who asked, or an older run read as it is; undefined when there is nothing to say.
 */
export function resumeInputsNote(inputs: Extract<RunEvent, { type: 'run_resume' }>['inputs']): string | undefined {
  if (!inputs) return undefined;
  const files = inputs.changed.map((c) => `${c.file} (${c.change})`).join(', ');
  if (inputs.source === 'uncaptured') return 'its inputs were not captured (an older run): read as they are now';
  if (inputs.source === 'reloaded')
    return `recipe reloaded by ${inputs.reloadedBy ?? 'the user'}${files ? `: ${files}` : ''}`;
  return files ? `changed since the start and not used (the captured copies are): ${files}` : undefined;
}

const resumeInputsText = (inputs: Extract<RunEvent, { type: 'run_resume' }>['inputs']): string => {
  const note = resumeInputsNote(inputs);
  return note ? `; ${note}` : '';
};

export class PlainLog {
  readonly state: RunState = createRunState();
  private readonly waiting = new Set<string>();
  /** Attempts whose failure line was printed already (instance_failed before instance_retry). */
  private readonly failedAttempts = new Set<string>();
  private milestone = 0;

  constructor(
    private readonly out: Writable,
    private readonly options: PlainLogOptions = {},
  ) {}

  /** Folds an event that happened before this log was attached, without printing it. */
  absorb(e: RunEvent): void {
    applyEvent(this.state, e);
  }

  handle(e: RunEvent): void {
    applyEvent(this.state, e);
    const text = this.describe(e);
    if (text !== undefined) this.out.write(`${formatClock(e.ts)} ${text}\n`);
    this.checkBudget(e.ts);
  }

  /** The line for one event, or undefined when the event changes nothing a reader cares about. */
  private describe(e: RunEvent): string | undefined {
    if (isControlEvent(e)) {
      const control = this.state.controls[this.state.controls.length - 1];
      return control ? controlLine(control) : undefined;
    }
    switch (e.type) {
      case 'run_start': {
        const n = e.plan.length;
        return `run ${e.runId} ${e.resumed ? 'resumed' : 'started'}: ${e.name} (${e.recipe}), ${plural(n, 'task')}`;
      }
      case 'run_resume':
        return `run ${e.runId} resumed${e.previousStatus ? ` (was ${e.previousStatus})` : ''}${resumeInputsText(e.inputs)}`;
      case 'task_expanded':
        return `${e.task}: expanded into ${plural(e.keys.length, 'instance')}`;
      case 'budget_exhausted':
        return `budget exhausted: ${err(e.reason)}; no new model calls are permitted`;
      case 'approval_requested':
        // The line says how to answer: a run in CI or a pipe has no keys to press.
        if (e.gate === 'follow_up')
          return `${instanceLabel(e.task, e.key)}: follow-up round ${e.round ?? '?'} waiting for approval: ${e.prompt}; answer with: orchestrate approve|reject ${e.runId} --follow-up --instance ${e.key}`;
        if (e.gate === 'publish')
          return `publish ${e.task}: waiting for approval: ${e.prompt}${e.deadline !== undefined ? ` (until ${new Date(e.deadline).toISOString()}, then ${e.onTimeout === 'approve' ? 'approved' : 'rejected'})` : ''}; answer with: orchestrate approve|reject ${e.runId} --publish`;
        return `${instanceLabel(e.task, e.key)}: waiting for approval: ${e.prompt}${e.deadline !== undefined ? ` (until ${new Date(e.deadline).toISOString()}, then ${e.onTimeout === 'approve' ? 'approved' : 'rejected'})` : ''}; answer with: orchestrate approve|reject ${e.runId} --task ${e.task}`;
      case 'changeset_published':
        return `publish ${e.key}: ${e.outcome}${e.detail ? ` ${e.detail}` : ''}`;
      case 'approval_given':
        return `${e.gate === 'publish' ? `publish ${e.task}` : instanceLabel(e.task, e.key)}: ${e.decision} ${e.via === 'timeout' ? 'on timeout' : `by ${e.by} via ${e.via}${e.offline ? ' (offline)' : ''}`}${e.note ? `: ${e.note}` : ''}`;
      case 'board_task':
        return boardLine(e);
      case 'attempt_pick': {
        const pick = this.state.picks.get(e.group);
        return pick ? describePick(pick)[0] : undefined;
      }
      case 'attempt_landed':
        return `${e.key}: ${e.ok ? `picked attempt landed${e.branch ? ` on ${e.branch}` : e.applied ? ' in the checkout' : e.patchFile ? ` as its patch, ${e.patchFile} (merge: patch)` : ''}` : `picked attempt did not land: ${err(e.error ?? e.failure ?? 'unknown')}`}`;
      case 'window_learned':
        return `${e.by}: the server's context window for ${e.provider}/${e.model} is ${plural(e.window, 'token')}; every agent of the run uses it from now on`;
      case 'run_end': {
        const u = this.state.endUsage ?? runUsage(this.state);
        return `run ${e.runId} ${e.status.replace('_', ' ')} in ${formatDuration(e.durationMs)}, ${plural(u.totalTokens, 'token')}, ${formatCost(u.cost)}`;
      }
      default:
        break;
    }
    const label = instanceLabel(e.task, e.key);
    const id = `${e.task}\u0000${e.key}`;
    switch (e.type) {
      case 'instance_queued':
        return undefined;
      case 'instance_start':
        return `${label}: started (attempt ${e.attempt}${e.resumedFromLeaf ? ', continuing its session' : ''})${e.worker ? ` on worker ${e.worker}` : ''}`;
      case 'instance_worker':
        return e.takeover
          ? `${label}: ${e.agent} taken over by worker ${e.worker}`
          : `${label}: ${e.agent} runs on worker ${e.worker}`;
      case 'permit_wait':
        this.waiting.add(id);
        return `${label}: waiting for a model permit (${e.reason})`;
      case 'permit_grant':
        if (!this.waiting.delete(id)) return undefined;
        return `${label}: permit granted after ${seconds(e.waitedMs)}`;
      case 'permit_deny':
        this.waiting.delete(id);
        return `${label}: permit denied (${err(e.reason)})`;
      case 'call_fallback':
        // A call skipping a model that is cooling down says nothing new: only a model's failure is a line.
        if (e.kind === undefined) return undefined;
        return `${label}: ${e.failed ? `every fallback failed, last ${e.served}` : `call moved to ${e.served}`} (${e.primary} ${e.kind}${e.status ? ` ${e.status}` : ''})`;
      case 'rate_limited':
        return `${label}: rate limited by ${e.model}${e.status ? ` (${e.status})` : ''}, retrying in ${seconds(e.delayMs)}`;
      case 'agent_event': {
        const ev = e.event as { type: string } & Record<string, unknown>;
        if (ev.type === 'auto_retry_start') {
          return `${label}: model call failed (${err(String(ev.errorMessage ?? 'error'))}), retry ${String(ev.attempt)}/${String(ev.maxAttempts)} in ${seconds(Number(ev.delayMs) || 0)}`;
        }
        if (ev.type === 'auto_compaction_start')
          return `${label}: compacting its context (${String(ev.reason ?? 'threshold')})`;
        if (ev.type === 'auto_compaction_end' && ev.errorMessage)
          return `${label}: compaction failed: ${err(String(ev.errorMessage))}`;
        // The runaway guards: a warning the model may still heed, then the stop (its failure follows).
        if (ev.type === 'loop_warning')
          return `${label}: loop warning (${err(String(ev.detail ?? ev.pattern ?? 'repeating'))}); it is stopped if it goes on`;
        return undefined;
      }
      case 'message':
        return `${label}: message ${e.from} -> ${e.to}: ${clip(oneLine(e.text), DISPLAY_DEFAULTS.outputPreviewChars)}`;
      case 'verify':
        return `${label}: verify \`${clip(oneLine(e.command), 60)}\` ${e.ok ? 'passed' : e.output.trim() ? `failed: ${err(e.output)}` : 'failed (it printed nothing)'}`;
      case 'instance_retry':
        if (this.failedAttempts.has(`${id}\u0000${e.attempt}`))
          return `${label}: retrying in ${seconds(e.delayMs)} (attempt ${e.attempt + 1})`;
        return `${label}: attempt ${e.attempt} failed (${e.failure}): ${err(withoutClassPrefix(e.failure, e.error))}; retrying in ${seconds(e.delayMs)}`;
      case 'instance_done': {
        // The same count as the summary table, `show` and the report (run/turn-count.ts).
        const inst = getInstance(this.state, e.task, e.key);
        const turns = (inst ? instanceUsage(inst).turns : e.usage.turns) ?? 0;
        const landed = e.branch ? `; on branch ${e.branch}` : e.applied ? '; applied to the checkout' : '';
        return `${label}: done in ${formatDuration(e.durationMs)}, ${plural(turns, 'turn')}, ${plural(e.usage.totalTokens, 'token')}, ${formatCost(e.usage.cost)}${landed}`;
      }
      case 'instance_failed': {
        this.failedAttempts.add(`${id}\u0000${e.attempt}`);
        const spent = e.usage ? `, ${formatTokens(e.usage.totalTokens)} tokens, ${formatCost(e.usage.cost)}` : '';
        // attempts: the work of an attempt that will not land stays in the run folder.
        const kept = e.patchFile ? `; its work is kept in ${e.patchFile}` : '';
        // A user's cancel is no failure of the work: "cancelled by ...", as the instance's status says.
        if (e.final && e.failure === 'cancelled')
          return `${label}: ${err(e.error)} after ${formatDuration(e.durationMs)}${spent}${kept}`;
        const head = e.final ? `failed (${e.failure})` : `attempt ${e.attempt} failed (${e.failure})`;
        return `${label}: ${head} after ${formatDuration(e.durationMs)}${spent}: ${err(withoutClassPrefix(e.failure, e.error))}${kept}`;
      }
      case 'instance_skipped':
        return `${label}: skipped (${err(e.reason)})`;
      case 'train_step':
        return `merge train: ${trainStepText(e)}`;
      default:
        return undefined;
    }
  }

  private checkBudget(ts: number): void {
    const budget = this.options.budgetUsd ?? this.state.budgetUsd;
    if (!budget || budget <= 0) return;
    const spent = runUsage(this.state).cost;
    const marks = DISPLAY_DEFAULTS.budgetMilestones;
    let crossed: number | undefined;
    while (this.milestone < marks.length && spent >= budget * marks[this.milestone]!) crossed = marks[this.milestone++];
    if (crossed !== undefined) {
      this.out.write(
        `${formatClock(ts)} budget: ${formatCost(spent)} of ${formatCost(budget)} spent (${Math.round((spent / budget) * 100)}%)\n`,
      );
    }
  }
}
