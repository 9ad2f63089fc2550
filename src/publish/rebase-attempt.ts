// One `publish --rebase` attempt of a done instance: its agent (the same agent, model, provider,
// tools, sandbox, limits and verify as in the run, through the same InstanceRunner and worker
// threads) runs again in a fresh worktree of its repository at the new base commit, with a
// session of its own (sessions/<instance>.rebase-<attempt>.jsonl) and a first message that
// carries the earlier summary and patch (rebase-instance.ts). The attempt is logged in run.jsonl
// like any other (instance_rebase_start, the agent's events and call_usage, instance_rebase_end),
// so show, report.html and the usage totals see it; on success its patch is written as
// patches/<instance>.rebase-<attempt>.diff and instance_rebase_end moves the instance to it.
// The run's budget applies with its spend so far; the task's per-instance budget caps the re-run.
// The caller holds the run's lease. A kill leaves a start without an end: nothing changes.
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { LoadedRecipe } from '../recipe/index.js';
import type { Changeset } from '../run/changesets.js';
import { type RunEventInput, type UsageSummary, addUsageSummary, zeroUsage } from '../run/run-events.js';
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
import { rebaseContext, rebasePrompt, renderRebasedInstance } from './rebase-instance.js';

export interface RebaseAttemptInput {
  runDir: string;
  recipe: LoadedRecipe;
  env: Readonly<Record<string, string | undefined>>;
  fold: RunState;
  inst: FoldedInstance;
  changeset: Changeset;
  /** The repository (the instance's git root). */
  repo: string;
  /** The base branch's commit now (fetched into `repo`). */
  baseCommit: string;
}

export type RebaseAttemptResult =
  | { ok: true; attempt: number; patchFile: string; usage: UsageSummary }
  | {
      ok: false;
      error: string;
      /** The instance cannot be rendered from the recipe (nothing ran): the user's to fix. */
      unrenderable?: boolean;
    };

/** Worktrees of earlier rebases of `key` a kill left behind. */
function removeStaleWorktrees(runDir: string, repo: string, key: string): Promise<void>[] {
  const dir = join(runDir, 'worktrees');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.startsWith(`${key}.rebase-`))
    .map(async (n) => {
      await removeWorktree(repo, join(dir, n));
      rmSync(join(dir, n), { recursive: true, force: true });
    });
}

export async function runRebaseAttempt(a: RebaseAttemptInput): Promise<RebaseAttemptResult> {
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
  const sessionFile = (agentKey: string) => join(store.dir, 'sessions', `${agentKey}.rebase-${attempt}.jsonl`);
  const wt = join(store.dir, 'worktrees', `${id}.rebase-${attempt}`);
  await Promise.all(removeStaleWorktrees(store.dir, a.repo, id));
  const made = await addWorktree(a.repo, wt, a.baseCommit);
  if (!made.ok) return { ok: false, error: made.error };
  const workCwd = join(wt, cwdInRepo);
  const ref = { task: task.id, key: id, attempt, parent: task.id };
  const base = { base: a.changeset.base, baseCommit: a.baseCommit, fromCommit: a.changeset.baseCommit };
  const startedAt = Date.now();
  let usage = zeroUsage();
  const emit = (e: RunEventInput) => {
    if (e.type === 'call_usage') usage = addUsageSummary(usage, e.usage);
    store.append(e);
  };
  const end = (rest: Partial<Extract<RunEventInput, { type: 'instance_rebase_end' }>> & { ok: boolean }) => {
    emit({ type: 'instance_rebase_end', ...ref, ...base, ...rest, usage, durationMs: Date.now() - startedAt });
    store.flush();
  };
  let threads: ThreadPoolExecutor | undefined;
  let broker: PermitBroker | undefined;
  try {
    const snap = await snapshot(workCwd);
    if (!snap) return { ok: false, error: `cannot read the worktree ${wt} of ${a.repo}` };
    const patchPath = resolve(a.runDir, a.changeset.patchFile);
    const prompt = rebasePrompt({
      prompt: rendered.resolved.prompt ?? rendered.resolved.run ?? '',
      ...(a.changeset.summary ? { summary: a.changeset.summary } : {}),
      base: a.changeset.base,
      fromCommit: a.changeset.baseCommit,
      baseCommit: a.baseCommit,
      oldPatch: existsSync(patchPath) ? readFileSync(patchPath, 'utf8') : '',
      patchFile: a.changeset.patchFile,
    });
    const inst: InstanceState = {
      id,
      task: task.id,
      index: 0,
      ...(rendered.resolved.item !== undefined ? { item: rendered.resolved.item } : {}),
      // A `run:` step runs its command again; an agent gets the rebase message as its first prompt.
      resolved: task.kind === 'run' ? rendered.resolved : { ...rendered.resolved, prompt },
      workCwd,
      status: 'running',
      attempt,
      usage: zeroUsage(),
      modifiedFiles: [],
      readFiles: [],
      durationMs: 0,
      sessionFiles: [],
      git: { root: a.repo, commit: a.baseCommit, tree: snap.tree, worktree: wt },
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
      estimate: (r, model) => admission.callEstimate(r.key, task, model),
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
    emit({ type: 'instance_rebase_start', ...ref, ...base, sessionFile: relative(store.dir, sessionFile(id)) });
    store.flush();
    const result = await runner.run(t, inst);
    if (!result.ok) {
      const error = `the re-run of ${a.inst.label} failed (${result.failure}): ${result.error}`;
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
      const error = `the re-run of ${a.inst.label} changed nothing on ${a.changeset.base} ${a.baseCommit.slice(0, 12)}; its changeset stays as it was`;
      end({ ok: false, failure: 'error', error, text: result.text });
      return { ok: false, error };
    }
    const patchFile = `patches/${id}.rebase-${attempt}.diff`;
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
    return { ok: true, attempt, patchFile, usage };
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
