// AgentSession: one agent with a persistent session (kernel-spec 9.1). It wires the Agent to a
// SessionStore, persists every message in order, retries transient provider errors, compacts
// (after a run past the threshold, and once to recover from an overflow), and offers the
// session-level operations every delivery form needs: prompt, steer, follow-up, abort, compact,
// navigate, fork, model and thinking changes, stats. Events go out as one typed union.
//
// Event pipeline: the Agent's listener runs synchronously per event; persistence happens there
// (so the file order is the event order however slow a subscriber is), then the event bus calls
// listeners and queues async hooks in order (event-bus.ts). The hook chain is awaited before
// each tool call and before prompt() returns, so hooks always see a finished picture.
import { Agent } from '../agent/agent.js';
import type { AgentEvent, AgentMessage, AgentThinkingLevel, AnyAgentTool } from '../agent/types.js';
import { stream as registryStream } from '../ai/registry.js';
import { learnContextWindow } from '../ai/learned-windows.js';
import { overflowLimitFromError } from '../ai/overflow.js';
import { estimateContextTokens, estimateMessageTokens, estimateTextTokens } from '../ai/token-estimate.js';
import type { AssistantMessage, ImageContent, Model, StreamFunction, StreamOptions, ToolResultMessage, UserMessage } from '../ai/types.js';
import { navigateTree } from '../session/branch-summary.js';
import { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from '../session/defaults.js';
import { compactionThreshold, shouldCompact } from '../session/prepare-compaction.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompleteFunction } from '../session/summarize.js';
import type { SessionHeader } from '../session/types.js';
import { expandSkillCommand } from '../tools/skills.js';
import { checkCompaction, predatesLatestCompaction, type CompactionCheckInput } from './auto-compaction.js';
import { DEFAULT_RETRY_SETTINGS, type RetrySettings } from './defaults.js';
import { errorText, SessionEventBus } from './event-bus.js';
import { emptyExtensions, type ExtensionCommandContext, type LoadedExtensions } from './extensions.js';
import { RunGuard, loopWarningText } from './run-guard.js';
import { DEFAULT_LOOP_DETECTION, DEFAULT_RUN_LIMITS, type RunLimits, type RunStoppedError } from './run-limits.js';
import { isRetryableError, retryDelay, sleepUnlessAborted } from './retry-policy.js';
import { compactSession, summaryConversation, type SessionCompactionOutcome } from './session-compaction.js';
import { answerInterruptedCalls, planResume, type ResumeKind } from './session-resume.js';
import type { AgentSessionEvent, AgentSessionListener, CompactionResult } from './session-events.js';
import { composeToolHooks, type AgentSessionHooks } from './session-hooks.js';
import { HookSession, PromptBlockedError, withCommandToolHooks } from './hook-session.js';
import { forkStore, navigateOptions, type NavigationContext, type NavigationRequest } from './session-navigation.js';
import { computeStats, type SessionStats } from './stats.js';

import type { AgentSessionConfig, ForkResult, NavigateResult, PromptOptions, SessionState } from './agent-session-types.js';

export type { AgentSessionHooks } from './session-hooks.js';
export type { AgentSessionConfig, ForkResult, NavigateResult, PromptOptions, SessionState } from './agent-session-types.js';

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

/** Options of a manual compaction. */
export interface CompactOptions {
  /**
   * Keep this many recent tokens instead of the configured amount; 0 summarizes everything up
   * to the last message (a handoff summary of a whole short session).
   */
  keepRecentTokens?: number;
}

export class AgentSession {
  readonly agent: Agent;
  private storeValue: SessionStore;
  private readonly bus: SessionEventBus;
  private readonly extensions: LoadedExtensions;
  private readonly hooks: AgentSessionHooks;
  /** Command hooks in Claude Code's format (hook-session.ts), when configured. */
  private readonly commandHooks: HookSession | undefined;
  /** A Stop hook already sent the agent back to work in this prompt (Claude Code's stop_hook_active). */
  private stopHookActive = false;
  private sessionStartRan = false;
  private compactionSettings: CompactionSettings;
  private retrySettings: RetrySettings;
  /** Loop detection and the caps on turns, spend and compactions (run-guard.ts). */
  private readonly guard: RunGuard;
  /** Set when a guard ended the current prompt; prompt() rejects with it. */
  private stopError: RunStoppedError | undefined;
  /** The context passed the threshold at a turn boundary: compact, then continue the run. */
  private compactPending = false;
  private readonly summaries: 'model' | 'extractive';
  private readonly completeFn: CompleteFunction;
  private readonly unsubscribeAgent: () => void;
  private readonly unsubscribeWriteErrors: () => void;
  /** The whole prompt (run, retries, compactions); undefined when idle. */
  private running: Promise<void> | undefined;
  /** Aborts retry waits and compactions of the current prompt. */
  private runAbort: AbortController | undefined;
  private compacting = false;
  private retryAttempt = 0;
  private disposed = false;
  /**
   * Set when the session file could not be written. The run stops at once and no further prompt
   * starts: going on would leave work the file does not hold (resume would lose it silently).
   */
  private storageError: Error | undefined;
  /** Steering / follow-up messages not yet delivered (removed when their message_start is seen). */
  private readonly queued = new Set<AgentMessage>();

  constructor(private readonly config: AgentSessionConfig) {
    this.storeValue = config.store;
    this.extensions = config.extensions ?? emptyExtensions();
    this.hooks = config.hooks ?? {};
    this.compactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...config.compaction };
    this.retrySettings = { ...DEFAULT_RETRY_SETTINGS, ...config.retry };
    this.guard = new RunGuard({ ...DEFAULT_LOOP_DETECTION, ...config.loopDetection }, { ...DEFAULT_RUN_LIMITS, ...config.limits });
    this.summaries = config.summaries ?? 'model';
    const notify = config.notify ?? ((m: string) => void process.stderr.write(`${m}\n`));
    this.bus = new SessionEventBus(this.hooks.onEvent, this.extensions.handlers.event, notify);
    if (config.commandHooks) {
      const c = config.commandHooks;
      this.commandHooks = new HookSession({
        config: c.config,
        cwd: config.cwd,
        projectDir: c.projectDir,
        sandbox: c.sandbox,
        sessionId: () => this.sessionId,
        transcriptPath: () => this.sessionFile,
        emit: (event) => this.emit(event),
        notify: (m) => this.bus.notify(m),
      });
      this.hooks = withCommandToolHooks(this.hooks, this.commandHooks);
    }
    // Every call (turns, retries, summaries) is metered: the spend caps count what was paid.
    const turnStream = this.metered(config.streamFn ?? registryStream);
    const summaryStream = config.summaryStreamFn ? this.metered(config.summaryStreamFn) : turnStream;
    this.completeFn = (model, context, options) => Promise.resolve(summaryStream(model, context, options)).then((s) => s.result());

    this.agent = new Agent({
      initialState: {
        model: config.model,
        systemPrompt: config.systemPrompt,
        thinkingLevel: config.model.reasoning ? (config.thinkingLevel ?? 'off') : 'off',
        tools: config.tools,
        messages: config.store.buildContext().messages,
      },
      streamFn: turnStream,
      apiKey: config.apiKey,
      streamOptions: config.streamOptions,
      transformContext: this.hooks.transformContext,
      beforeTurn: this.hooks.beforeTurn,
      shouldStop: async (ctx) => this.guardTurn(ctx.message, ctx.toolResults.length > 0, ctx.toolResults) || ((await this.hooks.shouldStop?.(ctx)) ?? false),
      ...composeToolHooks({ hooks: this.hooks, extensions: this.extensions, cwd: config.cwd, bus: this.bus }),
      steeringMode: config.steeringMode,
      followUpMode: config.followUpMode,
      onListenerError: (err, event) => notify(`A session listener threw on ${event.type}: ${errorText(err)}`),
    });
    this.unsubscribeAgent = this.agent.subscribe((event) => this.onAgentEvent(event));
    this.unsubscribeWriteErrors = this.storeValue.onWriteError((err) => this.storageFailed(err));
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
    return this.bus.subscribe(listener);
  }

  private emit(event: AgentSessionEvent): void {
    this.bus.emit(event);
  }

  private onAgentEvent(event: AgentEvent): void {
    if (event.type === 'message_start' && event.message.role === 'user') this.queued.delete(event.message);
    if (event.type === 'message_end') this.persist(event.message);
    this.emit(event);
    if (event.type === 'message_end' && event.message.role === 'assistant') {
      const failed = event.message.stopReason === 'error' || event.message.stopReason === 'aborted';
      if (!failed && this.retryAttempt > 0) {
        this.emit({ type: 'auto_retry_end', success: true, attempt: this.retryAttempt });
        this.retryAttempt = 0;
      }
    }
  }

  /**
   * message_end -> session entry. A new session's first write happens with its first reply. A
   * reply is written before this returns: its tool calls run next, and a run's last reply ends
   * it. Other entries go out with the store's next batch, within the same event-loop turn.
   */
  private persist(message: AgentMessage): void {
    try {
      if (message.role === 'custom') {
        this.storeValue.appendCustomMessage(message.customType, message.content, message.display, message.details);
      } else if (message.role !== 'compactionSummary' && message.role !== 'branchSummary') {
        // Summaries come from session entries (compaction, branch_summary) and are never stored twice.
        this.storeValue.appendMessage(message);
      }
      if (message.role === 'assistant') this.storeValue.persist();
    } catch (err) {
      this.storageFailed(err);
    }
  }

  /** The session file cannot be written: stop the run and refuse further work. */
  private storageFailed(err: unknown): void {
    if (this.storageError) return;
    const text = errorText(err);
    // The storage's message names the file already; say so only when it does not.
    const file = this.sessionFile ?? '(memory)';
    this.storageError = new Error(text.includes(file) ? text : `Could not write to the session file ${file}: ${text}`);
    this.bus.notify(`${this.storageError.message} The run was stopped; the session file holds everything up to the last entry that was written.`);
    this.runAbort?.abort();
    this.agent.abort();
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
      const ctx: ExtensionCommandContext = { cwd: this.config.cwd, session: this, notify: (m) => this.bus.notify(m) };
      await handler.handler(command?.[2] ?? '', ctx);
      return;
    }
    if (this.isStreaming) {
      if (options.streamingBehavior === 'steer') return this.steer(text, options.images);
      if (options.streamingBehavior === 'followUp') return this.followUp(text, options.images);
      throw new Error('The agent is already running: use steer() or followUp() (RPC: steer / follow_up, or prompt with streamingBehavior) to queue this message, or wait for the run to finish.');
    }
    const expanded = text.startsWith('/skill:') ? expandSkillCommand(text, this.config.skills ?? []) : undefined;
    return this.runExclusive(async () => {
      this.beginPrompt();
      const message = await this.promptMessage(expanded ?? text, options.images);
      await this.compactBeforePrompt();
      if (!this.stopError) await this.drive(() => this.agent.prompt(message));
      if (this.storageError) throw this.storageError;
      if (this.stopError) throw this.stopError;
    });
  }

  /**
   * The user message of a prompt: SessionStart hooks (first prompt of this object) and
   * UserPromptSubmit hooks may add context; a UserPromptSubmit block rejects the prompt.
   */
  private async promptMessage(text: string, images?: ImageContent[]): Promise<UserMessage> {
    const hooks = this.commandHooks;
    const contexts: string[] = [];
    if (hooks && !this.sessionStartRan) {
      this.sessionStartRan = true;
      if (hooks.has('SessionStart')) {
        const verdict = await hooks.sessionStart(this.agent.state.messages.length > 0 ? 'resume' : 'startup', this.runAbort?.signal);
        if (verdict.context) contexts.push(verdict.context);
      }
    }
    if (hooks?.has('UserPromptSubmit')) {
      const verdict = await hooks.userPromptSubmit(text, this.runAbort?.signal);
      if (verdict.blocked) throw new PromptBlockedError(verdict.reason ?? 'no reason given');
      if (verdict.context) contexts.push(verdict.context);
    }
    if (contexts.length === 0) return userMessage(text, images);
    const context = { type: 'text' as const, text: `Hook context:\n${contexts.join('\n')}` };
    return { role: 'user', content: [{ type: 'text', text }, context, ...(images ?? [])], timestamp: Date.now() };
  }

  /**
   * The agent is about to stop: Stop hooks may send it back to work once, with their reason as a
   * message (true = continue). A second block in the same prompt is a warning, not another turn.
   */
  private async stopHooksContinue(): Promise<boolean> {
    const hooks = this.commandHooks;
    if (!hooks?.has('Stop') || this.stopError || this.storageError || this.runAbort?.signal.aborted) return false;
    const last = lastAssistant(this.agent.state.messages);
    if (!last || last.stopReason === 'error' || last.stopReason === 'aborted') return false;
    const verdict = await hooks.stop(this.stopHookActive, this.lastAssistantText() ?? undefined, this.runAbort?.signal);
    if (!verdict.blocked) return false;
    if (this.stopHookActive) {
      this.bus.notify(`warning: a Stop hook blocked the stop again after the agent went on once; the agent stops here. It said: ${verdict.reason ?? ''}`);
      return false;
    }
    this.stopHookActive = true;
    this.agent.followUp(userMessage(`Stop hook feedback:\n${verdict.reason ?? ''}`));
    return true;
  }

  /**
   * Continues an interrupted session from what it holds, the way its loop would have gone on
   * (session-resume.ts): a finished answer is left alone (no request), tool calls cut off get
   * results (read-only ones run again, the others are reported as interrupted), a pending turn
   * goes on with the next model call. Failed replies at the end are dropped from the context
   * first. A `note` joins the pending turn (on the wire: the same user turn) or follows a
   * finished answer. Resolves with where the session stood; rejects like prompt().
   */
  async resume(note?: string): Promise<ResumeKind> {
    this.assertUsable();
    if (this.isStreaming) throw new Error('The agent is already running: resume() continues an idle session.');
    const plan = planResume(this.agent.state.messages);
    if (plan.dropped.length > 0) this.agent.replaceMessages(plan.messages);
    const point = plan.point;
    if (note === undefined && (point.kind === 'finished' || point.kind === 'empty')) return point.kind;
    await this.runExclusive(async () => {
      this.beginPrompt();
      const signal = this.runAbort?.signal ?? new AbortController().signal;
      if (point.kind === 'dangling' && !this.stopError) {
        const hooks = composeToolHooks({ hooks: this.hooks, extensions: this.extensions, cwd: this.config.cwd, bus: this.bus });
        const context = { systemPrompt: this.systemPrompt, messages: this.agent.state.messages.slice(), tools: this.agent.state.tools };
        await answerInterruptedCalls(point.reply, point.calls, context, hooks, signal, (event) => {
          if (event.type === 'message_end') this.agent.appendMessage(event.message);
          this.onAgentEvent(event);
        });
      }
      await this.compactBeforePrompt();
      // A compaction rebuilds the context from the file, failed replies included: drop them again.
      this.agent.replaceMessages(planResume(this.agent.state.messages).messages);
      if (!this.stopError && !signal.aborted) await this.drive(() => (note === undefined ? this.agent.continue() : this.agent.prompt(userMessage(note))));
      if (this.storageError) throw this.storageError;
      if (this.stopError) throw this.stopError;
    });
    return point.kind;
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

  /** Resolves when no prompt is running and every hook has seen every event. */
  async waitForIdle(): Promise<void> {
    await this.running?.catch(() => undefined);
    await this.bus.idle();
  }

  private assertUsable(): void {
    if (this.disposed) throw new Error('This session was disposed; create a new one.');
    if (this.storageError) throw new Error(`${this.storageError.message} This session cannot go on; fix the problem and reopen it.`);
  }

  private async runExclusive(work: () => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.runAbort = controller;
    const running = (async () => {
      try {
        await work();
      } finally {
        await this.bus.idle();
        // A run ends with everything on disk (the store batches entries within a turn).
        try {
          this.storeValue.persist();
        } catch (err) {
          this.storageFailed(err);
        }
      }
    })();
    this.running = running;
    try {
      await running;
    } finally {
      if (this.running === running) this.running = undefined;
      if (this.runAbort === controller) this.runAbort = undefined;
    }
    if (this.storageError) throw this.storageError;
  }

  /** Per-prompt guard state starts over; a spent budget stops before any call. */
  private beginPrompt(): void {
    this.retryAttempt = 0;
    this.stopHookActive = false;
    this.stopError = undefined;
    this.compactPending = false;
    this.guard.beginPrompt();
    const budget = this.guard.budgetStop();
    if (budget) this.stopWith(budget);
  }

  /** A guard ended the prompt: say so once; prompt() rejects with it when the run is over. */
  private stopWith(error: RunStoppedError): void {
    if (this.stopError) return;
    this.stopError = error;
    this.emit({ type: 'run_stopped', kind: error.kind, message: error.message });
  }

  /** Wraps a stream function so every call's final usage counts against the spend caps. */
  private metered(fn: StreamFunction): StreamFunction {
    return (model, context, options) => {
      const events = fn(model, context, options);
      events.result().then(
        (m) => this.guard.record(m.usage),
        () => undefined,
      );
      return events;
    };
  }

  /**
   * A turn boundary: the reply's tool calls are done and the loop would call the model again
   * (when `continues`). True stops the loop: a guard stopped the run, or the context passed the
   * compaction threshold (afterRun compacts, then continues the same run).
   */
  private guardTurn(message: AssistantMessage, continues: boolean, results: readonly ToolResultMessage[] = []): boolean {
    if (message.stopReason === 'error' || message.stopReason === 'aborted') return false;
    const verdict = this.guard.afterTurn(message, continues, results);
    if (verdict.stop) {
      this.stopWith(verdict.stop);
      return true;
    }
    if (verdict.warn) {
      this.emit({ type: 'loop_warning', pattern: verdict.warn.pattern, detail: verdict.warn.detail });
      this.agent.steer({ role: 'custom', customType: 'loop-warning', content: loopWarningText(verdict.warn), display: true, timestamp: Date.now() });
    }
    if (!continues || !this.compactionSettings.enabled) return false;
    const tokens = estimateContextTokens(this.agent.state.messages).tokens;
    if (!shouldCompact(tokens, this.model.contextWindow, this.compactionSettings)) return false;
    this.compactPending = true;
    return true;
  }

  /** Runs the agent, then retries / compacts / continues until the prompt is settled. */
  private async drive(start: () => Promise<void>): Promise<void> {
    await start();
    for (;;) {
      await this.bus.idle();
      if (!(await this.afterRun()) && !(await this.stopHooksContinue())) return;
      const budget = this.guard.budgetStop();
      if (budget) {
        this.stopWith(budget);
        return;
      }
      try {
        await this.agent.continue();
      } catch (err) {
        // Nothing left to continue from (e.g. the queue was taken meanwhile): the prompt is settled.
        this.bus.notify(`Could not continue the run: ${errorText(err)}`);
        return;
      }
    }
  }

  /** Decides what follows a run; true = continue the agent. Retry takes precedence over compaction. */
  private async afterRun(): Promise<boolean> {
    const signal = this.runAbort?.signal;
    const last = lastAssistant(this.agent.state.messages);
    if (this.stopError) {
      this.endRetry(this.stopError.message);
      return false;
    }
    if (this.compactPending) {
      this.compactPending = false;
      return this.compactAtTurnBoundary();
    }
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
    if (await this.compactAfterRun(last)) return true;
    // A steer/followUp that came after the loop's last look at its queues (a user pressing Enter
    // as the reply ends) is still part of this prompt: go on instead of leaving it for the next.
    return last.stopReason !== 'error' && !this.runAbort?.signal.aborted && this.agent.hasQueuedMessages();
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
      beforePrompt,
    };
  }

  private async compactAfterRun(last: AssistantMessage): Promise<boolean> {
    const check = checkCompaction(this.checkInput(last, false));
    if (check.action === 'overflow') {
      const learned = this.learnWindow(last);
      if (!(await this.guardedCompact('overflow', learned))) return false;
      // The rebuilt context holds the failed reply again (it is in the file): drop it and re-run.
      this.dropTrailingError();
      return true;
    }
    if (check.action === 'threshold') return (await this.guardedCompact('threshold')) && this.agent.hasQueuedMessages();
    return false;
  }

  /**
   * The run stopped at a turn boundary past the threshold: compact, then continue it. A failed
   * compaction does not end the task: the run goes on (an overflow would be handled as one).
   */
  private async compactAtTurnBoundary(): Promise<boolean> {
    await this.guardedCompact('threshold');
    return !this.stopError && !this.runAbort?.signal.aborted;
  }

  /**
   * An overflow error that states the server's window (smaller than the model's) makes it the
   * model's window from now on: the compaction that follows and every threshold after it are
   * sized for what the server accepts. Later sessions of this process start from it too.
   */
  private learnWindow(failed: AssistantMessage): boolean {
    const minWindow = 2 * this.compactionSettings.reserveTokens + 1;
    const stated = overflowLimitFromError(failed.errorMessage);
    if (stated !== undefined && stated < minWindow && stated < this.model.contextWindow) {
      // Too small to leave room for a reply and a summary: compacting for it would only thrash.
      this.bus.notify(`The server's context window for ${this.model.provider}/${this.model.id} is only ${stated} tokens: too small for an agent (raise the server's context size, e.g. llama.cpp -c / Ollama num_ctx).`);
      return false;
    }
    const window = learnContextWindow(this.model, failed.errorMessage, minWindow);
    if (window === undefined) return false;
    const was = this.model.contextWindow;
    this.agent.setModel({ ...this.model, contextWindow: window });
    this.bus.notify(`The server's context window for ${this.model.provider}/${this.model.id} is ${window} tokens (not ${was}): compaction follows it from now on.`);
    return true;
  }

  /** An automatic compaction the run guard allows (or a stop when it would not help). */
  private async guardedCompact(reason: 'threshold' | 'overflow', windowShrank = false): Promise<boolean> {
    const refused = this.guard.beforeCompaction(reason === 'overflow', windowShrank);
    if (refused) {
      this.stopWith(refused);
      this.emit({ type: 'auto_compaction_end', reason, aborted: false, willRetry: false, errorMessage: refused.message });
      return false;
    }
    const ok = await this.autoCompact(reason);
    if (ok) {
      // Counted from the messages themselves: a kept reply's usage describes the context before.
      const after = this.agent.state.messages.reduce((n, m) => n + estimateMessageTokens(m), estimateTextTokens(this.systemPrompt));
      this.guard.compacted({ tokensAfter: after, threshold: compactionThreshold(this.model.contextWindow, this.compactionSettings) });
    }
    return ok;
  }

  private async compactBeforePrompt(): Promise<void> {
    const last = lastAssistant(this.agent.state.messages);
    if (!last) return;
    if (checkCompaction(this.checkInput(last, true)).action === 'threshold') await this.autoCompact('threshold');
  }

  private async autoCompact(reason: 'threshold' | 'overflow'): Promise<boolean> {
    this.emit({ type: 'auto_compaction_start', reason });
    const outcome = await this.compactNow(undefined, this.runAbort?.signal);
    if (outcome.status === 'compacted') {
      this.emit({ type: 'auto_compaction_end', reason, result: outcome.result, aborted: false, willRetry: reason === 'overflow' });
      return true;
    }
    const aborted = outcome.status === 'aborted';
    const prefix = aborted ? '' : reason === 'overflow' ? 'Context overflow recovery failed: ' : 'Auto-compaction failed: ';
    this.emit({ type: 'auto_compaction_end', reason, aborted, willRetry: false, errorMessage: prefix + outcome.message });
    return false;
  }

  // ---- compaction ---------------------------------------------------------------------------------

  /**
   * Compacts now (aborting a run in progress first). Resolves with the result; rejects with
   * "Already compacted ..." / "Nothing to compact ..." / a failure message.
   */
  async compact(customInstructions?: string, options: CompactOptions = {}): Promise<CompactionResult> {
    this.assertUsable();
    if (this.isStreaming) await this.abort();
    let outcome: SessionCompactionOutcome | undefined;
    await this.runExclusive(async () => {
      this.emit({ type: 'compaction_start', reason: 'manual' });
      outcome = await this.compactNow(customInstructions, this.runAbort?.signal, options);
      if (outcome.status === 'compacted') this.emit({ type: 'compaction_end', reason: 'manual', result: outcome.result, aborted: false });
      else this.emit({ type: 'compaction_end', reason: 'manual', aborted: outcome.status === 'aborted', errorMessage: outcome.message });
    });
    if (outcome?.status !== 'compacted') throw new Error(outcome?.message ?? 'Compaction failed.');
    return outcome.result;
  }

  private summaryStreamOptions(): Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'> {
    const options: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'> = { ...this.config.streamOptions };
    if (this.config.apiKey) options.apiKey = this.config.apiKey;
    return options;
  }

  /** One compaction job; on success the agent continues from the rebuilt context. */
  private async compactNow(customInstructions: string | undefined, signal: AbortSignal | undefined, options: CompactOptions = {}): Promise<SessionCompactionOutcome> {
    this.compacting = true;
    try {
      const outcome = await compactSession(
        {
          store: this.storeValue,
          model: this.model,
          complete: this.completeFn,
          streamOptions: this.summaryStreamOptions(),
          settings: options.keepRecentTokens === undefined ? this.compactionSettings : { ...this.compactionSettings, keepRecentTokens: options.keepRecentTokens },
          summaryRetry: this.config.summaryRetry,
          summaries: this.summaries,
          beforeCompact: this.hooks.beforeCompact,
          extensions: this.extensions,
          bus: this.bus,
          conversation: summaryConversation({
            model: this.model,
            systemPrompt: this.systemPrompt,
            tools: this.agent.state.tools,
            thinkingLevel: this.thinkingLevel,
            transformsContext: this.hooks.transformContext !== undefined,
            cacheRetention: this.config.streamOptions?.cacheRetention,
            separateSummaryStream: this.config.summaryStreamFn !== undefined,
          }),
        },
        customInstructions,
        signal,
      );
      if (outcome.status === 'compacted') this.agent.replaceMessages(this.storeValue.buildContext().messages);
      return outcome;
    } finally {
      this.compacting = false;
    }
  }

  // ---- moving around the tree -----------------------------------------------------------------------

  private navigationContext(): NavigationContext {
    return { store: this.storeValue, model: this.model, complete: this.completeFn, streamOptions: this.summaryStreamOptions(), summaries: this.summaries };
  }

  /**
   * Moves to an entry of this session (rewind / branch). A user-message target leaves the leaf
   * at its parent and returns its text for re-editing. With `summarize`, the branch being left is
   * summarized and the summary attached where the conversation continues.
   */
  async navigate(targetId: string, request: NavigationRequest = {}): Promise<NavigateResult> {
    this.assertUsable();
    if (this.isStreaming) await this.abort();
    const fromLeafId = this.storeValue.leafId;
    const outcome = await navigateTree(this.storeValue, targetId, navigateOptions(this.navigationContext(), targetId, request));
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
  rewind(targetId: string, request: NavigationRequest = {}): Promise<NavigateResult> {
    return this.navigate(targetId, request);
  }

  /**
   * Continues in a NEW session file holding the path up to (not including) the user message
   * `entryId`; returns that message's text so it can be edited and sent again.
   */
  async fork(entryId: string): Promise<ForkResult> {
    this.assertUsable();
    if (this.isStreaming) await this.abort();
    const old = this.storeValue;
    const { next, text } = forkStore(old, entryId);
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

  /** Changes the caps from the next model call on (e.g. the turns an orchestrated attempt has left). */
  setLimits(limits: Partial<RunLimits>): void {
    this.guard.setLimits(limits);
  }

  /** The caps in force and what this session object has spent so far (every call counted). */
  get runLimits(): { limits: RunLimits; spent: { usd: number; tokens: number } } {
    return { limits: this.guard.limits, spent: this.guard.spend };
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
    await this.bus.idle();
    this.disposed = true;
    // Tools release what they hold (bash removes its temp folder with the full-output logs).
    for (const tool of this.tools) await Promise.resolve(tool.dispose?.()).catch(() => undefined);
    for (const dispose of this.config.disposers ?? []) await Promise.resolve(dispose()).catch(() => undefined);
    this.unsubscribeAgent();
    this.unsubscribeWriteErrors();
    this.bus.clear();
    try {
      this.storeValue.close();
    } catch (err) {
      if (!this.storageError) throw err; // already reported; the file keeps what was written
    }
  }
}
