// AgentSession: one agent with a persistent session (kernel-spec 9.1). It wires the Agent to a
// SessionStore, persists every message in order, retries transient provider errors, compacts
// (after a run past the threshold, and once to recover from an overflow), and offers the
// session-level operations every delivery form needs: prompt, steer, follow-up, abort, compact,
// navigate, fork, model and thinking changes, stats. Events go out as one typed union.
//
// Event pipeline: the Agent's listener runs synchronously per event; persistence happens there
// (so the file order is the event order however slow a subscriber is), then listeners are
// called, then async hooks (onEvent, extension `event` handlers) are chained on one promise so
// they run strictly in order. That chain is awaited before each tool call and before prompt()
// returns, so hooks always see a finished picture.
import { dirname } from 'node:path';
import { Agent, type AgentStreamOptions, type QueueMode } from '../agent/agent.js';
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentThinkingLevel,
  AnyAgentTool,
  BeforeToolCallContext,
  BeforeToolCallResult,
} from '../agent/types.js';
import { complete as registryComplete } from '../ai/registry.js';
import type { AssistantMessage, ImageContent, Model, StreamFunction, StreamOptions, UserMessage } from '../ai/types.js';
import { BRANCH_SUMMARY_PREAMBLE, collectEntriesForBranchSummary, navigateTree, prepareBranchEntries, type NavigateOptions } from '../session/branch-summary.js';
import { runCompaction, type CompactionHookDecision, type CompactionOutcome } from '../session/compaction-job.js';
import { DEFAULT_COMPACTION_SETTINGS, SESSION_DEFAULTS, type CompactionSettings } from '../session/defaults.js';
import type { CompactionPreparation } from '../session/prepare-compaction.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompleteFunction } from '../session/summarize.js';
import type { SessionHeader } from '../session/types.js';
import { expandSkillCommand, type Skill } from '../tools/skills.js';
import { chainSuppliers, checkCompaction, type CompactionCheckInput, extractiveSupplier, predatesLatestCompaction, OVERFLOW_EXHAUSTED_TEXT, type SummarySupplier } from './auto-compaction.js';
import { DEFAULT_RETRY_SETTINGS, type RetrySettings } from './defaults.js';
import { emptyExtensions, type ExtensionCommandContext, type LoadedExtensions } from './extensions.js';
import { buildExtractiveSummary } from './extractive-summary.js';
import { isRetryableError, retryDelay, sleepUnlessAborted } from './retry-policy.js';
import type { AgentSessionEvent, AgentSessionListener, CompactionResult } from './session-events.js';
import { computeStats, type SessionStats } from './stats.js';

/** Hooks a host (SDK user, orchestrator worker) attaches to a session. */
export interface AgentSessionHooks {
  beforeToolCall?: AgentLoopConfig['beforeToolCall'];
  afterToolCall?: AgentLoopConfig['afterToolCall'];
  /** Before each model call: may swap the model, system prompt or context (e.g. inject peer notes). */
  beforeTurn?: AgentLoopConfig['beforeTurn'];
  /** After each turn: true ends the run (budgets, external stop). */
  shouldStop?: AgentLoopConfig['shouldStop'];
  transformContext?: AgentLoopConfig['transformContext'];
  /** Every session event, awaited in order after it was persisted. */
  onEvent?: (event: AgentSessionEvent) => void | Promise<void>;
  /** Before any compaction: return `{cancel: true}` to veto, or `{summary}` to supply it. */
  beforeCompact?: SummarySupplier;
}

export interface AgentSessionConfig {
  store: SessionStore;
  model: Model;
  thinkingLevel?: AgentThinkingLevel;
  tools: AnyAgentTool[];
  systemPrompt: string;
  /** Skills the user may invoke with `/skill:name args` (expanded before sending). */
  skills?: Skill[];
  /** Used for the loop AND for summaries (so a permit-wrapped stream covers both). */
  streamFn?: StreamFunction;
  apiKey?: string;
  streamOptions?: AgentStreamOptions;
  compaction?: Partial<CompactionSettings>;
  /** Session-level retries of transient provider errors. */
  retry?: Partial<RetrySettings>;
  /** Retries of a failing summary call inside one compaction. */
  summaryRetry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** "model" asks the model for summaries; "extractive" builds them from the conversation (scripted runs). */
  summaries?: 'model' | 'extractive';
  hooks?: AgentSessionHooks;
  extensions?: LoadedExtensions;
  /** Resolves a model id (and provider) for setModel. */
  resolveModel?: (modelId: string, provider?: string) => Model;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  cwd: string;
  /** Where notices go (extension errors, warnings); default stderr. */
  notify?: (message: string) => void;
}

export interface PromptOptions {
  images?: ImageContent[];
  /** While a run is in progress: queue as steering or follow-up instead of failing. */
  streamingBehavior?: 'steer' | 'followUp';
}

export interface NavigateResult {
  leafId: string | null;
  /** Text of the user message navigated to (the leaf is its parent), for re-editing. */
  editorText?: string;
  summaryEntryId?: string;
}

export interface ForkResult {
  /** Text of the user message forked from, for re-editing. */
  text: string;
  sessionFile?: string;
  sessionId: string;
}

export interface SessionState {
  model: { provider: string; id: string; contextWindow: number };
  thinkingLevel: AgentThinkingLevel;
  isStreaming: boolean;
  isCompacting: boolean;
  sessionFile?: string;
  sessionId: string;
  leafId: string | null;
  messageCount: number;
  pendingMessageCount: number;
  autoCompactionEnabled: boolean;
  autoRetryEnabled: boolean;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
}

function userMessage(text: string, images?: ImageContent[]): UserMessage {
  return { role: 'user', content: [{ type: 'text', text }, ...(images ?? [])], timestamp: Date.now() };
}

function lastAssistant(messages: readonly AgentMessage[]): AssistantMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant') return m;
  }
  return undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class AgentSession {
  readonly agent: Agent;
  private storeValue: SessionStore;
  private listeners: readonly AgentSessionListener[] = [];
  private hookChain: Promise<void> = Promise.resolve();
  private readonly extensions: LoadedExtensions;
  private readonly hooks: AgentSessionHooks;
  private compactionSettings: CompactionSettings;
  private retrySettings: RetrySettings;
  private readonly summaries: 'model' | 'extractive';
  private readonly completeFn: CompleteFunction;
  private readonly unsubscribeAgent: () => void;
  /** The whole prompt (run, retries, compactions); undefined when idle. */
  private running: Promise<void> | undefined;
  /** Aborts retry waits and compactions of the current prompt. */
  private runAbort: AbortController | undefined;
  private compacting = false;
  private retryAttempt = 0;
  private overflowRecoveryAttempted = false;
  private disposed = false;
  /** Steering / follow-up messages not yet delivered (removed when their message_start is seen). */
  private readonly queued = new Set<AgentMessage>();

  constructor(private readonly config: AgentSessionConfig) {
    this.storeValue = config.store;
    this.extensions = config.extensions ?? emptyExtensions();
    this.hooks = config.hooks ?? {};
    this.compactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...config.compaction };
    this.retrySettings = { ...DEFAULT_RETRY_SETTINGS, ...config.retry };
    this.summaries = config.summaries ?? 'model';
    const streamFn = config.streamFn;
    this.completeFn = streamFn ? (model, context, options) => Promise.resolve(streamFn(model, context, options)).then((s) => s.result()) : registryComplete;

    const restored = config.store.buildContext();
    this.agent = new Agent({
      initialState: {
        model: config.model,
        systemPrompt: config.systemPrompt,
        thinkingLevel: config.model.reasoning ? (config.thinkingLevel ?? 'off') : 'off',
        tools: config.tools,
        messages: restored.messages,
      },
      streamFn,
      apiKey: config.apiKey,
      streamOptions: config.streamOptions,
      transformContext: this.hooks.transformContext,
      beforeTurn: this.hooks.beforeTurn,
      shouldStop: this.hooks.shouldStop,
      beforeToolCall: (ctx, signal) => this.beforeToolCall(ctx, signal),
      afterToolCall: (ctx, signal) => this.afterToolCall(ctx, signal),
      steeringMode: config.steeringMode,
      followUpMode: config.followUpMode,
      onListenerError: (err, event) => this.notify(`A session listener threw on ${event.type}: ${errorText(err)}`),
    });
    this.unsubscribeAgent = this.agent.subscribe((event) => this.onAgentEvent(event));
  }

  // ---- reading ------------------------------------------------------------------------------------

  get store(): SessionStore {
    return this.storeValue;
  }
  get header(): Readonly<SessionHeader> {
    return this.storeValue.header;
  }
  get sessionId(): string {
    return this.storeValue.id;
  }
  /** The session file, or undefined for an in-memory session. */
  get sessionFile(): string | undefined {
    return this.storeValue.path;
  }
  get model(): Model {
    return this.agent.state.model;
  }
  get thinkingLevel(): AgentThinkingLevel {
    return this.agent.state.thinkingLevel;
  }
  /** The conversation as the agent sees it (compacted history as a summary message). */
  get messages(): readonly AgentMessage[] {
    return this.agent.state.messages;
  }
  get tools(): readonly AnyAgentTool[] {
    return this.agent.state.tools;
  }
  get systemPrompt(): string {
    return this.agent.state.systemPrompt;
  }
  /** True from prompt() until the run, its retries and compactions are over. */
  get isStreaming(): boolean {
    return this.running !== undefined || this.agent.state.isStreaming;
  }
  get isCompacting(): boolean {
    return this.compacting;
  }
  /** Extension commands, by name. */
  get commands(): { name: string; description?: string; source: string }[] {
    return [...this.extensions.commands].map(([name, c]) => ({ name, description: c.description, source: c.source }));
  }

  getState(): SessionState {
    const m = this.model;
    const state: SessionState = {
      model: { provider: m.provider, id: m.id, contextWindow: m.contextWindow },
      thinkingLevel: this.thinkingLevel,
      isStreaming: this.isStreaming,
      isCompacting: this.compacting,
      sessionId: this.sessionId,
      leafId: this.storeValue.leafId,
      messageCount: this.messages.length,
      pendingMessageCount: this.queued.size,
      autoCompactionEnabled: this.compactionSettings.enabled,
      autoRetryEnabled: this.retrySettings.enabled,
      steeringMode: this.agent.steeringMode,
      followUpMode: this.agent.followUpMode,
    };
    if (this.sessionFile !== undefined) state.sessionFile = this.sessionFile;
    return state;
  }

  /** Text of the last assistant reply that has any, or null. */
  lastAssistantText(): string | null {
    const messages = this.messages;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (m.role !== 'assistant') continue;
      const text = m.content
        .filter((b) => b.type === 'text')
        .map((b) => (b.type === 'text' ? b.text : ''))
        .join('');
      if (text.trim() !== '') return text;
    }
    return null;
  }

  stats(): SessionStats {
    return computeStats(this.storeValue.entries, this.messages, this.model, { id: this.sessionId, file: this.sessionFile });
  }

  // ---- events -------------------------------------------------------------------------------------

  /** Listeners are called synchronously, in order, after the event was persisted. */
  subscribe(listener: AgentSessionListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  private emit(event: AgentSessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.notify(`A session listener threw on ${event.type}: ${errorText(err)}`);
      }
    }
    const onEvent = this.hooks.onEvent;
    const handlers = this.extensions.handlers.event;
    if (!onEvent && handlers.length === 0) return;
    this.hookChain = this.hookChain.then(async () => {
      if (onEvent) {
        try {
          await onEvent(event);
        } catch (err) {
          this.notify(`The onEvent hook threw on ${event.type}: ${errorText(err)}`);
        }
      }
      for (const h of handlers) {
        try {
          await h.handler(event);
        } catch (err) {
          this.reportExtensionError(h.source, 'event', err);
        }
      }
    });
  }

  /** Resolves when every async hook queued so far has run. */
  whenHooksIdle(): Promise<void> {
    return this.hookChain;
  }

  private notify(message: string): void {
    (this.config.notify ?? ((m: string) => process.stderr.write(`${m}\n`)))(message);
  }

  private reportExtensionError(source: string, event: string, err: unknown): void {
    const error = errorText(err);
    this.notify(`Extension ${source} failed on ${event}: ${error}`);
    // Not through emit(): an event handler failing on this event must not recurse.
    const e: AgentSessionEvent = { type: 'extension_error', extensionPath: source, event, error };
    for (const listener of this.listeners) {
      try {
        listener(e);
      } catch {
        // reported above already
      }
    }
  }

  private onAgentEvent(event: AgentEvent): void {
    if (event.type === 'message_start' && event.message.role === 'user') {
      this.overflowRecoveryAttempted = false;
      this.queued.delete(event.message);
    }
    if (event.type === 'message_end') {
      this.persist(event.message);
    }
    this.emit(event);
    if (event.type === 'message_end' && event.message.role === 'assistant') {
      const failed = event.message.stopReason === 'error' || event.message.stopReason === 'aborted';
      if (!failed) {
        this.overflowRecoveryAttempted = false;
        if (this.retryAttempt > 0) {
          this.emit({ type: 'auto_retry_end', success: true, attempt: this.retryAttempt });
          this.retryAttempt = 0;
        }
      }
    }
  }

  /** message_end -> session entry. A new session's first write happens with its first reply. */
  private persist(message: AgentMessage): void {
    try {
      if (message.role === 'custom') {
        this.storeValue.appendCustomMessage(message.customType, message.content, message.display, message.details);
      } else if (message.role === 'compactionSummary' || message.role === 'branchSummary') {
        // These come from session entries (compaction, branch_summary); never stored twice.
        return;
      } else {
        this.storeValue.appendMessage(message);
      }
    } catch (err) {
      this.notify(`Could not write to the session file ${this.sessionFile ?? '(memory)'}: ${errorText(err)}`);
    }
  }

  // ---- tool hooks ---------------------------------------------------------------------------------

  private async beforeToolCall(ctx: BeforeToolCallContext, signal: AbortSignal): Promise<BeforeToolCallResult | void> {
    // Observers have seen (and the file holds) the assistant message before any tool runs.
    await this.hookChain;
    if (this.hooks.beforeToolCall) {
      const r = await this.hooks.beforeToolCall(ctx, signal);
      if (r?.block) return r;
    }
    for (const h of this.extensions.handlers.before_tool_call) {
      try {
        const r = await h.handler({
          toolName: ctx.toolCall.name,
          toolCallId: ctx.toolCall.id,
          args: (ctx.args ?? {}) as Record<string, unknown>,
          assistantMessage: ctx.assistantMessage,
          toolCall: ctx.toolCall,
          context: ctx.context,
          cwd: this.config.cwd,
        });
        if (r?.block) return { block: true, reason: r.reason ?? `Blocked by extension ${h.source}` };
      } catch (err) {
        this.reportExtensionError(h.source, 'before_tool_call', err);
        return { block: true, reason: `Blocked: extension ${h.source} failed while checking this call: ${errorText(err)}` };
      }
    }
    return undefined;
  }

  private async afterToolCall(ctx: AfterToolCallContext, signal: AbortSignal): Promise<AfterToolCallResult | void> {
    let current: AfterToolCallContext = ctx;
    let merged: AfterToolCallResult | undefined;
    const apply = (r: AfterToolCallResult | void): void => {
      if (!r) return;
      merged = { ...merged, ...r };
      current = {
        ...current,
        result: { ...current.result, ...(r.content ? { content: r.content } : {}), ...(r.details !== undefined ? { details: r.details } : {}) },
        isError: r.isError ?? current.isError,
      };
    };
    if (this.hooks.afterToolCall) apply(await this.hooks.afterToolCall(current, signal));
    for (const h of this.extensions.handlers.after_tool_call) {
      try {
        apply(
          await h.handler({
            toolName: current.toolCall.name,
            toolCallId: current.toolCall.id,
            args: (current.args ?? {}) as Record<string, unknown>,
            assistantMessage: current.assistantMessage,
            toolCall: current.toolCall,
            context: current.context,
            cwd: this.config.cwd,
            result: current.result,
            isError: current.isError,
          }),
        );
      } catch (err) {
        this.reportExtensionError(h.source, 'after_tool_call', err);
      }
    }
    return merged;
  }

  // ---- runs ---------------------------------------------------------------------------------------

  /**
   * Sends a prompt and resolves when the run, its retries and any compaction are over. A
   * `/name args` prompt naming an extension command runs the command instead (even mid-run).
   * While a run is in progress, pass `streamingBehavior` to queue the text; otherwise it throws.
   */
  async prompt(text: string, options: PromptOptions = {}): Promise<void> {
    this.assertUsable();
    const command = /^\/([^\s]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
    const handler = command ? this.extensions.commands.get(command[1]!) : undefined;
    if (handler) {
      const ctx: ExtensionCommandContext = { cwd: this.config.cwd, session: this, notify: (m) => this.notify(m) };
      await handler.handler(command?.[2] ?? '', ctx);
      return;
    }
    if (this.isStreaming) {
      if (options.streamingBehavior === 'steer') return this.steer(text, options.images);
      if (options.streamingBehavior === 'followUp') return this.followUp(text, options.images);
      throw new Error('The agent is already running: use steer() or followUp() (RPC: steer / follow_up, or prompt with streamingBehavior) to queue this message, or wait for the run to finish.');
    }
    const expanded = text.startsWith('/skill:') ? expandSkillCommand(text, this.config.skills ?? []) : undefined;
    const message = userMessage(expanded ?? text, options.images);
    return this.runExclusive(async () => {
      this.overflowRecoveryAttempted = false;
      this.retryAttempt = 0;
      await this.compactBeforePrompt();
      await this.drive(() => this.agent.prompt(message));
    });
  }

  /** Queues an interjection for the current run (delivered before its next model call) or the next one. */
  steer(text: string, images?: ImageContent[]): void {
    this.assertUsable();
    const message = userMessage(text, images);
    this.queued.add(message);
    this.agent.steer(message);
  }

  /** Queues a message for when the current (or next) run would otherwise stop. */
  followUp(text: string, images?: ImageContent[]): void {
    this.assertUsable();
    const message = userMessage(text, images);
    this.queued.add(message);
    this.agent.followUp(message);
  }

  /** Aborts the run, a retry wait or a compaction, and resolves once everything stopped. */
  async abort(): Promise<void> {
    this.runAbort?.abort();
    this.agent.abort();
    await this.agent.waitForIdle();
    await this.running?.catch(() => undefined);
  }

  /** Resolves when no prompt is running. */
  async waitForIdle(): Promise<void> {
    await this.running?.catch(() => undefined);
    await this.hookChain;
  }

  private assertUsable(): void {
    if (this.disposed) throw new Error('This session was disposed; create a new one.');
  }

  private async runExclusive(work: () => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.runAbort = controller;
    const running = (async () => {
      try {
        await work();
      } finally {
        await this.hookChain;
      }
    })();
    this.running = running;
    try {
      await running;
    } finally {
      if (this.running === running) this.running = undefined;
      if (this.runAbort === controller) this.runAbort = undefined;
    }
  }

  /** Runs the agent, then retries / compacts / continues until the prompt is settled. */
  private async drive(start: () => Promise<void>): Promise<void> {
    await start();
    for (;;) {
      await this.hookChain;
      if (!(await this.afterRun())) return;
      try {
        await this.agent.continue();
      } catch (err) {
        // Nothing left to continue from (e.g. the queue was taken meanwhile): the prompt is settled.
        this.notify(`Could not continue the run: ${errorText(err)}`);
        return;
      }
    }
  }

  /** Decides what follows a run; true = continue the agent. */
  private async afterRun(): Promise<boolean> {
    const signal = this.runAbort?.signal;
    const last = lastAssistant(this.agent.state.messages);
    if (!last || signal?.aborted || last.stopReason === 'aborted') {
      this.endRetry(last?.stopReason === 'aborted' || signal?.aborted ? 'Retry cancelled: the run was aborted.' : undefined);
      return false;
    }
    if (last.stopReason === 'error' && this.retrySettings.enabled && isRetryableError(last)) {
      if (this.retryAttempt >= this.retrySettings.maxRetries) {
        this.endRetry(last.errorMessage);
        return false;
      }
      this.retryAttempt++;
      const delayMs = retryDelay(this.retryAttempt, this.retrySettings);
      this.emit({ type: 'auto_retry_start', attempt: this.retryAttempt, maxAttempts: this.retrySettings.maxRetries, delayMs, errorMessage: last.errorMessage ?? 'unknown error' });
      if (!(await sleepUnlessAborted(delayMs, signal ?? new AbortController().signal))) {
        this.endRetry('Retry cancelled: the run was aborted.');
        return false;
      }
      // Dropped only now, so an abort during the wait leaves the error as the run's last word.
      this.dropTrailingError();
      return true;
    }
    this.endRetry(last.stopReason === 'error' ? last.errorMessage : undefined);
    return this.compactAfterRun(last);
  }

  /** Ends a retry sequence that did not succeed (success is reported at the reply's message_end). */
  private endRetry(finalError: string | undefined): void {
    if (this.retryAttempt === 0) return;
    this.emit({ type: 'auto_retry_end', success: false, attempt: this.retryAttempt, finalError: finalError ?? 'unknown error' });
    this.retryAttempt = 0;
  }

  /** Removes a trailing error reply from the agent's state; the session file keeps it. */
  private dropTrailingError(): void {
    const messages = this.agent.state.messages;
    const last = messages[messages.length - 1];
    if (last?.role === 'assistant' && (last.stopReason === 'error' || last.stopReason === 'aborted')) {
      this.agent.replaceMessages(messages.slice(0, -1));
    }
  }

  private checkInput(message: AssistantMessage, beforePrompt: boolean): CompactionCheckInput {
    return {
      message,
      model: this.model,
      settings: this.compactionSettings,
      messages: this.agent.state.messages,
      isStale: (m: AssistantMessage) => predatesLatestCompaction(this.storeValue.currentPath(), m),
      overflowRecoveryAttempted: this.overflowRecoveryAttempted,
      beforePrompt,
    };
  }

  private async compactAfterRun(last: AssistantMessage): Promise<boolean> {
    const check = checkCompaction(this.checkInput(last, false));
    if (check.action === 'overflow_exhausted') {
      this.emit({ type: 'auto_compaction_end', reason: 'overflow', aborted: false, willRetry: false, errorMessage: OVERFLOW_EXHAUSTED_TEXT });
      return false;
    }
    if (check.action === 'overflow') {
      this.overflowRecoveryAttempted = true;
      const ok = await this.autoCompact('overflow');
      if (!ok) return false;
      // The rebuilt context holds the failed reply again (it is in the file): drop it and re-run.
      this.dropTrailingError();
      return true;
    }
    if (check.action === 'threshold') {
      const ok = await this.autoCompact('threshold');
      return ok && this.agent.hasQueuedMessages();
    }
    return false;
  }

  private async compactBeforePrompt(): Promise<void> {
    const last = lastAssistant(this.agent.state.messages);
    if (!last) return;
    const check = checkCompaction(this.checkInput(last, true));
    if (check.action === 'threshold') await this.autoCompact('threshold');
  }

  private async autoCompact(reason: 'threshold' | 'overflow'): Promise<boolean> {
    const willRetry = reason === 'overflow';
    this.emit({ type: 'auto_compaction_start', reason });
    const outcome = await this.runCompactionJob(undefined, this.runAbort?.signal);
    const prefix = reason === 'overflow' ? 'Context overflow recovery failed: ' : 'Auto-compaction failed: ';
    if (outcome.status === 'compacted') {
      const result = this.afterCompaction(outcome);
      this.emit({ type: 'auto_compaction_end', reason, result, aborted: false, willRetry });
      return true;
    }
    if (outcome.status === 'aborted') {
      this.emit({ type: 'auto_compaction_end', reason, aborted: true, willRetry: false, errorMessage: outcome.message });
      return false;
    }
    this.emit({ type: 'auto_compaction_end', reason, aborted: false, willRetry: false, errorMessage: prefix + outcome.message });
    return false;
  }

  // ---- compaction ---------------------------------------------------------------------------------

  /**
   * Compacts now (aborting a run in progress first). Resolves with the result; rejects with
   * "Already compacted ..." / "Nothing to compact ..." / a failure message.
   */
  async compact(customInstructions?: string): Promise<CompactionResult> {
    this.assertUsable();
    if (this.isStreaming) await this.abort();
    let result: CompactionResult | undefined;
    let failure: string | undefined;
    await this.runExclusive(async () => {
      this.emit({ type: 'compaction_start', reason: 'manual' });
      const outcome = await this.runCompactionJob(customInstructions, this.runAbort?.signal);
      if (outcome.status === 'compacted') {
        result = this.afterCompaction(outcome);
        this.emit({ type: 'compaction_end', reason: 'manual', result, aborted: false });
        return;
      }
      failure = outcome.message;
      this.emit({ type: 'compaction_end', reason: 'manual', aborted: outcome.status === 'aborted', errorMessage: failure });
    });
    if (!result) throw new Error(failure ?? 'Compaction failed.');
    return result;
  }

  private afterCompaction(outcome: Extract<CompactionOutcome, { status: 'compacted' }>): CompactionResult {
    this.agent.replaceMessages(this.storeValue.buildContext().messages);
    const source = outcome.fromHook ? (this.lastSupplySource ?? 'hook') : 'model';
    return { ...outcome.result, entryId: outcome.entryId, source };
  }

  private lastSupplySource: 'extractive' | 'hook' | undefined;

  private summarySupplier(customInstructions: string | undefined): SummarySupplier {
    const suppliers: SummarySupplier[] = [];
    const mark =
      (source: 'extractive' | 'hook', supply: SummarySupplier): SummarySupplier =>
      async (preparation, signal) => {
        const decision = await supply(preparation, signal);
        if (decision) this.lastSupplySource = source;
        return decision;
      };
    if (this.hooks.beforeCompact) suppliers.push(mark('hook', this.hooks.beforeCompact));
    const handlers = this.extensions.handlers.before_compact;
    if (handlers.length > 0) {
      suppliers.push(
        mark('hook', async (preparation: CompactionPreparation, signal) => {
          let decision: CompactionHookDecision | undefined;
          for (const h of handlers) {
            try {
              const d = await h.handler({ preparation, signal });
              if (d && 'cancel' in d) return d;
              if (d) decision = d;
            } catch (err) {
              this.reportExtensionError(h.source, 'before_compact', err);
            }
          }
          return decision;
        }),
      );
    }
    if (this.summaries === 'extractive') suppliers.push(mark('extractive', extractiveSupplier(customInstructions)));
    return chainSuppliers(suppliers);
  }

  private async runCompactionJob(customInstructions: string | undefined, signal: AbortSignal | undefined): Promise<CompactionOutcome> {
    this.compacting = true;
    this.lastSupplySource = undefined;
    try {
      const streamOptions: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'> = { ...this.config.streamOptions };
      if (this.config.apiKey) streamOptions.apiKey = this.config.apiKey;
      return await runCompaction(this.storeValue, {
        model: this.model,
        complete: this.completeFn,
        signal,
        customInstructions,
        streamOptions,
        settings: this.compactionSettings,
        retry: this.config.summaryRetry,
        beforeCompact: this.summarySupplier(customInstructions),
      });
    } catch (err) {
      return { status: 'failed', attempts: 0, message: errorText(err) };
    } finally {
      this.compacting = false;
    }
  }

  // ---- moving around the tree -----------------------------------------------------------------------

  /**
   * Moves to an entry of this session (rewind / branch). A user-message target leaves the leaf
   * at its parent and returns its text for re-editing. With `summarize`, the branch being left is
   * summarized and the summary attached where the conversation continues.
   */
  async navigate(targetId: string, options: { summarize?: boolean; customInstructions?: string; label?: string } = {}): Promise<NavigateResult> {
    this.assertUsable();
    if (this.isStreaming) await this.abort();
    const fromLeafId = this.storeValue.leafId;
    const nav: NavigateOptions = {};
    if (options.label !== undefined) nav.label = options.label;
    if (options.summarize) {
      if (this.summaries === 'extractive') {
        const { entries } = collectEntriesForBranchSummary(this.storeValue, fromLeafId, targetId);
        const budget = (this.model.contextWindow || SESSION_DEFAULTS.branchSummary.fallbackContextWindow) - SESSION_DEFAULTS.branchSummary.reserveTokens;
        const prepared = prepareBranchEntries(entries, budget);
        if (prepared.messages.length > 0) {
          const s = buildExtractiveSummary({ messages: prepared.messages, fileOps: prepared.fileOps, customInstructions: options.customInstructions });
          nav.providedSummary = { summary: BRANCH_SUMMARY_PREAMBLE + s.summary, details: s.details };
        }
      } else {
        const streamOptions: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'> = { ...this.config.streamOptions };
        if (this.config.apiKey) streamOptions.apiKey = this.config.apiKey;
        nav.summarize = { model: this.model, complete: this.completeFn, customInstructions: options.customInstructions, streamOptions };
      }
    }
    const outcome = await navigateTree(this.storeValue, targetId, nav);
    if (outcome.status === 'failed' || outcome.status === 'aborted') throw new Error(outcome.message);
    const result: NavigateResult = { leafId: outcome.leafId };
    if (outcome.status === 'moved') {
      if (outcome.editorText !== undefined) result.editorText = outcome.editorText;
      if (outcome.summaryEntryId !== undefined) result.summaryEntryId = outcome.summaryEntryId;
      this.agent.replaceMessages(this.storeValue.buildContext().messages);
      const event: AgentSessionEvent = { type: 'session_navigate', fromLeafId, toLeafId: outcome.leafId };
      if (result.summaryEntryId) event.summaryEntryId = result.summaryEntryId;
      if (result.editorText !== undefined) event.editorText = result.editorText;
      this.emit(event);
    }
    return result;
  }

  /** Same as navigate(): rewinding is moving the leaf back. */
  rewind(targetId: string, options: { summarize?: boolean; customInstructions?: string } = {}): Promise<NavigateResult> {
    return this.navigate(targetId, options);
  }

  /**
   * Continues in a NEW session file holding the path up to (not including) the user message
   * `entryId`; returns that message's text so it can be edited and sent again.
   */
  async fork(entryId: string): Promise<ForkResult> {
    this.assertUsable();
    const entry = this.storeValue.getEntry(entryId);
    if (!entry) throw new Error(`Cannot fork from ${entryId}: no such entry in this session.`);
    if (entry.type !== 'message' || entry.message.role !== 'user') {
      throw new Error(`Cannot fork from ${entryId}: it is a ${entry.type === 'message' ? `${entry.message.role} message` : `${entry.type} entry`}; fork from a user message (use navigate to move within this session).`);
    }
    if (this.isStreaming) await this.abort();
    const content = entry.message.content;
    const text = typeof content === 'string' ? content : content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const old = this.storeValue;
    const where = old.path !== undefined ? dirname(old.path) : ':memory:';
    const next = old.createBranchedSession(entry.parentId, where);
    old.close();
    this.storeValue = next;
    this.agent.replaceMessages(next.buildContext().messages);
    const result: ForkResult = { text, sessionId: next.id };
    if (next.path !== undefined) result.sessionFile = next.path;
    const event: AgentSessionEvent = { type: 'session_fork', sessionId: next.id };
    if (old.path !== undefined) event.fromSessionFile = old.path;
    if (next.path !== undefined) event.sessionFile = next.path;
    this.emit(event);
    return result;
  }

  // ---- settings -------------------------------------------------------------------------------------

  /** Switches the model from the next run on (an id is resolved for the current provider). */
  setModel(model: Model | string, provider?: string): Model {
    this.assertUsable();
    let next: Model;
    if (typeof model === 'string') {
      if (!this.config.resolveModel) throw new Error('This session cannot resolve model ids; pass a Model object.');
      next = this.config.resolveModel(model, provider ?? this.model.provider);
    } else next = model;
    const previous = { provider: this.model.provider, modelId: this.model.id };
    this.agent.setModel(next);
    this.storeValue.appendModelChange(next.provider, next.id);
    this.emit({ type: 'model_change', provider: next.provider, modelId: next.id, previous });
    if (!next.reasoning && this.thinkingLevel !== 'off') this.setThinkingLevel('off');
    return next;
  }

  /** Sets the reasoning effort ("off" for models without reasoning); recorded when it changes. */
  setThinkingLevel(level: AgentThinkingLevel): AgentThinkingLevel {
    this.assertUsable();
    const effective = this.model.reasoning ? level : 'off';
    if (effective !== this.thinkingLevel) {
      this.agent.setThinkingLevel(effective);
      this.storeValue.appendThinkingLevelChange(effective);
      this.emit({ type: 'thinking_level_change', thinkingLevel: effective });
    }
    return effective;
  }

  setAutoCompaction(enabled: boolean): void {
    this.compactionSettings = { ...this.compactionSettings, enabled };
  }

  setAutoRetry(enabled: boolean): void {
    this.retrySettings = { ...this.retrySettings, enabled };
  }

  /** Aborts what runs, detaches from the agent and closes the session file. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    await this.abort();
    await this.hookChain;
    this.disposed = true;
    this.unsubscribeAgent();
    this.listeners = [];
    this.storeValue.close();
  }
}
