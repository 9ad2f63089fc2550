// The publish gate (`approve:` inside a `publish:` block): once every task of the run has settled
// and its changesets are computed, the run waits (state waiting, spending nothing) before it
// publishes them, one gate per task whose publish spec has approve:. A user answers with
// `orchestrate approve|reject <run> --publish`, the run view or the MCP server; the deadline
// answers with on_timeout. Approved: the run publishes that task's changesets as `orchestrate
// publish --apply` would (each outcome a changeset_published event), then ends. Rejected: nothing
// is pushed and `publish --apply` refuses (publishGateRefusal) until someone approves it.
//
// Every step is an event (approval_requested / approval_given with gate: publish, keyed by the
// task), folded into RunState.publishGates, so a resume after kill -9 waits again with the same
// deadline, or publishes when the gate was approved meanwhile (offline, under the run's lease).
import type { LoadedRecipe } from '../recipe/index.js';
import type { Changeset } from '../run/changesets.js';
import type { ApprovalAnswer, ControlReply } from '../run/run-control.js';
import type { ApprovalChannel, RunEventInput } from '../run/run-events.js';
import type { RunState } from '../run/run-fold.js';
import type { EndGate } from '../orchestrator/control/approval-gates.js';
import { DeadlineGate, type GateEvent } from '../orchestrator/control/deadline-gate.js';
import { planChangesets, writeRunChangesets } from './changeset-plan.js';
import { decidePublishGate, publishGatePrompt } from './publish-gate-rules.js';
import { publishRun } from './publish-run.js';

export interface PublishGateHands {
  runId: string;
  runDir: string;
  recipe: LoadedRecipe;
  env: Readonly<Record<string, string | undefined>>;
  record(e: RunEventInput): void;
  /** A gate was answered or publishing finished: the run may end now. */
  advance(): void;
  now?: () => number;
}

export class PublishGates implements EndGate {
  /** Each gate's record, keyed by its task, and its deadline. */
  private readonly gate: DeadlineGate;
  /** Gates waiting in this session. */
  private readonly held = new Set<string>();
  /** Tasks published (or being published) in this session. */
  private readonly published = new Set<string>();
  private publishing = 0;

  constructor(
    private readonly hands: PublishGateHands,
    restored?: RunState,
  ) {
    this.gate = new DeadlineGate(
      {
        record: (e) => hands.record(e),
        due: (task, decision, note) => this.give(task, decision, 'timeout', 'timeout', note),
        ...(hands.now ? { now: hands.now } : {}),
      },
      restored?.publishGates,
    );
  }

  private get gated(): string[] {
    return this.hands.recipe.tasks.filter((t) => t.publish?.approve).map((t) => t.id);
  }

  /**
   * Every task has settled: true while the run must not end yet (a gate waits, or its changesets
   * are being published). `stopping`: the run stops (nothing is asked, nothing published anew).
   */
  holds(stopping: boolean): boolean {
    if (this.publishing > 0) return true;
    if (stopping || this.gated.length === 0) return false;
    if (this.held.size > 0) return true;
    let cs: Changeset[];
    try {
      writeRunChangesets(this.hands.runDir, this.hands.recipe);
      cs = planChangesets(this.hands.runDir, this.hands.recipe).file.changesets;
    } catch {
      return false; // the run folder cannot be read or written: the run ends, `orchestrate publish` says why
    }
    for (const task of this.gated) {
      const mine = cs.filter((c) => c.task === task);
      const rec = this.gate.recordOf(task);
      if (mine.length === 0 || rec?.state === 'rejected' || this.published.has(task)) continue;
      if (rec?.state === 'approved') {
        this.publish(task, mine);
        continue;
      }
      const gate = this.hands.recipe.tasks.find((t) => t.id === task)!.publish!.approve!;
      const deadline = this.gate.deadlineFor(task, gate.timeoutMs);
      this.log({
        type: 'approval_requested',
        gate: 'publish',
        task,
        key: task,
        prompt: publishGatePrompt(gate.prompt, task, this.hands.runId, this.hands.recipe, mine),
        ...(deadline !== undefined ? { deadline } : {}),
        onTimeout: rec?.onTimeout ?? gate.onTimeout,
      });
      this.held.add(task);
      this.gate.arm(task);
    }
    return this.held.size > 0 || this.publishing > 0;
  }

  /** A user's answer (the control desk's, in-process or over the socket). */
  answer(a: ApprovalAnswer, by: string): ControlReply {
    const gates = new Map([...this.gate.entries()].filter(([t, r]) => r.state !== 'waiting' || this.held.has(t)));
    const d = decidePublishGate({ runId: this.hands.runId, gated: this.gated, gates }, a);
    if (!d.ok) return { ok: false, error: d.error };
    const decision = a.action === 'approve' ? 'approved' : 'rejected';
    for (const task of d.tasks) this.give(task, decision, by, a.via ?? 'cli', a.note);
    return {
      ok: true,
      message:
        decision === 'approved'
          ? `approved the publish gate of ${d.tasks.join(', ')}: publishing now`
          : `rejected the publish gate of ${d.tasks.join(', ')}: nothing is pushed; the run ends with its changesets unpublished`,
    };
  }

  /** Interrupt or end: no timeout answers any more (the log keeps each deadline for a resume). */
  pause(): void {
    this.gate.pause();
    this.held.clear();
  }

  /** Logs a gate event (keyed by its task) and applies it to the gate's record. */
  private log(e: GateEvent): void {
    this.gate.log(e);
  }

  private give(task: string, decision: 'approved' | 'rejected', by: string, via: ApprovalChannel, note?: string) {
    this.gate.disarm(task);
    if (!this.held.delete(task)) return;
    this.log({
      type: 'approval_given',
      gate: 'publish',
      task,
      key: task,
      decision,
      by,
      via,
      ...(note !== undefined && note !== '' ? { note } : {}),
    });
    // Approved: holds() publishes it (the changesets as they are now); rejected: the run may end.
    this.hands.advance();
  }

  /** Publishes the task's changesets as `publish --apply` would; each outcome goes to the log. */
  private publish(task: string, cs: readonly Changeset[]): void {
    this.published.add(task);
    this.publishing++;
    void publishRun({
      runDir: this.hands.runDir,
      recipe: this.hands.recipe,
      apply: true,
      only: cs.map((c) => c.key),
      env: this.hands.env,
    })
      .then((r) => {
        for (const x of r.results)
          this.hands.record({
            type: 'changeset_published',
            task,
            key: x.key,
            outcome: x.outcome,
            ...(x.detail ? { detail: x.detail } : {}),
          });
        for (const p of r.problems)
          this.hands.record({ type: 'changeset_published', task, key: task, outcome: 'failed', detail: p });
      })
      .catch((err: unknown) =>
        this.hands.record({
          type: 'changeset_published',
          task,
          key: task,
          outcome: 'failed',
          detail: err instanceof Error ? err.message : String(err),
        }),
      )
      .finally(() => {
        this.publishing--;
        this.hands.advance();
      });
  }
}
