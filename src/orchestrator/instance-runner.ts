// Running one attempt of one instance, by kind: an agent on a worker thread, a planner/worker
// pair on two threads joined by a MessageChannel, or a shell command for `run:` steps. Also the
// instance's workspace: a git snapshot (and a worktree with `isolation: worktree`) taken on the
// first attempt, so every later attempt and the final patch are measured from the same state.
import { existsSync, rmdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { ScriptedScript } from '../ai/scripted.js';
import { loadScriptFile } from '../ai/scripted-script.js';
import { AgentLaunch, type LaunchContext, type LaunchRef } from './agent-launch.js';
import { DEFAULT_RUN_LIMITS } from '../runtime/run-limits.js';
import { ORCHESTRATOR_DEFAULTS } from './defaults.js';
import {
  addWorktree,
  mayBeInGitRepo,
  relinkWorktree,
  removeWorktree,
  repoRoot,
  type DiffOutcome,
} from './git-workspace.js';
import { KeyedLock } from './keyed-lock.js';
import { RepoGitBatches } from './repo-git-batches.js';
import { RemoteRecorder, type RemoteUrls } from './repo-remotes.js';
import type { AgentSpec, InstanceTask } from './instance-task.js';
import type { WorkerResult } from './protocol.js';
import type { LoadedAgent, LoadedRecipe } from '../recipe/index.js';
import { addUsageSummary, zeroUsage, type FailureClass, type RunEventInput } from '../run/run-events.js';
import type { InstanceState, TaskState } from '../run/run-state.js';
import type { RunStore } from '../run/run-store.js';
import { runSecrets } from '../run/secrets.js';
import type { SecretValue } from '../session/redact.js';
import { protectedInputPaths } from '../run/run-inputs.js';
import { runCommand } from './verify.js';
import { enforceWriteScope } from './write-scope-check.js';
import { writeGlobs } from './write-scopes.js';
import { applyToCheckout, branchName, commitToBranch, type LandResult } from './worktree-merge.js';
import { warmProductGit } from '../tools/product-git.js';
import { probeSandboxAsync, resolveSandboxMode, type SandboxMode } from '../tools/sandbox.js';
import { isInside } from '../tools/workspace.js';

/** What the runner needs from the coordinator. */
export interface RunnerContext {
  recipe: LoadedRecipe;
  store: RunStore;
  env: Readonly<Record<string, string | undefined>>;
  fullEvents: boolean;
  /** Running agents per instance id (the coordinator aborts them on interrupt). */
  launches: Map<string, AgentLaunch[]>;
  shellSignal: AbortSignal;
  /** The signal of one `run:` step's command (default shellSignal): lets a user cancel that step alone. */
  shellSignalFor?(inst: InstanceState): AbortSignal;
  emit(e: RunEventInput): void;
  /** Where and how an agent of `inst` runs (its pool: shared threads, or a thread of its own). */
  launchContext(inst: InstanceState): LaunchContext;
  /** `context: summaries`: the merged plan of the tasks `t` needs. */
  contextFor(t: TaskState): string | undefined;
  /** Every task and instance of the run (the write-scope check must not revert a sibling's work). */
  siblings?(): Iterable<{ task: TaskState; inst: InstanceState }>;
  /** Where an agent's session is written (default: the store's sessions/<agent>.jsonl); a `publish --rebase` re-run starts one of its own. */
  sessionFile?(agentKey: string): string;
}

/** Why an attempt's workspace could not be prepared, and the class its failure gets. */
export interface WorkspaceProblem {
  failure: FailureClass;
  error: string;
}

const NOTE_REASON_DEFAULT = 'the run was interrupted';

/**
 * ORCHESTRATE_RETRY_BASE_MS: the first wait of model-call retries (429/529/5xx, cut streams) in
 * every agent, doubling per retry. Unset: the providers' and sessions' own defaults (1-2 s).
 * Tests and local proxies that fail fast set it low; a bad value is ignored.
 */
export function retryBaseDelayFromEnv(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.ORCHESTRATE_RETRY_BASE_MS;
  if (raw === undefined || raw.trim() === '') return undefined;
  const ms = Number(raw);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

export function agentSpec(a: LoadedAgent, scriptData?: ScriptedScript): AgentSpec {
  const spec: AgentSpec = {
    name: a.name,
    model: a.model,
    provider: a.provider,
    tools: a.tools,
    compaction: a.compaction,
    bash: a.bash,
    skills: a.skills,
    extensions: a.extensions,
  };
  if (a.modelSpec) spec.modelSpec = a.modelSpec;
  if (a.providerConfig) spec.providerConfig = a.providerConfig;
  if (a.fallback) spec.fallback = a.fallback;
  if (a.script) spec.script = a.script;
  if (scriptData) spec.scriptData = scriptData;
  if (a.system) spec.system = a.system;
  if (a.thinking) spec.thinking = a.thinking;
  if (a.summaries) spec.summaries = a.summaries;
  if (a.loop) spec.loop = a.loop;
  if (a.mcpServers) spec.mcpServers = a.mcpServers;
  if (a.mcpRepoPick) spec.mcpRepoPick = a.mcpRepoPick;
  if (a.disallowedTools) spec.disallowedTools = a.disallowedTools;
  if (a.commandHooks) spec.commandHooks = a.commandHooks;
  return spec;
}

/** A path of the original repository, inside the instance's worktree. */
function intoWorktree(inst: InstanceState, abs: string): string {
  const g = inst.git;
  if (!g?.worktree) return abs;
  const rel = relative(g.root, abs);
  return rel.startsWith('..') ? abs : join(g.worktree, rel);
}

export class InstanceRunner {
  /** One git operation at a time per repository (keyed-lock.ts). */
  private readonly gitLocks = new KeyedLock();
  /** Snapshots and landing diffs of one repository taken together, under its lock (repo-git-batches.ts). */
  private readonly gitBatches = new RepoGitBatches((root, fn) => this.withGitLock(root, fn));
  /** Each repository's remotes, read once before any agent runs there (repo-remotes.ts). */
  private readonly remoteReads = new RemoteRecorder();
  /** The run's secrets (run/secrets.ts), found once: every agent's session redacts the same set as the run's files. */
  private readonly secrets: SecretValue[];
  /** Scripts of the scripted provider, parsed once per run (undefined: unreadable, the thread reports why). */
  private readonly scripts = new Map<string, ScriptedScript | undefined>();

  constructor(private readonly ctx: RunnerContext) {
    this.secrets = ctx.recipe ? runSecrets(ctx.recipe, ctx.env) : [];
    // bwrap's probe (and, in a repository, product git's private home) started now by child
    // processes, awaited in run(): the coordinator's loop never blocks on them (issue 32).
    if (ctx.recipe?.dir && mayBeInGitRepo(ctx.recipe.dir)) warmProductGit();
    else void probeSandboxAsync();
  }

  /**
   * Runs one attempt of `inst` by the kind of its task; then, in a git workspace, changes outside
   * the task's `writes:` (made by bash, verify or a `run:` step) are reverted and fail the attempt.
   */
  async run(t: TaskState, inst: InstanceState): Promise<WorkerResult> {
    await probeSandboxAsync(); // sandboxFor's resolveSandboxMode then reads the cached probe
    const result =
      t.task.kind === 'run'
        ? await this.runShell(t, inst)
        : t.task.kind === 'pair'
          ? await this.runPair(t, inst)
          : await this.runAgent(t, inst);
    return enforceWriteScope(t, inst, result, this.ctx.siblings?.() ?? [], this, [dirname(this.ctx.store.dir)]);
  }

  private sandboxWarned = false;

  /**
   * The confinement of an instance's commands: the mode asked for, unless bwrap cannot work
   * here (probed once per process); then commands run unconfined and the run warns once.
   */
  sandboxFor(
    inst: InstanceState,
    requested: SandboxMode | undefined,
    network: boolean | undefined,
  ): NonNullable<InstanceTask['sandbox']> {
    const { mode, warning } = resolveSandboxMode({ mode: requested ?? 'workspace' });
    if (warning && !this.sandboxWarned) {
      this.sandboxWarned = true;
      this.ctx.emit({
        type: 'agent_event',
        task: inst.task,
        key: inst.id,
        attempt: inst.attempt,
        parent: inst.task,
        event: { type: 'notice', text: warning },
      });
    }
    // The runs folder (this run's and the others'): logs, sessions and patches are not the agent's to read or change.
    // The run's trusted inputs in its workspace (recipe.yaml, agent files, .mcp.json ...) stay read-only (run-inputs.ts).
    const cwd = inst.workCwd ?? inst.resolved?.cwd;
    const readOnly = cwd ? protectedInputPaths(this.ctx.store.dir).filter((p) => isInside(cwd, p)) : [];
    return {
      mode,
      network: network ?? false,
      hide: [dirname(this.ctx.store.dir)],
      ...(readOnly.length ? { readOnly } : {}),
    };
  }

  withGitLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
    return this.gitLocks.run(root, fn);
  }

  /**
   * What changed under `dir` since `baseTree`, diffed under `root`'s lock together with the other
   * instances finishing in the same work tree (`worktree`, else the repository's own).
   */
  diffSince(root: string, dir: string, baseTree: string | undefined, worktree?: string): Promise<DiffOutcome> {
    return this.gitBatches.diffSince(root, dir, baseTree, worktree);
  }

  /**
   * Lands the work of a finished worktree instance as its task's `merge:` says (worktree-merge.ts):
   * on a branch, or applied to the checkout. With `merge: patch`, or outside a worktree, nothing
   * happens. The worktree stays until the instance is logged done (dropWorktree).
   */
  async landWork(
    t: TaskState,
    inst: InstanceState,
    patch: string | undefined,
    patchName: string,
    text: string,
  ): Promise<LandResult> {
    const g = inst.git;
    if (t.task.merge === 'patch' || !g?.worktree) return { ok: true };
    const root = g.root;
    let landed: LandResult = { ok: true };
    if (patch?.trim()) {
      if (t.task.merge === 'branch') {
        if (!g.commit)
          return { ok: false, error: `cannot commit to a branch: the worktree of ${root} has no base commit` };
        const headline =
          text
            .split('\n')
            .map((l) => l.trim())
            .find((l) => l !== '') ?? 'done';
        const message = `${inst.id}: ${headline.length > 72 ? `${headline.slice(0, 69)}...` : headline}\n\nRun ${this.ctx.store.runId}, task ${t.task.id}, instance ${inst.id} (orchestrate).\n`;
        // The reply's first line goes into the repository: secrets are replaced as in every file of the run.
        landed = await this.withGitLock(root, () =>
          commitToBranch(
            root,
            g.commit!,
            branchName(this.ctx.store.runId, inst.id),
            patch,
            this.ctx.store.redactText(message),
          ),
        );
      } else landed = await this.withGitLock(root, () => applyToCheckout(root, patch, patchName));
    }
    return landed;
  }

  /**
   * Removes the worktree of a done instance whose work landed (merge: branch / apply): the branch
   * or the checkout holds it now, and its patch. Called after instance_done is logged, so a kill
   * in between leaves a worktree behind (removed by the next resume), never an instance whose
   * worktree is gone but that is not done.
   */
  async dropWorktree(t: TaskState, inst: InstanceState): Promise<void> {
    const g = inst.git;
    if (t.task.merge === 'patch' || !g?.worktree || !existsSync(g.worktree)) return;
    await this.withGitLock(g.root, () => removeWorktree(g.root, g.worktree!));
    // The run folder's worktrees/ goes with its last worktree (rmdir refuses while others remain).
    try {
      rmdirSync(dirname(g.worktree));
    } catch {
      // not empty, or already gone
    }
  }

  /**
   * Snapshot (and worktree) on the first attempt; a later attempt reuses them. A snapshot that
   * fails in a repository fails the attempt (class `workspace`): `writes:`, the patch and landing
   * measure from it, so running without one would let any change through unseen.
   */
  async prepareWorkspace(t: TaskState, inst: InstanceState): Promise<WorkspaceProblem | undefined> {
    const cwd = inst.resolved!.cwd;
    inst.workCwd = cwd;
    // A resumed run whose recorded repository no longer holds the cwd (the project moved while
    // the repository stayed where it was): the repository is the one the cwd is in now.
    if (inst.git && relative(inst.git.root, cwd).startsWith('..'))
      inst.git.root = (await repoRoot(cwd)) ?? inst.git.root;
    if (inst.git?.worktree) {
      const wt = inst.git.worktree;
      if (!existsSync(join(wt, '.git'))) {
        const r = await this.withGitLock(inst.git.root, () => addWorktree(inst.git!.root, wt, inst.git!.commit));
        if (!r.ok) return { failure: 'error', error: r.error };
      } else relinkWorktree(inst.git.root, wt);
      inst.workCwd = join(wt, relative(inst.git.root, cwd));
      return undefined;
    }
    if (inst.git) return undefined;
    if (!existsSync(cwd)) return { failure: 'error', error: `the working directory ${cwd} does not exist` };
    const root = await this.gitBatches.root(cwd);
    const remotes = root ? await this.remotesBefore(root, inst) : undefined;
    if (t.task.isolation === 'worktree') {
      if (!root)
        return {
          failure: 'error',
          error: `isolation: worktree needs the task's cwd (${cwd}) to be inside a git repository`,
        };
      const wt = join(this.ctx.store.dir, 'worktrees', inst.id);
      const commitSnap = await this.gitBatches.snapshot(root, root);
      if (!commitSnap.ok) return { failure: 'workspace', error: commitSnap.error };
      const r = await this.withGitLock(root, () => addWorktree(root, wt, commitSnap.commit));
      if (!r.ok) return { failure: 'error', error: r.error };
      inst.workCwd = join(wt, relative(root, cwd));
      const snap = await this.gitBatches.snapshot(root, inst.workCwd, wt);
      if (!snap.ok) return { failure: 'workspace', error: snap.error };
      inst.git = { root, commit: snap.commit, tree: snap.tree, worktree: wt, ...(remotes ? { remotes } : {}) };
      return undefined;
    }
    if (root) {
      // Taken with the other instances of this repository that start meanwhile: one shell for all.
      const snap = await this.gitBatches.snapshot(root, cwd);
      if (!snap.ok) return { failure: 'workspace', error: snap.error };
      inst.git = { root, commit: snap.commit, tree: snap.tree, ...(remotes ? { remotes } : {}) };
    }
    return undefined;
  }

  /**
   * The remotes `root` had before any agent ran there: those another instance of this run
   * recorded (a resumed run's agents ran before this process; a run recorded without them
   * records none now, as a read now could be the model's), else read once for the repository.
   */
  private async remotesBefore(root: string, inst: InstanceState): Promise<RemoteUrls | undefined> {
    for (const s of this.ctx.siblings?.() ?? [])
      if (s.inst !== inst && s.inst.git?.root === root) return s.inst.git.remotes;
    return this.remoteReads.of(root);
  }

  private script(path: string): ScriptedScript | undefined {
    if (!this.scripts.has(path)) {
      try {
        this.scripts.set(path, loadScriptFile(path));
      } catch {
        this.scripts.set(path, undefined);
      }
    }
    return this.scripts.get(path);
  }

  /** The session file of an agent (`inst` or `inst@worker`): the context's choice, else the run's sessions/<agent>.jsonl. */
  private sessionFile(agentKey: string): string {
    return this.ctx.sessionFile?.(agentKey) ?? this.ctx.store.sessionFile(agentKey);
  }

  sessionFilesOf(t: TaskState, inst: InstanceState): string[] {
    if (t.task.kind === 'pair') return [this.sessionFile(`${inst.id}@worker`), this.sessionFile(`${inst.id}@planner`)];
    return [this.sessionFile(inst.id)];
  }

  baseTask(
    t: TaskState,
    inst: InstanceState,
    agent: LoadedAgent,
  ): Omit<InstanceTask, 'port' | 'id' | 'role' | 'sessionFile' | 'summarize'> {
    const cwd = inst.workCwd ?? inst.resolved!.cwd;
    const writes = writeGlobs(inst.resolved?.cwd ?? t.task.dir, inst.resolved?.writes ?? []);
    const base: Omit<InstanceTask, 'port' | 'id' | 'role' | 'sessionFile' | 'summarize'> = {
      runId: this.ctx.store.runId,
      task: t.task.id,
      attempt: inst.attempt,
      parent: t.task.id,
      cwd,
      prompt: inst.resolved?.prompt ?? '',
      continueNote: ORCHESTRATOR_DEFAULTS.continueNote.replace('{reason}', inst.error ?? NOTE_REASON_DEFAULT),
      agent: agentSpec(agent, agent.script ? this.script(agent.script) : undefined),
      output: t.task.output,
      outputRetries: ORCHESTRATOR_DEFAULTS.outputRetries,
      verify: inst.resolved?.verify ?? [],
      verifyRetries: t.task.verifyRetries,
      env: inst.resolved?.env ?? {},
      fullEvents: this.ctx.fullEvents ?? false,
      maxTurns: t.task.maxTurns ?? agent.maxTurns ?? DEFAULT_RUN_LIMITS.maxTurns,
    };
    if (inst.attemptFailures?.some((f) => f.attempt === inst.attempt - 1)) base.afterFailure = true;
    if (writes.length) base.writeScope = writes.map((w) => relative(cwd, intoWorktree(inst, w)));
    if (t.task.trustRepoConfig) base.trustRepoConfig = true;
    base.sandbox = this.sandboxFor(
      inst,
      agent.sandbox ?? this.ctx.recipe.sandbox,
      agent.network ?? this.ctx.recipe.network,
    );
    if (t.task.outputSchema) base.outputSchema = t.task.outputSchema;
    const context = this.ctx.contextFor(t);
    if (context) base.contextMessage = context;
    if (t.task.timeoutMs) base.verifyTimeoutMs = t.task.timeoutMs;
    const key = this.ctx.env.ANTHROPIC_API_KEY;
    if (key) base.apiKey = key;
    const url = this.ctx.env.ANTHROPIC_BASE_URL;
    if (url) base.baseUrl = url;
    if (this.secrets.length) base.secrets = this.secrets;
    const retryBase = retryBaseDelayFromEnv(this.ctx.env);
    if (retryBase !== undefined) base.retryBaseDelayMs = retryBase;
    return base;
  }

  async runAgent(t: TaskState, inst: InstanceState): Promise<WorkerResult> {
    const agent = this.ctx.recipe.agents[t.task.agent ?? ''];
    if (!agent)
      return {
        ok: false,
        failure: 'error',
        error: `task ${t.task.id} names agent "${t.task.agent}", which the recipe does not define`,
        usage: zeroUsage(),
      };
    const ref: LaunchRef = {
      task: t.task.id,
      key: inst.id,
      attempt: inst.attempt,
      parent: t.task.id,
      scopes: ['run', `instance:${inst.id}`],
    };
    const task = {
      ...this.baseTask(t, inst, agent),
      id: inst.id,
      role: 'solo' as const,
      sessionFile: this.sessionFile(inst.id),
      summarize: true,
    };
    const launch = new AgentLaunch(this.ctx.launchContext(inst), ref, task, {
      timeoutMs: t.task.timeoutMs,
      idleTimeoutMs: t.task.idleTimeoutMs,
    });
    this.ctx.launches.set(inst.id, [launch]);
    try {
      return await launch.result;
    } finally {
      this.ctx.launches.delete(inst.id);
    }
  }

  async runPair(t: TaskState, inst: InstanceState): Promise<WorkerResult> {
    const pair = t.task.pair!;
    const planner = this.ctx.recipe.agents[pair.planner];
    const worker = this.ctx.recipe.agents[pair.worker];
    if (!planner || !worker)
      return {
        ok: false,
        failure: 'error',
        error: `pair of task ${t.task.id} names an agent the recipe does not define`,
        usage: zeroUsage(),
      };
    const channel = new MessageChannel();
    const limits = { timeoutMs: t.task.timeoutMs, idleTimeoutMs: t.task.idleTimeoutMs };
    const scopes = ['run', `instance:${inst.id}`];
    const member = (role: 'worker' | 'planner', agent: LoadedAgent, port: MessagePort) => {
      const key = `${inst.id}@${role}`;
      const ref: LaunchRef = { task: t.task.id, key, attempt: inst.attempt, parent: inst.id, scopes };
      const task = {
        ...this.baseTask(t, inst, agent),
        id: key,
        parent: inst.id,
        role: `pair-${role}` as const,
        sessionFile: this.sessionFile(key),
        summarize: role === 'worker',
        maxRounds: pair.maxRounds,
        onMaxRounds: pair.onMaxRounds,
        peerPort: port,
      };
      // The planner only reviews: verify and JSON output apply to the worker's result.
      if (role === 'planner') Object.assign(task, { verify: [], output: 'text' as const });
      return new AgentLaunch(this.ctx.launchContext(inst), ref, task, limits);
    };
    const launches = [member('worker', worker, channel.port1), member('planner', planner, channel.port2)];
    this.ctx.launches.set(inst.id, launches);
    try {
      const [w, p] = await Promise.all(launches.map((l) => l.result));
      const usage = addUsageSummary(w!.usage, p!.usage);
      if (w!.ok && p!.ok) return { ...w!, usage };
      // The member that failed first is the cause; the other one usually only lost its partner.
      const primary =
        !p!.ok &&
        ['crashed', 'timeout', 'stalled', 'budget', 'rate_limit', 'overloaded'].includes(p!.failure) &&
        (w!.ok || !['crashed', 'timeout', 'stalled', 'budget'].includes(w!.failure))
          ? p!
          : w!.ok
            ? p!
            : w!;
      if (primary.ok) return { ...primary, usage };
      const who = primary === p ? 'planner' : 'worker';
      return { ...primary, error: `${who}: ${primary.error}`, usage };
    } finally {
      this.ctx.launches.delete(inst.id);
    }
  }

  async runShell(t: TaskState, inst: InstanceState): Promise<WorkerResult> {
    const sandbox = this.sandboxFor(inst, this.ctx.recipe.sandbox, this.ctx.recipe.network);
    const cwd = inst.workCwd ?? inst.resolved!.cwd;
    const r = await runCommand(inst.resolved!.run ?? '', {
      cwd,
      env: inst.resolved!.env,
      timeoutMs: t.task.timeoutMs,
      signal: this.ctx.shellSignalFor?.(inst) ?? this.ctx.shellSignal,
      sandbox,
    });
    this.ctx.emit({
      type: 'agent_event',
      task: t.task.id,
      key: inst.id,
      attempt: inst.attempt,
      parent: t.task.id,
      event: {
        type: 'command_end',
        command: r.command,
        exitCode: r.exitCode,
        output: r.output,
        durationMs: r.durationMs,
      },
    });
    if (r.ok)
      return { ok: true, text: r.output, usage: zeroUsage(), modifiedFiles: [], readFiles: [], verifyAttempts: 0 };
    const failure: FailureClass = r.timedOut ? 'timeout' : r.aborted ? 'aborted' : 'error';
    const tail = r.output.trim().split('\n').slice(-5).join(' | ');
    return {
      ok: false,
      failure,
      error: `\`${r.command}\` ${r.timedOut ? 'timed out' : `exited with ${r.exitCode ?? r.signal}`}${tail ? `: ${tail}` : ''}`,
      usage: zeroUsage(),
    };
  }
}
