// The agent of one instance attempt, inside a worker thread: built with the runtime's
// createAgentSession (the same factory the single-agent CLI uses) on the instance's own session
// file, its stream function wrapped so every model call (turns, summaries, compactions) takes a
// permit from the coordinator, its events forwarded, peer messages steered in. Also the checks
// that run in the same session after the agent finishes (verify commands, JSON output) and the
// handoff summary. Every outcome is data (a RunOutcome or a WorkerResult), never a throw.
import type { AgentMessage, CustomMessage, PeerMessage } from '../../agent/types.js';
import { modelFromSpec, resolveModel, scriptedModel } from '../../ai/models.js';
import { modelForProvider } from '../../ai/provider-config.js';
import { registerBuiltInProviders } from '../../ai/providers.js';
import { stream as registryStream } from '../../ai/registry.js';
import { withFallback, type FallbackEntry } from '../../ai/fallback-stream.js';
import { fallbackEntry, routeMessage } from './fallback-models.js';
import { createScriptedProvider } from '../../ai/scripted.js';
import type { AssistantMessage, Model, StreamFunction } from '../../ai/types.js';
import type { AgentSession } from '../../runtime/agent-session.js';
import { createAgentSession } from '../../runtime/create-agent-session.js';
import { mcpOptionsFor, namesAbsentServer } from './agent-mcp.js';
import { commandHooksFor } from './agent-hooks.js';
import { buildExtractiveSummary } from '../../runtime/extractive-summary.js';
import { planResume } from '../../runtime/session-resume.js';
import { isRunStoppedError, type RunStoppedError } from '../../runtime/run-limits.js';
import type { AgentSessionEvent } from '../../runtime/session-events.js';
import { classifyReplyError, type FailureReason, failureText } from '../schedule/failure-policy.js';
import type { InstanceTask } from '../execution/instance-task.js';
import { outputFixPrompt, parseJsonOutput } from '../execution/output-json.js';
import { withPermits, type PermitChannel } from './permitted-stream.js';
import type { WorkerResult } from '../protocol.js';
import {
  addUsageSummary,
  zeroUsage,
  type BudgetScope,
  type FailureClass,
  type UsageSummary,
} from '../../run/usage-summary.js';
import { countsAsTurn } from '../../run/turn-count.js';
import { createSendMessageTool } from './send-message-tool.js';
import { createBoardTools, isBoardTool } from './board-tools.js';
import { runCommand, verifyFailedError, verifyFailurePrompt, type CommandResult } from '../workspace/verify.js';
import type { WorkerLink } from './worker-link.js';
import { HANDOFF_FOCUS } from '../schedule/handoff-focus.js';
import { applyLearnedWindow, reportLearnedWindows } from './shared-windows.js';

/** What a finished prompt left behind. */
/** `detail`: a stop's reason without its class's wording; `budgetScope`: whose budget refused (failure `budget`). */
export type RunOutcome =
  | { ok: true }
  | { ok: false; failure: FailureClass; error: string; budgetScope?: BudgetScope; detail?: string };

/** Minimum gap between two "progress" heartbeats (the idle watchdog only needs a sign of life). */
const PROGRESS_INTERVAL_MS = 1_000;
/**
 * Minimum gap between two `partial` messages while someone watches: a model streams tens of
 * deltas a second and each message carries the whole text so far, so this caps the traffic (and
 * Redis writes in a distributed run) at 10 a second; a viewer polls every ~200 ms anyway.
 */
const PARTIAL_INTERVAL_MS = 100;
/** The most of the text being written that one `partial` carries (its end: what a screen shows). */
export const PARTIAL_TAIL_CHARS = 16_000;

function textOf(m: AgentMessage | undefined): string {
  if (m?.role !== 'assistant') return '';
  return m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** Drops what a log does not need (partials, whole histories) from a session event. */
export function slimEvent(event: AgentSessionEvent): Record<string, unknown> & { type: string } {
  switch (event.type) {
    case 'message_update': {
      const { partial: _partial, ...rest } = event.assistantMessageEvent as { partial?: unknown } & Record<
        string,
        unknown
      >;
      return { type: event.type, assistantMessageEvent: rest };
    }
    case 'message_start':
      return event.message.role === 'assistant'
        ? { type: event.type, role: 'assistant' }
        : { type: event.type, message: event.message };
    case 'agent_end':
      return { type: event.type, messageCount: event.messages.length };
    case 'turn_end':
      return {
        type: event.type,
        stopReason: event.message.stopReason,
        usage: event.message.usage,
        toolResults: event.toolResults.length,
      };
    case 'tool_execution_update':
      return {
        type: event.type,
        toolCallId: event.toolCallId,
        toolName: event.toolName,
        partialResult: event.partialResult,
      };
    default:
      return event as unknown as Record<string, unknown> & { type: string };
  }
}

/**
 * What a runtime guard's stop says in `show`, the summary and result.json. The runtime counts
 * turns per prompt, and a fix-up prompt gets only what the attempt has left, so max_turns is
 * told as the attempt's cap.
 */
function stoppedText(err: RunStoppedError, maxTurns: number): string {
  switch (err.kind) {
    case 'max_turns':
      return `Stopped: ${maxTurns} turns (max_turns ${maxTurns}, counted over the attempt's task prompt and its verify and output fix-ups). Raise max_turns on the task or its agent if the work needs more.`;
    default:
      // loop and compaction: the runtime's message names the pattern and the recipe key to change.
      return err.message;
  }
}

/** A running agent of one instance attempt: session, link to the coordinator, spend so far. */
export class AgentHost {
  usage: UsageSummary = zeroUsage();
  /** Model turns of this attempt so far, over all its prompts (max_turns counts these). */
  turnsUsed = 0;
  /** Set by an abort message (timeout, stall, interrupt) or a refused permit (a budget's names whose). */
  stopReason: FailureReason | undefined;
  private lastPost = 0;
  /** Peer messages that arrived mid-turn, waiting for the turn to end. */
  private readonly inbox: PeerMessage[] = [];
  /** The assistant message being written now (from its latest delta), for a watcher. */
  private writing: AssistantMessage | undefined;
  private lastPartialPost = 0;
  private partialTimer: NodeJS.Timeout | undefined;
  private stopReportingWindows: (() => void) | undefined;

  private constructor(
    readonly task: InstanceTask,
    readonly link: WorkerLink,
    readonly session: AgentSession,
  ) {}

  /** Builds the session; a configuration problem is a failed outcome, not a throw. */
  static async open(task: InstanceTask, link: WorkerLink): Promise<AgentHost | { error: string }> {
    let host: AgentHost | undefined;
    const metered: PermitChannel = {
      request: async (model, kind, signal, provider, info) => {
        const r = await link.request(model, kind, signal, provider, info);
        // A refused permit stops the agent at once: waiting for a retry would only be refused again.
        if (!r.ok && r.reason !== 'aborted' && host && !host.stopReason) {
          host.stop(
            r.budget
              ? { failure: 'budget', detail: r.reason, scope: r.budget }
              : { failure: 'aborted', detail: r.reason },
          );
        }
        return r;
      },
      started: (slot, at, heard) => link.started(slot, at, heard),
      usage: (slot, model, usage, provider) => {
        // Turns are counted from turn_end (forward), not per call: summaries and retries are calls, not turns.
        if (host) host.usage = addUsageSummary(host.usage, { ...usage, turns: 0 });
        link.usage(slot, model, usage, provider);
      },
      rateLimited: (model, delayMs, status, provider) => link.rateLimited(model, delayMs, status, provider),
    };
    try {
      const a = task.agent;
      let base: StreamFunction;
      /** Where calls move when the model stays overloaded or down (recipe fallback:; real providers only). */
      let fallback: FallbackEntry[] = [];
      // A model the recipe declares (models:) brings its own limits, offline too.
      let model: Model | string =
        a.modelSpec && a.provider === 'scripted'
          ? scriptedModel({ id: a.model, contextWindow: a.modelSpec.contextWindow, maxTokens: a.modelSpec.maxTokens })
          : a.model;
      if (a.provider === 'scripted') {
        if (!a.script) return { error: `agent "${a.name}" uses the scripted provider but has no script` };
        // Parsed by the coordinator; loading it here (and the YAML parser with it) is the fallback.
        const script = a.scriptData ?? (await import('../../ai/scripted-script.js')).loadScriptFile(a.script);
        base = createScriptedProvider(script, { record: false });
      } else {
        registerBuiltInProviders();
        base = registryStream;
        const resolved = a.providerConfig
          ? modelForProvider(a.providerConfig, a.model, a.modelSpec)
          : a.modelSpec
            ? modelFromSpec(a.model.replace(/^anthropic\//, ''), a.modelSpec)
            : resolveModel(a.model, 'anthropic');
        // ANTHROPIC_BASE_URL re-points the anthropic provider only; a declared endpoint keeps its own.
        model = task.baseUrl && !a.providerConfig ? { ...resolved, baseUrl: task.baseUrl } : resolved;
        fallback = (a.fallback ?? []).map((f) => fallbackEntry(f, task));
      }
      // MCP servers: ${VAR}s expand here, with this thread's environment and the task's env. A
      // server that cannot start (or dies for good) stops the agent: mcp_unavailable, with why.
      let mcpDown: string | undefined;
      const mcp = mcpOptionsFor(task, (_server, reason) => {
        if (host) host.stop({ failure: 'mcp_unavailable', detail: reason });
        else mcpDown ??= reason;
      });
      if ('error' in mcp) return { error: mcp.error };
      for (const text of mcp.notices) link.post({ type: 'event', event: { type: 'notice', text } });
      // Command hooks: the recipe's sources, and the repository's settings when the task trusts it.
      const hooks = commandHooksFor(task);
      if ('error' in hooks) return { error: hooks.error };
      for (const text of hooks.notices) link.post({ type: 'event', event: { type: 'notice', text } });
      const session = await createAgentSession({
        cwd: task.cwd,
        ...(hooks.config ? { commandHooks: hooks.config } : {}),
        writeScope: task.writeScope,
        tools: a.tools.filter((t) => t !== 'send_message' && !isBoardTool(t) && !namesAbsentServer(t, mcp)),
        customTools: [
          createSendMessageTool(link, task.id),
          ...createBoardTools(link, task.id, a.tools.filter(isBoardTool)),
        ],
        bashPolicy: { allow: a.bash.allow, deny: a.bash.deny },
        toolOptions: { bash: { env: task.env, ...(task.sandbox ? { sandbox: task.sandbox } : {}) } },
        appendSystemPrompt: a.system,
        skillsDirs: a.skills,
        defaultSkills: false,
        model,
        provider: a.provider,
        // Fallback outside the permits: each request takes the permit (limits, budget, price) of the model that serves it.
        streamFn: withFallback(withPermits(base, metered), fallback, { onRoute: (r) => link.post(routeMessage(r)) }),
        // A declared provider's key is read from this machine's environment (api_key_env), so a
        // distributed worker uses its own; the coordinator's ANTHROPIC_API_KEY is not sent to it.
        ...(a.providerConfig ? {} : { apiKey: task.apiKey }),
        ...(task.secrets || mcp.secrets.length ? { secrets: [...(task.secrets ?? []), ...mcp.secrets] } : {}),
        ...(mcp.options ? { mcp: mcp.options } : {}),
        ...(task.retryBaseDelayMs !== undefined
          ? {
              retry: { baseDelayMs: task.retryBaseDelayMs },
              streamOptions: { retryBaseDelayMs: task.retryBaseDelayMs },
            }
          : {}),
        thinkingLevel: a.thinking,
        ...(a.summaries ? { summaries: a.summaries } : {}),
        compaction: a.compaction,
        ...(a.loop ? { loopDetection: a.loop } : {}),
        limits: { maxTurns: task.maxTurns },
        sessionFile: task.sessionFile,
        extensions: a.extensions,
        notify: (text) => link.post({ type: 'event', event: { type: 'notice', text } }),
      });
      host = new AgentHost(task, link, session);
      if (mcpDown !== undefined) host.stop({ failure: 'mcp_unavailable', detail: mcpDown });
      return host;
    } catch (err) {
      return { error: `cannot start agent "${task.agent.name}": ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /** Wires events and coordinator messages; call once before the first prompt. */
  attach(): void {
    this.session.subscribe((event) => this.forward(event));
    this.stopReportingWindows = reportLearnedWindows(this.link);
    this.link.setHandlers({
      windowLearned: (w) => applyLearnedWindow(this.session, w),
      deliver: (from, text) => this.deliver(from, text),
      abort: (reason) => this.stop(reason),
      wrapUp: (text) => {
        if (this.session.isStreaming) this.session.steer(text);
      },
      stream: (on) => {
        this.clearPartialTimer();
        // Also when not writing (''): it replaces a partial of an earlier stream that arrived late.
        if (on) this.postPartial();
      },
    });
  }

  /** The text being written, as a watcher sees it (its tail when long). */
  private partialText(): string {
    const text = this.writing ? textOf(this.writing) : '';
    return text.length > PARTIAL_TAIL_CHARS ? `…${text.slice(-PARTIAL_TAIL_CHARS)}` : text;
  }

  private postPartial(): void {
    this.clearPartialTimer();
    this.lastPartialPost = Date.now();
    this.link.post({ type: 'partial', text: this.partialText() });
  }

  private clearPartialTimer(): void {
    if (this.partialTimer) clearTimeout(this.partialTimer);
    this.partialTimer = undefined;
  }

  /** Streaming on: the text so far, at most every PARTIAL_INTERVAL_MS, the latest delta always sent last. */
  private trackPartial(event: AgentSessionEvent): void {
    if (event.type === 'message_update') this.writing = event.message;
    else if (event.type === 'message_end' || event.type === 'agent_end') {
      const was = this.writing;
      this.writing = undefined;
      // Complete: the session file has it now, the watcher shows it from there.
      if (was && this.link.streaming) this.postPartial();
      return;
    } else return;
    if (!this.link.streaming || this.partialTimer) return;
    const wait = PARTIAL_INTERVAL_MS - (Date.now() - this.lastPartialPost);
    if (wait <= 0) this.postPartial();
    else this.partialTimer = setTimeout(() => this.postPartial(), wait);
  }

  private forward(event: AgentSessionEvent): void {
    // A turn just ended: the loop polls steering next, the one point where a peer message does
    // not cancel tool calls of the same batch.
    if (event.type === 'turn_end' || event.type === 'agent_end') this.flushInbox();
    // One definition of a turn for max_turns and every count a user reads (run/turn-count.ts).
    if (event.type === 'turn_end' && countsAsTurn(event.message.stopReason)) {
      this.turnsUsed++;
      this.usage = { ...this.usage, turns: (this.usage.turns ?? 0) + 1 };
    }
    this.trackPartial(event);
    const partial = event.type === 'message_update' || event.type === 'tool_execution_update';
    if (partial && !this.task.fullEvents) {
      this.progress();
      return;
    }
    this.lastPost = Date.now();
    this.link.post({ type: 'event', event: slimEvent(event) });
  }

  /** A heartbeat for the idle watchdog, at most once per PROGRESS_INTERVAL_MS. */
  progress(): void {
    const now = Date.now();
    if (now - this.lastPost < PROGRESS_INTERVAL_MS) return;
    this.lastPost = now;
    this.link.post({ type: 'progress' });
  }

  /**
   * A peer message: steered in after the current turn (steering taken during a tool batch would
   * skip the batch's remaining tool calls), or at the start of the next prompt when idle.
   */
  deliver(from: string, text: string): void {
    const message: PeerMessage = { role: 'peer', from, text, timestamp: Date.now() };
    if (this.session.isStreaming) this.inbox.push(message);
    else this.session.agent.steer(message);
  }

  private flushInbox(): void {
    for (const m of this.inbox.splice(0)) this.session.agent.steer(m);
  }

  /**
   * The agent is done: SubagentStop hooks run (Claude Code's event for a subagent finishing). A
   * block (exit 2) sends the agent back to work once with the hook's reason, as Stop hooks do.
   */
  async subagentStop(): Promise<RunOutcome> {
    const agent = { id: this.task.id, type: this.task.agent.name };
    const verdict = await this.session.subagentStop(agent, false);
    if (!verdict?.blocked || this.stopReason) return { ok: true };
    const again = await this.run(`SubagentStop hook feedback:\n${verdict.reason ?? ''}`);
    if (!again.ok) return again;
    const second = await this.session.subagentStop(agent, true);
    if (second?.blocked)
      this.link.post({
        type: 'event',
        event: {
          type: 'notice',
          text: `warning: a SubagentStop hook blocked the stop again after the agent went on once; the agent stops here. It said: ${second.reason ?? ''}`,
        },
      });
    return { ok: true };
  }

  stop(reason: FailureReason): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    void this.session.abort();
  }

  /** The outcome of a stop: its reason as the sentence users read, and as data. */
  private stopped(reason: FailureReason): RunOutcome {
    return {
      ok: false,
      failure: reason.failure,
      error: failureText(reason),
      detail: reason.detail,
      ...(reason.scope ? { budgetScope: reason.scope } : {}),
    };
  }

  /**
   * Sends one prompt and reports how the run ended. The attempt's max_turns is shared by all its
   * prompts: each gets the turns the earlier ones left.
   */
  async run(text: string | { resume: string | undefined }): Promise<RunOutcome> {
    if (this.stopReason) return this.stopped(this.stopReason);
    const cap = this.task.maxTurns;
    if (cap > 0) {
      const remaining = cap - this.turnsUsed;
      if (remaining <= 0)
        return {
          ok: false,
          failure: 'max_turns',
          error: `Stopped: all ${cap} turns of max_turns were used before this fix-up prompt (verify or output) could run. Raise max_turns on the task or its agent if the work needs more.`,
        };
      this.session.setLimits({ maxTurns: remaining });
    }
    try {
      // { resume }: the session goes on where its loop stopped (AgentSession.resume), `resume` being the optional note.
      if (typeof text === 'string') await this.session.prompt(text);
      else await this.session.resume(text.resume);
    } catch (err) {
      if (isRunStoppedError(err)) return { ok: false, failure: err.kind, error: stoppedText(err, cap) };
      return { ok: false, failure: 'error', error: err instanceof Error ? err.message : String(err) };
    }
    if (this.stopReason) return this.stopped(this.stopReason);
    const last = [...this.session.messages].reverse().find((m) => m.role === 'assistant');
    if (last?.role !== 'assistant') return { ok: false, failure: 'error', error: 'the agent produced no reply' };
    if (last.stopReason === 'error') {
      const error = last.errorMessage ?? 'model call failed';
      return { ok: false, failure: classifyReplyError(last), error };
    }
    if (last.stopReason === 'aborted') return { ok: false, failure: 'aborted', error: last.errorMessage ?? 'aborted' };
    return { ok: true };
  }

  /**
   * The first prompt of this attempt: the task on a fresh session (followed by the merged plan of
   * the tasks it needs, as a custom message). A used session (resume, retry) goes on where its
   * loop stopped: a finished answer makes no request, a pending turn or cut-off tool calls
   * continue without a new message. The continue note is sent only after a failed or aborted
   * reply (inside the turn that reply would have answered) and, on a retry after a failed
   * attempt, after a finished answer.
   */
  start(prompt: string = this.task.prompt): Promise<RunOutcome> {
    // Killed after the summary that followed the final answer: the work is done, nothing to ask.
    if (!this.stopReason && this.answerBeforeCompaction()) return Promise.resolve({ ok: true });
    const plan = planResume(this.session.messages);
    if (plan.point.kind !== 'empty') {
      const note = plan.dropped.length > 0 || (this.task.afterFailure === true && plan.point.kind === 'finished');
      return this.run({ resume: note ? this.task.continueNote : undefined });
    }
    if (this.session.messages.length === 0 && this.task.contextMessage) {
      // Steering queued before the run is taken right after the prompt, before the first model call.
      const note: CustomMessage = {
        role: 'custom',
        customType: 'merged-plan',
        content: this.task.contextMessage,
        display: true,
        timestamp: Date.now(),
      };
      this.session.agent.steer(note);
    }
    return this.run(prompt);
  }

  lastText(): string {
    return (
      this.session.lastAssistantText() ??
      textOf([...this.session.messages].reverse().find((m) => m.role === 'assistant') ?? this.answerBeforeCompaction())
    );
  }

  /**
   * The final answer of a session whose context is a compaction summary alone (the handoff
   * summary, or a compaction that kept nothing, written after that answer): the answer is only on
   * the path, before the compaction. Undefined when the session does not end that way.
   */
  private answerBeforeCompaction(): AssistantMessage | undefined {
    const messages = this.session.messages;
    if (messages.length !== 1 || messages[0]!.role !== 'compactionSummary') return undefined;
    const path = this.session.store.currentPath();
    let i = path.length - 1;
    while (i >= 0 && path[i]!.type !== 'compaction') i--;
    for (i--; i >= 0; i--) {
      const e = path[i]!;
      if (e.type === 'message')
        return e.message.role === 'assistant' && planResume([e.message]).point.kind === 'finished'
          ? e.message
          : undefined;
      if (e.type === 'custom_message' || e.type === 'branch_summary' || e.type === 'compaction') return undefined;
    }
    return undefined;
  }

  /**
   * The instance's structured summary for the parent plan: the whole session compacted (nothing
   * kept verbatim), so a real model writes it, key decisions and next steps included, through a
   * permit like any call; offline (scripted) sessions build it from the conversation. When the
   * compaction fails, it is built from the conversation (or taken from a compaction at the leaf).
   * Read the agent's answer before this: afterwards the context is the summary alone.
   */
  async handoffSummary(): Promise<string | undefined> {
    try {
      return (await this.session.compact(HANDOFF_FOCUS, { keepRecentTokens: 0 })).summary;
    } catch {
      const path = this.session.store.currentPath();
      const lastEntry = path[path.length - 1];
      if (lastEntry?.type === 'compaction') return lastEntry.summary;
      if (this.session.messages.length === 0) return undefined;
      return buildExtractiveSummary({ messages: this.session.messages }).summary;
    }
  }

  async close(): Promise<void> {
    this.clearPartialTimer();
    this.stopReportingWindows?.();
    try {
      await this.session.dispose();
    } catch {
      // the session file is closed as far as it can be; nothing else to do
    }
  }
}

/** Runs the verify commands in order; the first failure, or undefined when all pass. */
async function verifyOnce(host: AgentHost): Promise<CommandResult | undefined> {
  const t = host.task;
  for (const step of t.verify) {
    const beat = setInterval(() => host.progress(), 2 * PROGRESS_INTERVAL_MS);
    let r: CommandResult;
    try {
      r = await runCommand(step.run, {
        cwd: t.cwd,
        env: t.env,
        timeoutMs: t.verifyTimeoutMs,
        ...(t.sandbox ? { sandbox: t.sandbox } : {}),
      });
    } finally {
      clearInterval(beat);
    }
    host.link.post({ type: 'verify', command: step.run, ok: r.ok, output: r.output });
    if (!r.ok) return r;
  }
  return undefined;
}

/** verify (fed back into the same session up to verifyRetries), then the JSON output check. */
export async function checkWork(host: AgentHost): Promise<RunOutcome & { verifyAttempts: number }> {
  const t = host.task;
  let verifyAttempts = 0;
  if (t.verify.length > 0) {
    for (let round = 0; ; round++) {
      const failed = await verifyOnce(host);
      verifyAttempts++;
      if (!failed) break;
      if (round >= t.verifyRetries) {
        return { ok: false, failure: 'verify_failed', error: verifyFailedError(failed, round + 1), verifyAttempts };
      }
      const r = await host.run(verifyFailurePrompt(failed, round + 1, t.verifyRetries + 1));
      if (!r.ok) return { ...r, verifyAttempts };
    }
  }
  if (t.output === 'json') {
    for (let i = 0; ; i++) {
      const check = parseJsonOutput(host.lastText(), t.outputSchema);
      if (check.ok) break;
      if (i >= t.outputRetries) return { ok: false, failure: 'output_invalid', error: check.error, verifyAttempts };
      const r = await host.run(outputFixPrompt(check.error, t.outputSchema));
      if (!r.ok) return { ...r, verifyAttempts };
    }
  }
  return { ok: true, verifyAttempts };
}

export function failedResult(
  host: AgentHost | undefined,
  outcome: { failure: FailureClass; error: string; budgetScope?: BudgetScope; detail?: string },
  summary?: string,
): WorkerResult {
  // The reason's data goes along: whose budget refused decides whether the whole run stops.
  const r: WorkerResult = {
    ok: false,
    failure: outcome.failure,
    error: outcome.error,
    ...(outcome.budgetScope ? { budgetScope: outcome.budgetScope } : {}),
    ...(outcome.detail !== undefined ? { detail: outcome.detail } : {}),
    usage: host?.usage ?? zeroUsage(),
  };
  if (summary !== undefined) r.summary = summary;
  return r;
}

export async function succeededResult(
  host: AgentHost,
  verifyAttempts: number,
  extra: Partial<Extract<WorkerResult, { ok: true }>> = {},
): Promise<WorkerResult> {
  const text = host.lastText();
  const summary = host.task.summarize ? await host.handoffSummary() : undefined;
  const r: WorkerResult = {
    ok: true,
    text,
    usage: host.usage,
    modifiedFiles: [],
    readFiles: [],
    verifyAttempts,
    ...extra,
  };
  if (summary !== undefined) r.summary = summary;
  return r;
}
