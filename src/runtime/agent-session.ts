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
//
// The concepts live in their own files; this class holds the state and wires them together:
//   session-run-loop.ts     after each run: retries, automatic compactions, Stop hooks, guard stops
//   prompt-message.ts       the user message of a prompt (SessionStart / UserPromptSubmit hooks)
//   session-persistence.ts  messages -> session entries, and what a failed write does (SessionWriter)
//   session-compaction.ts   one compaction job;  session-compactor.ts  its inputs from the session
//   session-navigation.ts   navigate / rewind / fork
//   session-resume.ts       resume();  session-settings.ts  model and thinking-level changes
import { Agent } from '../agent/agent.js';
import type { AgentEvent, AgentMessage, AgentThinkingLevel, AnyAgentTool } from '../agent/types.js';
import { stream as registryStream } from '../ai/registry.js';
import type { ImageContent, Model, StreamFunction, UserMessage } from '../ai/types.js';
import { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from '../session/defaults.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompleteFunction } from '../session/summarize.js';
import type { SessionHeader } from '../session/types.js';
import { expandSkillCommand } from '../tools/skills.js';
import { DEFAULT_RETRY_SETTINGS, type RetrySettings } from './defaults.js';
import { withTurnRetries } from './retry-policy.js';
import { errorText, SessionEventBus } from './event-bus.js';
import { emptyExtensions, type ExtensionCommandContext, type LoadedExtensions } from './extensions.js';
import { RunGuard } from './run-guard.js';
import { DEFAULT_LOOP_DETECTION, DEFAULT_RUN_LIMITS, type RunLimits } from './run-limits.js';
import { type CompactOptions, compactionNotDone, type SessionCompactionOutcome } from './session-compaction.js';
import { SessionCompactor } from './session-compactor.js';
import { answerInterruptedCalls, planResume, type ResumeKind } from './session-resume.js';
import type { AgentSessionEvent, AgentSessionListener, CompactionResult } from './session-events.js';
import { composeToolHooks, type AgentSessionHooks } from './session-hooks.js';
import { HookSession, withCommandToolHooks, type HookVerdict } from './hook-session.js';
import { forkReport, forkStore, moveLeaf, type NavigationRequest } from './session-navigation.js';
import { computeStats, type SessionStats } from './stats.js';
import { lastAssistantText, promptMessage, userMessage } from './prompt-message.js';
import { SessionRunLoop } from './session-run-loop.js';
import { SessionWriter } from './session-persistence.js';
import { changeModel, changeThinkingLevel, type SettingsContext } from './session-settings.js';

import type {
  AgentSessionConfig,
  ForkResult,
  NavigateResult,
  PromptOptions,
  SessionState,
  SummaryCall,
} from './agent-session-types.js';

export class AgentSession {
  readonly agent: Agent;
  private storeValue: SessionStore;
  private readonly bus: SessionEventBus;
  private readonly extensions: LoadedExtensions;
  private readonly hooks: AgentSessionHooks;
  /** Command hooks in Claude Code's format (hook-session.ts), when configured. */
  private readonly commandHooks: HookSession | undefined;
  private sessionStartRan = false;
  private compactionSettings: CompactionSettings;
  private retrySettings: RetrySettings;
  /** Loop detection and the caps on turns, spend and compactions (run-guard.ts). */
  private readonly guard: RunGuard;
  /** Retries, automatic compactions, Stop hooks and guard stops of a prompt (session-run-loop.ts). */
  private readonly runLoop: SessionRunLoop;
  /** Compaction jobs and branch-summary context (session-compactor.ts). */
  private readonly compactor: SessionCompactor;
  private readonly unsubscribeAgent: () => void;
  private readonly unsubscribeWriteErrors: () => void;
  /** The whole prompt (run, retries, compactions); undefined when idle. */
  private running: Promise<void> | undefined;
  /** Aborts retry waits and compactions of the current prompt. */
  private runAbort: AbortController | undefined;
  private disposed = false;
  /** Writes to the session file; once one failed, the run stops and no further prompt starts. */
  private readonly writer: SessionWriter;
  /** Steering / follow-up messages not yet delivered (removed when their message_start is seen). */
  private readonly queued = new Set<AgentMessage>();
  private readonly summaryCallListeners = new Set<(call: SummaryCall) => void>();

  constructor(private readonly config: AgentSessionConfig) {
    this.storeValue = config.store;
    this.extensions = config.extensions ?? emptyExtensions();
    this.hooks = config.hooks ?? {};
    this.compactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...config.compaction };
    this.retrySettings = { ...DEFAULT_RETRY_SETTINGS, ...config.retry };
    this.guard = new RunGuard(
      { ...DEFAULT_LOOP_DETECTION, ...config.loopDetection },
      { ...DEFAULT_RUN_LIMITS, ...config.limits },
    );
    const notify = config.notify ?? ((m: string) => void process.stderr.write(`${m}\n`));
    this.bus = new SessionEventBus(this.hooks.onEvent, this.extensions.handlers.event, notify);
    this.writer = new SessionWriter({
      store: () => this.storeValue,
      notify: (m) => this.bus.notify(m),
      stopRun: () => {
        this.runAbort?.abort();
        this.agent.abort();
      },
    });
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
    // Summary calls (compactions, branch summaries) are no conversation message: onSummaryCall
    // tells a listener (`orchestrate agent`'s traces) of each one that got a reply.
    const complete: CompleteFunction = (model, context, options) => {
      const startTs = Date.now();
      return Promise.resolve(summaryStream(model, context, options))
        .then((s) => s.result())
        .then((message) => {
          const call = { message, startTs, endTs: Date.now() };
          for (const l of this.summaryCallListeners) {
            try {
              l(call);
            } catch (err) {
              notify(`A summary call listener threw: ${errorText(err)}`);
            }
          }
          return message;
        });
    };

    this.agent = new Agent({
      initialState: {
        model: config.model,
        systemPrompt: config.systemPrompt,
        thinkingLevel: config.model.reasoning ? (config.thinkingLevel ?? 'off') : 'off',
        tools: config.tools,
        messages: config.store.buildContext().messages,
      },
      streamFn: withTurnRetries(
        turnStream,
        () => this.runLoop,
        () => this.retrySettings,
      ),
      apiKey: config.apiKey,
      streamOptions: config.streamOptions,
      transformContext: this.hooks.transformContext,
      beforeTurn: this.hooks.beforeTurn,
      shouldStop: async (ctx) =>
        this.runLoop.guardTurn(ctx.message, ctx.toolResults.length > 0, ctx.toolResults) ||
        ((await this.hooks.shouldStop?.(ctx)) ?? false),
      ...composeToolHooks({ hooks: this.hooks, extensions: this.extensions, cwd: config.cwd, bus: this.bus }),
      steeringMode: config.steeringMode,
      followUpMode: config.followUpMode,
      onListenerError: (err, event) => notify(`A session listener threw on ${event.type}: ${errorText(err)}`),
    });
    this.compactor = new SessionCompactor({
      agent: this.agent,
      store: () => this.storeValue,
      settings: () => this.compactionSettings,
      complete,
      streamOptions: config.streamOptions,
      apiKey: config.apiKey,
      summaryRetry: config.summaryRetry,
      summaries: config.summaries ?? 'model',
      hooks: this.hooks,
      extensions: this.extensions,
      bus: this.bus,
      separateSummaryStream: config.summaryStreamFn !== undefined,
    });
    this.runLoop = new SessionRunLoop({
      agent: this.agent,
      bus: this.bus,
      guard: this.guard,
      commandHooks: this.commandHooks,
      compactionSettings: () => this.compactionSettings,
      retrySettings: () => this.retrySettings,
      store: () => this.storeValue,
      runSignal: () => this.runAbort?.signal,
      storageError: () => this.writer.error,
      emit: (event) => this.emit(event),
      compactNow: (signal) => this.compactor.compact(undefined, signal),
    });
    this.unsubscribeAgent = this.agent.subscribe((event) => this.onAgentEvent(event));
    this.unsubscribeWriteErrors = this.storeValue.onWriteError((err) => this.writer.failed(err));
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
    return this.compactor.compacting;
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
      isCompacting: this.compactor.compacting,
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
    return lastAssistantText(this.messages);
  }

  stats(): SessionStats {
    return computeStats(this.storeValue.entries, this.messages, this.model, {
      id: this.sessionId,
      file: this.sessionFile,
    });
  }

  // ---- events -------------------------------------------------------------------------------------

  /** Listeners are called synchronously, in order, after the event was persisted. */
  subscribe(listener: AgentSessionListener): () => void {
    return this.bus.subscribe(listener);
  }

  /** Each summary model call (a compaction's or a branch summary's) once its reply is in. */
  onSummaryCall(listener: (call: SummaryCall) => void): () => void {
    this.summaryCallListeners.add(listener);
    return () => this.summaryCallListeners.delete(listener);
  }

  private emit(event: AgentSessionEvent): void {
    this.bus.emit(event);
  }

  private onAgentEvent(event: AgentEvent): void {
    if (event.type === 'message_start' && event.message.role === 'user') this.queued.delete(event.message);
    if (event.type === 'message_end') this.writer.write(event.message);
    this.emit(event);
    if (event.type === 'message_end' && event.message.role === 'assistant') this.runLoop.replyEnded(event.message);
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
      throw new Error(
        'The agent is already running: use steer() or followUp() (RPC: steer / follow_up, or prompt with streamingBehavior) to queue this message, or wait for the run to finish.',
      );
    }
    const expanded = text.startsWith('/skill:') ? expandSkillCommand(text, this.config.skills ?? []) : undefined;
    return this.runExclusive(async () => {
      this.runLoop.beginPrompt();
      const message = await this.promptMessage(expanded ?? text, options.images);
      await this.runLoop.compactBeforePrompt();
      if (!this.runLoop.stopError) await this.runLoop.drive(() => this.agent.prompt(message));
      if (this.writer.error) throw this.writer.error;
      if (this.runLoop.stopError) throw this.runLoop.stopError;
    });
  }

  /** The user message of a prompt, with what SessionStart / UserPromptSubmit hooks add (prompt-message.ts). */
  private promptMessage(text: string, images?: ImageContent[]): Promise<UserMessage> {
    return promptMessage(text, images, {
      hooks: this.commandHooks,
      claimSessionStart: () => {
        if (this.sessionStartRan) return false;
        this.sessionStartRan = true;
        return true;
      },
      resuming: this.agent.state.messages.length > 0,
      signal: this.runAbort?.signal,
    });
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
      this.runLoop.beginPrompt();
      const signal = this.runAbort?.signal ?? new AbortController().signal;
      if (point.kind === 'dangling' && !this.runLoop.stopError) {
        const hooks = composeToolHooks({
          hooks: this.hooks,
          extensions: this.extensions,
          cwd: this.config.cwd,
          bus: this.bus,
        });
        const context = {
          systemPrompt: this.systemPrompt,
          messages: this.agent.state.messages.slice(),
          tools: this.agent.state.tools,
        };
        await answerInterruptedCalls(point.reply, point.calls, context, hooks, signal, (event) => {
          if (event.type === 'message_end') this.agent.appendMessage(event.message);
          this.onAgentEvent(event);
        });
      }
      await this.runLoop.compactBeforePrompt();
      // A compaction rebuilds the context from the file, failed replies included: drop them again.
      this.agent.replaceMessages(planResume(this.agent.state.messages).messages);
      if (!this.runLoop.stopError && !signal.aborted)
        await this.runLoop.drive(() =>
          note === undefined ? this.agent.continue() : this.agent.prompt(userMessage(note)),
        );
      if (this.writer.error) throw this.writer.error;
      if (this.runLoop.stopError) throw this.runLoop.stopError;
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
    this.writer.assertWritable();
  }

  private async runExclusive(work: () => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.runAbort = controller;
    const running = (async () => {
      try {
        await work();
      } finally {
        await this.bus.idle();
        this.writer.flush();
      }
    })();
    this.running = running;
    try {
      await running;
    } finally {
      if (this.running === running) this.running = undefined;
      if (this.runAbort === controller) this.runAbort = undefined;
    }
    if (this.writer.error) throw this.writer.error;
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
   * Runs the SubagentStop command hooks: an orchestrated instance's agent is done. Undefined when
   * there are none; the caller decides what a block means (the instance host sends the agent back
   * to work once with the reason).
   */
  async subagentStop(agent: { id: string; type: string }, stopHookActive: boolean): Promise<HookVerdict | undefined> {
    if (!this.commandHooks?.has('SubagentStop')) return undefined;
    return this.commandHooks.subagentStop(agent, stopHookActive, this.lastAssistantText() ?? undefined);
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
      outcome = await this.compactor.compact(customInstructions, this.runAbort?.signal, options);
      if (outcome.status === 'compacted')
        this.emit({ type: 'compaction_end', reason: 'manual', result: outcome.result, aborted: false });
      else
        this.emit({
          type: 'compaction_end',
          reason: 'manual',
          aborted: outcome.status === 'aborted',
          errorMessage: outcome.message,
        });
    });
    if (outcome === undefined) throw new Error('Compaction failed.');
    if (outcome.status !== 'compacted') throw compactionNotDone(outcome);
    return outcome.result;
  }

  // ---- moving around the tree -----------------------------------------------------------------------

  /**
   * Moves to an entry of this session (rewind / branch). A user-message target leaves the leaf
   * at its parent and returns its text for re-editing. With `summarize`, the branch being left is
   * summarized and the summary attached where the conversation continues.
   */
  async navigate(targetId: string, request: NavigationRequest = {}): Promise<NavigateResult> {
    this.assertUsable();
    if (this.isStreaming) await this.abort();
    const { result, event } = await moveLeaf(this.compactor.navigationContext(), targetId, request);
    if (event) {
      this.agent.replaceMessages(this.storeValue.buildContext().messages);
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
    const { result, event } = forkReport(old, next, text);
    this.emit(event);
    return result;
  }

  // ---- settings -------------------------------------------------------------------------------------

  /** Switches the model from the next run on (an id is resolved for the current provider). */
  setModel(model: Model | string, provider?: string): Model {
    this.assertUsable();
    const next = changeModel(this.settingsContext(), model, provider);
    if (!next.reasoning && this.thinkingLevel !== 'off') this.setThinkingLevel('off');
    return next;
  }

  /** Sets the reasoning effort ("off" for models without reasoning); recorded when it changes. */
  setThinkingLevel(level: AgentThinkingLevel): AgentThinkingLevel {
    this.assertUsable();
    return changeThinkingLevel(this.settingsContext(), level);
  }

  private settingsContext(): SettingsContext {
    const c: SettingsContext = { agent: this.agent, store: this.storeValue, emit: (event) => this.emit(event) };
    if (this.config.resolveModel) c.resolveModel = this.config.resolveModel;
    return c;
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
      if (!this.writer.error) throw err; // already reported; the file keeps what was written
    }
  }
}
