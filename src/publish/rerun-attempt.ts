// One re-run of a done instance's agent after the run (publish --rebase, publish --follow-up): the
// same agent, model, provider, tools, sandbox, limits and verify as in the run, through the same
// InstanceRunner and worker threads, in a fresh worktree of its repository at a given commit, with
// a session of its own (sessions/<instance>.<kind>-<attempt>.jsonl) and the first message the
// caller wrote. The attempt is logged in run.jsonl like any other (the caller's start event, the
// agent's events and call_usage, the caller's end event), so show, report.html and the usage
// totals see it; the change it made is written as patches/<instance>.<kind>-<attempt>.diff.
// The run's budget applies with its spend so far; the task's per-instance budget caps the re-run.
// The caller holds the run's lease. A kill leaves a start without an end: nothing changes.
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import type { Changeset } from '../run/changesets.js';
import {
  type FailureClass,
  type RunEventInput,
  type UsageSummary,
  addUsageSummary,
  zeroUsage,
} from '../run/run-events.js';
import type { InstanceState as FoldedInstance, RunState } from '../run/run-fold.js';
import { type InstanceState, type TaskState, pathFromRoot } from '../run/run-state.js';
import { RunStore } from '../run/run-store.js';
import { runRedactor } from '../run/secrets.js';
import { closeMcpRunHost } from '../tools/mcp/run-host-registry.js';
import type { AgentLaunch, LaunchContext } from '../orchestrator/execution/agent-launch.js';
import { executionStack } from '../orchestrator/execution-stack.js';
import { addWorktree, diffSince, removeWorktree, snapshot } from '../orchestrator/workspace/git-workspace.js';
import { InstanceRunner } from '../orchestrator/execution/instance-runner.js';
import { MessageRouter, runDirectory } from '../orchestrator/control/message-router.js';
import type { PermitBroker } from '../orchestrator/pacing/permit-broker.js';
import type { ThreadPoolExecutor } from '../orchestrator/execution/thread-pool-executor.js';
import { Workspaces } from '../orchestrator/workspace/workspaces.js';
import { rebaseContext, renderRebasedInstance } from './rebase-instance.js';

export interface RerunInput {
  runDir: string;
  recipe: LoadedRecipe;
  env: Readonly<Record<string, string | undefined>>;
  fold: RunState;
  inst: FoldedInstance;
  changeset: Changeset;
  /** The repository (the instance's git root). */
  repo: string;
  /** The commit the worktree holds (fetched into `repo`, or made there by publishing). */
  startCommit: string;
}

/** What the caller's re-run is: its name in files, its first message, its two events. */
export interface RerunKind {
  /** "rebase", "followup": names the session, worktree and patch files. */
  name: string;
  /** The agent's first message. */
  prompt: (rendered: { prompt: string }) => string;
  start: (ref: RerunRef, sessionFile: string) => RunEventInput;
  /** `result` is the end's outcome and what the re-run made (usage and duration added by the caller). */
  end: (ref: RerunRef, result: RerunEnd) => RunEventInput;
}

export interface RerunRef {
  task: string;
  key: string;
  attempt: number;
  parent: string;
}

export interface RerunEnd {
  ok: boolean;
  failure?: FailureClass;
  error?: string;
  text?: string;
  summary?: string;
  baseTree?: string;
  patchFile?: string;
  modifiedFiles?: string[];
  usage: UsageSummary;
  durationMs: number;
}

export type RerunResult =
  | { ok: true; attempt: number; patchFile: string; usage: UsageSummary; text?: string }
  | {
      ok: false;
      error: string;
      /** The instance cannot be rendered from the recipe (nothing ran): the user's to fix. */
      unrenderable?: boolean;
    };

/** Worktrees of earlier re-runs of `key` a kill left behind. */
function removeStaleWorktrees(runDir: string, repo: string, key: string, name: string): Promise<void>[] {
  const dir = join(runDir, 'worktrees');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.startsWith(`${key}.${name}-`))
    .map(async (n) => {
      await removeWorktree(repo, join(dir, n));
      rmSync(join(dir, n), { recursive: true, force: true });
    });
}

export async function runInstanceAgain(a: RerunInput, kind: RerunKind): Promise<RerunResult> {
  const rendered = renderRebasedInstance(a.recipe, a.fold, a.inst, a.env);
  if (!rendered.ok) return { ok: false, error: rendered.error, unrenderable: true };
  const { task } = rendered;
  const cwdInRepo = relative(a.repo, rendered.resolved.cwd);
  if (cwdInRepo.startsWith('..'))
    return {
      ok: false,
      unrenderable: true,
      error: `${a.inst.label} works in ${rendered.resolved.cwd}, outside its repository ${a.repo}; it cannot be rebased`,
    };
  const store = RunStore.open(a.runDir, { redactor: runRedactor(a.recipe, a.env) });
  const attempt = Math.max(a.inst.attempt, ...a.inst.attempts.map((x) => x.attempt)) + 1;
  const id = a.inst.key;
  // What the user reads: "the follow-up round" / "the rebase re-run" (kind.name names files).
  const what = kind.name === 'followup' ? 'follow-up round' : `${kind.name} re-run`;
  const sessionFile = (agentKey: string) => join(store.dir, 'sessions', `${agentKey}.${kind.name}-${attempt}.jsonl`);
  const wt = join(store.dir, 'worktrees', `${id}.${kind.name}-${attempt}`);
  await Promise.all(removeStaleWorktrees(store.dir, a.repo, id, kind.name));
  const made = await addWorktree(a.repo, wt, a.startCommit);
  if (!made.ok) return { ok: false, error: made.error };
  const workCwd = join(wt, cwdInRepo);
  const ref = { task: task.id, key: id, attempt, parent: task.id };
  const startedAt = Date.now();
  let usage = zeroUsage();
  const emit = (e: RunEventInput) => {
    if (e.type === 'call_usage') usage = addUsageSummary(usage, e.usage);
    store.append(e);
  };
  const end = (rest: Omit<RerunEnd, 'usage' | 'durationMs'>) => {
    emit(kind.end(ref, { ...rest, usage, durationMs: Date.now() - startedAt }));
    store.flush();
  };
  let threads: ThreadPoolExecutor | undefined;
  let broker: PermitBroker | undefined;
  try {
    const snap = await snapshot(workCwd);
    if (!snap) return { ok: false, error: `cannot read the worktree ${wt} of ${a.repo}` };
    const prompt = kind.prompt({ prompt: rendered.resolved.prompt ?? rendered.resolved.run ?? '' });
    const inst: InstanceState = {
      id,
      task: task.id,
      index: 0,
      ...(rendered.resolved.item !== undefined ? { item: rendered.resolved.item } : {}),
      // A `run:` step runs its command again; an agent gets the caller's message as its first prompt.
      resolved: task.kind === 'run' ? rendered.resolved : { ...rendered.resolved, prompt },
      workCwd,
      status: 'running',
      attempt,
      usage: zeroUsage(),
      modifiedFiles: [],
      readFiles: [],
      durationMs: 0,
      sessionFiles: [],
      git: { root: a.repo, commit: a.startCommit, tree: snap.tree, worktree: wt },
    };
    const t: TaskState = { task, level: 0, status: 'active', expanded: true, instances: [inst] };
    const tasks = new Map([[task.id, t]]);
    const instances = new Map([[id, inst]]);
    // The run's limits as the run has them (executionStack), with what the run spent so far; the
    // task's per-instance budget for this re-run.
    const stack = executionStack({ recipe: a.recipe, replay: a.fold, taskOf: () => task, stopping: () => undefined });
    const { ledger, admission } = stack;
    broker = stack.broker;
    ledger.charge(['run'], { usd: a.fold.spend.cost, tokens: a.fold.spend.totalTokens });
    ledger.setLimits(`instance:${id}`, task.budget);
    const router = new MessageRouter(runDirectory(tasks, instances));
    const launches = new Map<string, AgentLaunch[]>();
    const pool = stack.threadPool({
      concurrency: 1,
      pairs: task.kind === 'pair',
      instanceCount: 1,
      onThreadError: (err) =>
        emit({ ...ref, type: 'agent_event', event: { type: 'worker_error', error: String(err) } }),
      onThreadsCannotStart: (reason) => {
        for (const list of launches.values()) for (const l of list) l.failUnstarted(`crashed: ${reason}`);
      },
    });
    threads = pool;
    const launchContext = (): LaunchContext => ({
      ...pool.placement(false),
      broker: broker!,
      router,
      emit,
      estimate: (r, model, call) => admission.callEstimate(r.key, task, model, call),
      onUsage: (r, _model, tokens) => admission.noteCall(r.key, tokens),
      onBudgetDenied: () => undefined,
    });
    const runner = new InstanceRunner({
      recipe: a.recipe,
      store,
      workspaces: new Workspaces({ recipeDir: a.recipe.dir, store }),
      env: a.env,
      fullEvents: false,
      launches,
      shellSignal: new AbortController().signal,
      emit,
      launchContext,
      contextFor: () => rebaseContext(a.recipe, a.fold, task),
      sessionFile,
    });
    emit(kind.start(ref, relative(store.dir, sessionFile(id))));
    store.flush();
    const result = await runner.run(t, inst);
    if (!result.ok) {
      const error = `the ${what} of ${a.inst.label} failed (${result.failure}): ${result.error}`;
      end({ ok: false, failure: result.failure, error });
      return { ok: false, error };
    }
    const d = await diffSince(workCwd, snap.tree);
    if (!d) {
      const error = `cannot read what the re-run of ${a.inst.label} changed in ${wt}`;
      end({ ok: false, failure: 'error', error });
      return { ok: false, error };
    }
    if (!d.patch.trim()) {
      const error = `the ${what} of ${a.inst.label} changed nothing on ${a.startCommit.slice(0, 12)}; its changeset stays as it was`;
      end({ ok: false, failure: 'error', error, text: result.text });
      return { ok: false, error };
    }
    const patchFile = `patches/${id}.${kind.name}-${attempt}.diff`;
    store.writeFile(patchFile, d.patch);
    const modifiedFiles = d.files.map((f) => pathFromRoot(a.recipe.dir, join(a.repo, f))).sort();
    end({
      ok: true,
      baseTree: snap.tree,
      text: result.text,
      ...(result.summary ? { summary: result.summary } : {}),
      patchFile,
      ...(modifiedFiles.length ? { modifiedFiles } : {}),
    });
    if (store.writeError) return { ok: false, error: `cannot write the run log: ${store.writeError.message}` };
    return { ok: true, attempt, patchFile, usage, ...(result.text !== undefined ? { text: result.text } : {}) };
  } finally {
    broker?.close();
    await threads?.close();
    await closeMcpRunHost(store.runId);
    await removeWorktree(a.repo, wt);
    rmSync(wt, { recursive: true, force: true });
    try {
      rmdirSync(dirname(wt)); // worktrees/ goes with its last worktree
    } catch {
      // not empty (an isolated instance's worktree), or gone
    }
  }
}
