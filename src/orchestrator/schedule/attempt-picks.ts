// Best-of-N attempts (`attempts: N`, `pick:`) in the live run: an attempt that finishes is logged
// done with its patch recorded but nothing landed; once every attempt of an instance has ended
// (with `pick: first`: as soon as one passes, and the others are cancelled) one is picked by the
// task's rule (attempt-groups.ts; `pick: judge` asks a judge agent, judge-attempts.ts), the pick is
// logged (attempt_pick), and the picked attempt's work lands through the normal landing path
// (Workspaces.land: patch, branch, apply or the merge train) before attempt_landed is logged.
// A resume reads the picks of its log: a pick is made once, a pick not yet landed lands again.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadedRecipe } from '../../recipe/index.js';
import { attemptAgent, attemptOf } from '../../recipe/attempts-spec.js';
import {
  applyPickEvent,
  landOnInstance,
  pickSettled,
  pickSucceeded,
  type AttemptLandedEventFields,
  type AttemptPickEventFields,
  type AttemptPicks,
  type PickCandidate,
} from '../../run/attempt-pick-record.js';
import type { RunEventInput } from '../../run/run-events.js';
import { isTerminal, pathFromRoot, type InstanceState, type TaskState } from '../../run/run-state.js';
import type { RunStore } from '../../run/run-store.js';
import type { WorkerResult } from '../protocol.js';
import type { StopReason } from '../control/control-decisions.js';
import type { TrainRepairNeed, Workspaces } from '../workspace/workspaces.js';
import type { FailureClass } from '../../run/usage-summary.js';
import { attemptGroups, changedLines, pickByVerify, verifyReason } from './attempt-groups.js';
import { doneEvent } from './attempt-lifecycle.js';

/** A judge's verdict over the passing attempts (judge-attempts.ts), or why it could not judge. */
export type JudgeVerdict =
  | { ok: true; attempt: number; reasoning: string; model?: string; cost: number }
  | { ok: false; error: string; cost: number };

/** What the picks need from the run. */
export interface PicksContext {
  recipe: LoadedRecipe;
  store: Pick<RunStore, 'dir' | 'writeFile'>;
  workspaces: Pick<Workspaces, 'diffSince' | 'land' | 'drop'>;
  stopping(): StopReason | undefined;
  record(e: RunEventInput): void;
  /** Cancels an attempt `pick: first` no longer needs, as a user's cancel would (logged, it ends cancelled). */
  cancel(id: string, by: string): void;
  /** Task `t` may have settled: settle it and walk on. */
  settled(t: TaskState): void;
  /**
   * The merge train refused the picked attempt's work and it has repairs left: its agent runs
   * again on the new tip (a retry); once done again, its landing is tried again.
   */
  repair?(
    t: TaskState,
    inst: InstanceState,
    land: { failure: FailureClass; detail: string },
    need: TrainRepairNeed,
  ): Promise<void>;
  /** `pick: judge`: the judge agent's verdict over the passing candidates. */
  judge?(t: TaskState, group: string, candidates: PickCandidate[], taskPrompt: string): Promise<JudgeVerdict>;
  /** The picks of the log a resumed run continues. */
  replay?: AttemptPicks;
}

export class AttemptPicksDesk {
  /** Instances whose pick (or landing) is being made now. */
  private readonly busy = new Set<string>();

  constructor(private readonly ctx: PicksContext) {}

  /** No pick is being made or landed now (the run may end). */
  idle(): boolean {
    return this.busy.size === 0;
  }

  /** The picks of task `t`, taken from a resumed run's log the first time. */
  picksOf(t: TaskState): AttemptPicks {
    if (!t.picks) {
      t.picks = new Map();
      for (const [group, p] of this.ctx.replay ?? []) if (p.task === t.task.id) t.picks.set(group, p);
    }
    return t.picks;
  }

  /**
   * Whether a done attempt's worktree must stay: its instance's pick is not settled (it may yet be
   * picked and land from it). A resume removes the worktrees of other done instances.
   */
  holdsWorktree(inst: InstanceState): boolean {
    const a = attemptOf(inst.id);
    const p = a && this.ctx.replay?.get(a.group);
    return a !== undefined && this.ctx.recipe.tasks.some((t) => t.id === inst.task && t.attempts) && !pickSettled(p);
  }

  /**
   * An attempt finished (and passed its verify): its diff is recorded as patches/<id>.diff and it
   * is logged done, nothing landed. With `pick: first` the first to get here is picked.
   */
  async candidateDone(
    t: TaskState,
    inst: InstanceState,
    result: Extract<WorkerResult, { ok: true }>,
    modified: Set<string>,
  ): Promise<void> {
    const g = inst.git;
    let patchFile: string | undefined;
    if (g) {
      const d = await this.ctx.workspaces.diffSince(g.root, inst.workCwd ?? inst.resolved!.cwd, g.tree, g.worktree);
      if (d.ok && d.patch.trim()) {
        patchFile = `patches/${inst.id}.diff`;
        this.ctx.store.writeFile(patchFile, d.patch);
        for (const f of d.files) modified.add(pathFromRoot(this.ctx.recipe.dir, join(g.root, f)));
      }
    }
    this.ctx.record(doneEvent(inst, result, [...modified].sort(), patchFile ? { patchFile } : {}));
    if (t.task.attempts?.pick === 'first') {
      const group = attemptOf(inst.id)?.group;
      if (group !== undefined && !this.picksOf(t).has(group) && !this.busy.has(group)) void this.decide(t, group, inst);
    }
  }

  /**
   * An attempt ends without landing (its verify failed, it failed, or `pick: first` stopped it):
   * what it changed is kept as patches/<id>.diff, so the run folder holds every attempt's work.
   * Returns the patch's path relative to the run folder; undefined when it changed nothing or its
   * diff cannot be taken (nothing is recorded then; the worktree stays as it is).
   */
  async keepWork(inst: InstanceState): Promise<string | undefined> {
    const g = inst.git;
    if (!g?.worktree || !attemptOf(inst.id)) return undefined;
    const cwd = inst.workCwd ?? inst.resolved?.cwd ?? g.worktree;
    const d = await this.ctx.workspaces.diffSince(g.root, cwd, g.tree, g.worktree);
    if (!d.ok || !d.patch.trim()) return undefined;
    const patchFile = `patches/${inst.id}.diff`;
    try {
      this.ctx.store.writeFile(patchFile, d.patch);
    } catch {
      return undefined; // the worktree still holds the work; a run that cannot write stops on its next event
    }
    return patchFile;
  }

  /**
   * Makes what can be made of task `t`'s picks: an instance whose attempts have all ended and that
   * has no pick gets one; a pick whose landing is not logged (a resume after a kill) lands. Called
   * whenever the task may settle (TaskWalk.settle); nothing starts while the run is interrupted.
   */
  pickAttempts(t: TaskState): void {
    if (!t.task.attempts || this.ctx.stopping() === 'interrupted') return;
    const picks = this.picksOf(t);
    for (const [group, members] of attemptGroups(t)) {
      if (this.busy.has(group) || !members.every((m) => isTerminal(m.status))) continue;
      const p = picks.get(group);
      if (!p) void this.decide(t, group);
      else if (!pickSettled(p)) {
        const inst = members.find((m) => m.id === p.picked);
        if (inst) void this.landPicked(t, group, inst);
      }
    }
  }

  /** How an attempt stands for the pick. */
  private candidate(t: TaskState, inst: InstanceState): PickCandidate {
    const n = attemptOf(inst.id)?.n ?? 1;
    const agentName = t.task.attempts ? attemptAgent(t.task.attempts, n) : '';
    const agent = this.ctx.recipe.agents[agentName || t.task.agent || ''];
    const c: PickCandidate = {
      key: inst.id,
      attempt: n,
      outcome: inst.status === 'done' ? 'passed' : inst.status === 'failed' ? 'failed' : 'skipped',
      cost: inst.usage.cost,
    };
    if (inst.status === 'cancelled') c.outcome = 'cancelled';
    if (!isTerminal(inst.status)) c.outcome = 'cancelled'; // pick: first stops it now
    if (agent?.model) c.model = agent.model;
    const verify = (inst.resolved?.verify ?? t.task.verify).map((v) => v.run).join(' && ');
    if (verify && c.outcome === 'passed') c.verify = { ok: true, command: verify };
    if (verify && inst.failure === 'verify_failed')
      c.verify = { ok: false, command: verify, ...(inst.error ? { output: inst.error } : {}) };
    if (c.outcome !== 'passed' && inst.failure) c.failure = inst.failure;
    if (c.outcome !== 'passed' && (inst.error ?? inst.skipReason)) c.error = inst.error ?? inst.skipReason;
    if (inst.patchFile) {
      c.patchFile = inst.patchFile;
      try {
        c.lines = changedLines(readFileSync(join(this.ctx.store.dir, inst.patchFile), 'utf8'));
      } catch {
        // an unreadable patch counts as unknown size; the rule then reads it as 0
      }
    } else if (c.outcome === 'passed') c.lines = 0;
    return c;
  }

  /** Picks one attempt of `group` (with `first`: that one), logs the pick and lands it. */
  private async decide(t: TaskState, group: string, first?: InstanceState): Promise<void> {
    this.busy.add(group);
    try {
      const members = attemptGroups(t).get(group) ?? [];
      const rule = t.task.attempts!.pick;
      const candidates = members.map((m) => this.candidate(t, m));
      const event: RunEventInput & AttemptPickEventFields = {
        type: 'attempt_pick',
        task: t.task.id,
        group,
        rule,
        reason: '',
        candidates,
      };
      const passed = candidates.filter((c) => c.outcome === 'passed');
      let picked: PickCandidate | undefined;
      if (first) {
        picked = candidates.find((c) => c.key === first.id);
        event.reason = `attempt ${picked?.attempt} passed first; the other attempts were stopped`;
      } else if (rule === 'judge' && passed.length > 1 && this.ctx.judge) {
        const verdict = await this.ctx.judge(t, group, passed, members[0]?.resolved?.prompt ?? t.task.prompt ?? '');
        // An interrupt stopped the judge: no pick now; the resume judges again.
        if (this.ctx.stopping() === 'interrupted') return;
        const chosen = verdict.ok ? passed.find((c) => c.attempt === verdict.attempt) : undefined;
        event.judge = { cost: verdict.cost, ...(verdict.ok && verdict.model ? { model: verdict.model } : {}) };
        if (verdict.ok && chosen) {
          picked = chosen;
          event.reason = `the judge picked attempt ${chosen.attempt}: ${verdict.reasoning}`;
        } else {
          picked = pickByVerify(candidates);
          const why = verdict.ok ? `it named attempt ${verdict.attempt}, which did not pass` : verdict.error;
          event.reason = `the judge gave no usable verdict (${why}), so the verify rule picked: ${verifyReason(picked!, candidates)}`;
        }
      } else {
        picked = pickByVerify(candidates);
        event.reason = picked
          ? verifyReason(picked, candidates)
          : `none of the ${candidates.length} attempts passed${t.task.verify.length ? ' verify' : ''}`;
      }
      if (picked) event.picked = picked.key;
      this.ctx.record(event);
      applyPickEvent(this.picksOf(t), { ...event, ts: Date.now() });
      if (first)
        for (const m of members)
          if (m !== first && !isTerminal(m.status)) this.ctx.cancel(m.id, `pick: first (${first.id} passed)`);
      const inst = picked && members.find((m) => m.id === picked.key);
      if (inst) await this.landPicked(t, group, inst, true);
    } finally {
      this.busy.delete(group);
      this.ctx.settled(t);
    }
  }

  /** Lands the picked attempt's work where its task's merge: says, and logs where it went. */
  private async landPicked(t: TaskState, group: string, inst: InstanceState, busy = false): Promise<void> {
    if (!busy) this.busy.add(group);
    let event: RunEventInput & AttemptLandedEventFields;
    try {
      // A resumed attempt has no resolved cwd: its worktree holds the work.
      inst.workCwd ??= inst.git?.worktree;
      const land = await this.ctx.workspaces.land(t, inst, inst.text ?? '');
      // Refused by the train with repairs left: no attempt_landed yet; the repaired work lands later.
      if (!land.ok && land.repair && this.ctx.repair) {
        await this.ctx.repair(t, inst, land, land.repair);
        if (!busy) this.busy.delete(group);
        return;
      }
      event = land.ok
        ? {
            type: 'attempt_landed',
            task: t.task.id,
            group,
            key: inst.id,
            ok: true,
            files: land.files,
            ...(land.patchFile ? { patchFile: land.patchFile } : {}),
            ...(land.branch ? { branch: land.branch } : land.applied ? { applied: true } : {}),
          }
        : {
            type: 'attempt_landed',
            task: t.task.id,
            group,
            key: inst.id,
            ok: false,
            failure: land.failure,
            error: land.detail,
          };
    } catch (err) {
      const error = `landing ${inst.id} failed: ${err instanceof Error ? err.message : String(err)}`;
      event = { type: 'attempt_landed', task: t.task.id, group, key: inst.id, ok: false, failure: 'error', error };
    }
    this.ctx.record(event);
    applyPickEvent(this.picksOf(t), { ...event, ts: Date.now() });
    landOnInstance(inst, event);
    if (event.ok) {
      await this.ctx.workspaces.drop(t, inst);
      await this.dropLosers(t, group, inst);
    }
    if (!busy) {
      this.busy.delete(group);
      this.ctx.settled(t);
    }
  }

  /**
   * Once the picked attempt has landed, the other attempts' worktrees go: each one's work is in the
   * run folder already (patches/, written by candidateDone or keepWork). An attempt still running
   * then (`pick: first` cancelled it) goes when it ends (endedAfterPick).
   */
  private async dropLosers(t: TaskState, group: string, picked: InstanceState): Promise<void> {
    for (const m of attemptGroups(t).get(group) ?? [])
      if (m !== picked && isTerminal(m.status)) await this.ctx.workspaces.drop(t, m);
  }

  /** An attempt ended after its instance's pick landed another one: its worktree goes, its patch stays. */
  async endedAfterPick(t: TaskState, inst: InstanceState): Promise<void> {
    const group = attemptOf(inst.id)?.group;
    const p = group === undefined ? undefined : this.picksOf(t).get(group);
    if (pickSucceeded(p) && p?.picked !== inst.id) await this.ctx.workspaces.drop(t, inst);
  }
}
