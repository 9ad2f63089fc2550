// Running one attempt of one instance, by kind: an agent on a worker thread, a planner/worker
// pair on two threads joined by a MessageChannel, or a shell command for `run:` steps. The
// instance's workspace (snapshot, worktree, diff, `writes:`, landing) is Workspaces'
// (workspaces.ts): the runner asks it for the sandbox's paths and the write-scope check.
import { join, relative } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { ScriptedScript } from '../../ai/scripted.js';
import { loadScriptFile } from '../../ai/scripted-script.js';
import { AgentLaunch, type LaunchContext, type LaunchRef } from './agent-launch.js';
import { DEFAULT_RUN_LIMITS } from '../../runtime/run-limits.js';
import { ORCHESTRATOR_DEFAULTS } from '../defaults.js';
import type { AgentSpec, InstanceTask } from './instance-task.js';
import type { WorkerResult } from '../protocol.js';
import type { LoadedAgent, LoadedRecipe } from '../../recipe/index.js';
import { addUsageSummary, zeroUsage, type FailureClass, type RunEventInput } from '../../run/run-events.js';
import type { InstanceState, TaskState } from '../../run/run-state.js';
import type { RunStore } from '../../run/run-store.js';
import { runSecrets } from '../../run/secrets.js';
import type { SecretValue } from '../../session/redact.js';
import { runCommand } from '../workspace/verify.js';
import { writeGlobs } from '../workspace/write-scopes.js';
import { probeSandboxAsync, resolveSandboxMode, type SandboxMode } from '../../tools/sandbox.js';
import type { Workspaces } from '../workspace/workspaces.js';

/** What the runner needs from the coordinator. */
export interface RunnerContext {
  recipe: LoadedRecipe;
  store: RunStore;
  /** The run's workspaces (workspaces.ts): the sandbox's paths and the write-scope check. */
  workspaces: Workspaces;
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
  /** Where an agent's session is written (default: the store's sessions/<agent>.jsonl); a `publish --rebase` re-run starts one of its own. */
  sessionFile?(agentKey: string): string;
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
  /** The run's secrets (run/secrets.ts), found once: every agent's session redacts the same set as the run's files. */
  private readonly secrets: SecretValue[];
  /** Scripts of the scripted provider, parsed once per run (undefined: unreadable, the thread reports why). */
  private readonly scripts = new Map<string, ScriptedScript | undefined>();

  constructor(private readonly ctx: RunnerContext) {
    this.secrets = ctx.recipe ? runSecrets(ctx.recipe, ctx.env) : [];
    // bwrap's probe (and, in a repository, product git's private home) started now by child
    // processes, awaited in run(): the coordinator's loop never blocks on them (issue 32).
    ctx.workspaces.warm();
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
    return this.ctx.workspaces.checkWrites(t, inst, result);
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
    // The runs folder hidden, the run's trusted inputs in the workspace read-only (workspaces.ts).
    return { mode, network: network ?? false, ...this.ctx.workspaces.sandboxPaths(inst) };
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
    // An attempt of `attempts:` may run another model's copy of the agent (models:).
    const agentName = inst.resolved?.agent ?? t.task.agent;
    const agent = this.ctx.recipe.agents[agentName ?? ''];
    if (!agent)
      return {
        ok: false,
        failure: 'error',
        error: `task ${t.task.id} names agent "${agentName}", which the recipe does not define`,
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
