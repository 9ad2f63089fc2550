// The run loop of one AgentSession prompt: run the agent, then decide what follows until the
// prompt is settled. After each run: a guard stop ends it; a reply ai/ marks retryable (cut after
// it began streaming) is run again (with backoff, within the turn's one retry budget, which the
// provider's own retries also spend and report here); a context past the threshold or an overflow is compacted
// (guarded by the run guard) and the run continues or the failed turn is re-run; Stop hooks may
// send the agent back to work once; late steering / follow-up messages continue the run.
// Holds the per-prompt state (retry attempt, pending compaction, the guard's stop); the session
// passes what the loop needs through RunLoopHost.
import type { Agent } from '../agent/agent.js';
import { learnContextWindow } from '../ai/learned-windows.js';
import { overflowLimitFromError } from '../ai/overflow.js';
import { estimateContextTokens } from '../ai/token-estimate.js';
import type { AssistantMessage, RetryInfo, StreamOptions, ToolResultMessage } from '../ai/types.js';
import type { CompactionSettings } from '../session/defaults.js';
import { shouldCompact } from '../session/prepare-compaction.js';
import type { SessionStore } from '../session/session-store.js';
import { sleepUnlessAborted } from '../util/sleep-unless-aborted.js';
import {
  checkCompaction,
  compactionFill,
  predatesLatestCompaction,
  type CompactionCheckInput,
} from './auto-compaction.js';
import type { RetrySettings } from './defaults.js';
import { errorText, type SessionEventBus } from './event-bus.js';
import type { HookSession } from './hook-session.js';
import { lastAssistant, lastAssistantText, userMessage } from './prompt-message.js';
import { isRetryableError, retryDelay, turnRetryBudget } from './retry-policy.js';
import { loopWarningText, type RunGuard } from './run-guard.js';
import type { RunStoppedError } from './run-limits.js';
import type { SessionCompactionOutcome } from './session-compaction.js';
import type { AgentSessionEvent } from './session-events.js';

/** What the run loop reads from and does through its AgentSession. */
export interface RunLoopHost {
  readonly agent: Agent;
  readonly bus: SessionEventBus;
  readonly guard: RunGuard;
  readonly commandHooks: HookSession | undefined;
  /** The settings in force (setAutoCompaction / setAutoRetry replace them). */
  compactionSettings(): CompactionSettings;
  retrySettings(): RetrySettings;
  store(): SessionStore;
  /** Aborts retry waits and compactions of the current prompt; undefined when idle. */
  runSignal(): AbortSignal | undefined;
  /** Set when the session file could not be written. */
  storageError(): Error | undefined;
  emit(event: AgentSessionEvent): void;
  /** One automatic compaction job; on success the agent continues from the rebuilt context. */
  compactNow(signal: AbortSignal | undefined): Promise<SessionCompactionOutcome>;
}

export class SessionRunLoop {
  /** Set when a guard ended the current prompt; prompt() rejects with it. */
  private stopErrorValue: RunStoppedError | undefined;
  /** The context passed the threshold at a turn boundary: compact, then continue the run. */
  private compactPending = false;
  /** Retries the current turn has used, by the provider (before anything streamed) and by this loop. */
  private retryAttempt = 0;
  /** retryAttempt when the turn's latest request began: the provider's retries count on from it. */
  private retriesBeforeCall = 0;
  /** The caller's own cap on retries (streamOptions.maxRetries), as the latest request saw it. */
  private callerRetryCap: Pick<StreamOptions, 'maxRetries'> = {};
  /** A Stop hook already sent the agent back to work in this prompt (Claude Code's stop_hook_active). */
  private stopHookActive = false;

  constructor(private readonly host: RunLoopHost) {}

  get stopError(): RunStoppedError | undefined {
    return this.stopErrorValue;
  }

  /** Per-prompt guard state starts over; a spent budget stops before any call. */
  beginPrompt(): void {
    this.retryAttempt = 0;
    this.stopHookActive = false;
    this.stopErrorValue = undefined;
    this.compactPending = false;
    this.host.guard.beginPrompt();
    const budget = this.host.guard.budgetStop();
    if (budget) this.stopWith(budget);
  }

  /**
   * The retry budget for the provider on the turn's next request: what the turn has left of its
   * one budget (the provider spends it on failed requests, this loop on re-run turns).
   */
  providerRetryBudget(options: Pick<StreamOptions, 'maxRetries'>): number {
    this.retriesBeforeCall = this.retryAttempt;
    this.callerRetryCap = options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {};
    return turnRetryBudget(this.host.retrySettings(), this.retryAttempt, options);
  }

  /** The provider is about to retry a failed request: counted in the turn's budget and reported. */
  providerRetried(info: RetryInfo): void {
    this.retryAttempt = this.retriesBeforeCall + info.attempt;
    this.host.emit({
      type: 'auto_retry_start',
      attempt: this.retryAttempt,
      maxAttempts: this.retriesBeforeCall + info.maxRetries,
      delayMs: info.delayMs,
      errorMessage: info.errorMessage,
    });
  }

  /** An assistant reply ended: a retry sequence it finished successfully is reported. */
  replyEnded(message: AssistantMessage): void {
    const failed = message.stopReason === 'error' || message.stopReason === 'aborted';
    if (!failed && this.retryAttempt > 0) {
      this.host.emit({ type: 'auto_retry_end', success: true, attempt: this.retryAttempt });
      this.retryAttempt = 0;
    }
  }

  /** A guard ended the prompt: say so once; prompt() rejects with it when the run is over. */
  private stopWith(error: RunStoppedError): void {
    if (this.stopErrorValue) return;
    this.stopErrorValue = error;
    this.host.emit({ type: 'run_stopped', kind: error.kind, message: error.message });
  }

  /**
   * A turn boundary: the reply's tool calls are done and the loop would call the model again
   * (when `continues`). True stops the loop: a guard stopped the run, or the context passed the
   * compaction threshold (afterRun compacts, then continues the same run).
   */
  guardTurn(message: AssistantMessage, continues: boolean, results: readonly ToolResultMessage[] = []): boolean {
    const { agent, guard } = this.host;
    if (message.stopReason === 'error' || message.stopReason === 'aborted') return false;
    const verdict = guard.afterTurn(message, continues, results);
    if (verdict.stop) {
      this.stopWith(verdict.stop);
      return true;
    }
    if (verdict.warn) {
      this.host.emit({ type: 'loop_warning', pattern: verdict.warn.pattern, detail: verdict.warn.detail });
      agent.steer({
        role: 'custom',
        customType: 'loop-warning',
        content: loopWarningText(verdict.warn),
        display: true,
        timestamp: Date.now(),
      });
    }
    const settings = this.host.compactionSettings();
    if (!continues || !settings.enabled) return false;
    const tokens = estimateContextTokens(agent.state.messages).tokens;
    if (!shouldCompact(tokens, agent.state.model.contextWindow, settings)) return false;
    this.compactPending = true;
    return true;
  }

  /** Runs the agent, then retries / compacts / continues until the prompt is settled. */
  async drive(start: () => Promise<void>): Promise<void> {
    await start();
    for (;;) {
      await this.host.bus.idle();
      if (!(await this.afterRun()) && !(await this.stopHooksContinue())) return;
      const budget = this.host.guard.budgetStop();
      if (budget) {
        this.stopWith(budget);
        return;
      }
      try {
        await this.host.agent.continue();
      } catch (err) {
        // Nothing left to continue from (e.g. the queue was taken meanwhile): the prompt is settled.
        this.host.bus.notify(`Could not continue the run: ${errorText(err)}`);
        return;
      }
    }
  }

  /** Decides what follows a run; true = continue the agent. Retry takes precedence over compaction. */
  private async afterRun(): Promise<boolean> {
    const signal = this.host.runSignal();
    const last = lastAssistant(this.host.agent.state.messages);
    if (this.stopErrorValue) {
      this.endRetry(this.stopErrorValue.message);
      return false;
    }
    if (this.compactPending) {
      this.compactPending = false;
      return this.compactAtTurnBoundary();
    }
    if (!last || signal?.aborted || last.stopReason === 'aborted') {
      this.endRetry(
        last?.stopReason === 'aborted' || signal?.aborted ? 'Retry cancelled: the run was aborted.' : undefined,
      );
      return false;
    }
    const retry = this.host.retrySettings();
    if (last.stopReason === 'error' && retry.enabled && isRetryableError(last)) {
      if (turnRetryBudget(retry, this.retryAttempt, this.callerRetryCap) === 0) {
        this.endRetry(last.errorMessage);
        return false;
      }
      this.retryAttempt++;
      const delayMs = retryDelay(this.retryAttempt, retry);
      this.host.emit({
        type: 'auto_retry_start',
        attempt: this.retryAttempt,
        maxAttempts: turnRetryBudget(retry, 0, this.callerRetryCap),
        delayMs,
        errorMessage: last.errorMessage ?? 'unknown error',
      });
      if (!(await sleepUnlessAborted(delayMs, signal))) {
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
    return last.stopReason !== 'error' && !this.host.runSignal()?.aborted && this.host.agent.hasQueuedMessages();
  }

  /** Ends a retry sequence that did not succeed (success is reported at the reply's message_end). */
  private endRetry(finalError: string | undefined): void {
    if (this.retryAttempt === 0) return;
    this.host.emit({
      type: 'auto_retry_end',
      success: false,
      attempt: this.retryAttempt,
      finalError: finalError ?? 'unknown error',
    });
    this.retryAttempt = 0;
  }

  /** Removes a trailing error reply from the agent's state; the session file keeps it. */
  private dropTrailingError(): void {
    const messages = this.host.agent.state.messages;
    const last = messages[messages.length - 1];
    if (last?.role === 'assistant' && (last.stopReason === 'error' || last.stopReason === 'aborted')) {
      this.host.agent.replaceMessages(messages.slice(0, -1));
    }
  }

  /**
   * The agent is about to stop: Stop hooks may send it back to work once, with their reason as a
   * message (true = continue). A second block in the same prompt is a warning, not another turn.
   */
  private async stopHooksContinue(): Promise<boolean> {
    const hooks = this.host.commandHooks;
    if (!hooks?.has('Stop') || this.stopErrorValue || this.host.storageError() || this.host.runSignal()?.aborted)
      return false;
    const messages = this.host.agent.state.messages;
    const last = lastAssistant(messages);
    if (!last || last.stopReason === 'error' || last.stopReason === 'aborted') return false;
    const verdict = await hooks.stop(
      this.stopHookActive,
      lastAssistantText(messages) ?? undefined,
      this.host.runSignal(),
    );
    if (!verdict.blocked) return false;
    if (this.stopHookActive) {
      this.host.bus.notify(
        `warning: a Stop hook blocked the stop again after the agent went on once; the agent stops here. It said: ${verdict.reason ?? ''}`,
      );
      return false;
    }
    this.stopHookActive = true;
    this.host.agent.followUp(userMessage(`Stop hook feedback:\n${verdict.reason ?? ''}`));
    return true;
  }

  // ---- automatic compactions ------------------------------------------------------------------------

  private checkInput(message: AssistantMessage, beforePrompt: boolean): CompactionCheckInput {
    return {
      message,
      model: this.host.agent.state.model,
      settings: this.host.compactionSettings(),
      messages: this.host.agent.state.messages,
      isStale: (m: AssistantMessage) => predatesLatestCompaction(this.host.store().currentPath(), m),
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
    if (check.action === 'threshold')
      return (await this.guardedCompact('threshold')) && this.host.agent.hasQueuedMessages();
    return false;
  }

  /**
   * The run stopped at a turn boundary past the threshold: compact, then continue it. A failed
   * compaction does not end the task: the run goes on (an overflow would be handled as one).
   */
  private async compactAtTurnBoundary(): Promise<boolean> {
    await this.guardedCompact('threshold');
    return !this.stopErrorValue && !this.host.runSignal()?.aborted;
  }

  /**
   * An overflow error that states the server's window (smaller than the model's) makes it the
   * model's window from now on: the compaction that follows and every threshold after it are
   * sized for what the server accepts. Later sessions of this process start from it too.
   */
  private learnWindow(failed: AssistantMessage): boolean {
    const { agent, bus } = this.host;
    const minWindow = 2 * this.host.compactionSettings().reserveTokens + 1;
    const stated = overflowLimitFromError(failed.errorMessage);
    const model = agent.state.model;
    if (stated !== undefined && stated < minWindow && stated < model.contextWindow) {
      // Too small to leave room for a reply and a summary: compacting for it would only thrash.
      bus.notify(
        `The server's context window for ${model.provider}/${model.id} is only ${stated} tokens: too small for an agent (raise the server's context size, e.g. llama.cpp -c / Ollama num_ctx).`,
      );
      return false;
    }
    const window = learnContextWindow(model, failed.errorMessage, minWindow);
    if (window === undefined) return false;
    const was = model.contextWindow;
    agent.setModel({ ...model, contextWindow: window });
    bus.notify(
      `The server's context window for ${agent.state.model.provider}/${agent.state.model.id} is ${window} tokens (not ${was}): compaction follows it from now on.`,
    );
    return true;
  }

  /** An automatic compaction the run guard allows (or a stop when it would not help). */
  private async guardedCompact(reason: 'threshold' | 'overflow', windowShrank = false): Promise<boolean> {
    const refused = this.host.guard.beforeCompaction(reason === 'overflow', windowShrank);
    if (refused) {
      this.stopWith(refused);
      this.host.emit({
        type: 'auto_compaction_end',
        reason,
        aborted: false,
        willRetry: false,
        errorMessage: refused.message,
      });
      return false;
    }
    const ok = await this.autoCompact(reason);
    if (ok) {
      // Counted from the messages themselves: a kept reply's usage describes the context before.
      const { state } = this.host.agent;
      this.host.guard.compacted(
        compactionFill(state.messages, state.systemPrompt, state.model.contextWindow, this.host.compactionSettings()),
      );
    }
    return ok;
  }

  /** Before a prompt: compact when the last reply in state says the context is past the threshold. */
  async compactBeforePrompt(): Promise<void> {
    const last = lastAssistant(this.host.agent.state.messages);
    if (!last) return;
    if (checkCompaction(this.checkInput(last, true)).action === 'threshold') await this.autoCompact('threshold');
  }

  private async autoCompact(reason: 'threshold' | 'overflow'): Promise<boolean> {
    this.host.emit({ type: 'auto_compaction_start', reason });
    const outcome = await this.host.compactNow(this.host.runSignal());
    if (outcome.status === 'compacted') {
      this.host.emit({
        type: 'auto_compaction_end',
        reason,
        result: outcome.result,
        aborted: false,
        willRetry: reason === 'overflow',
      });
      return true;
    }
    const aborted = outcome.status === 'aborted';
    const prefix = aborted
      ? ''
      : reason === 'overflow'
        ? 'Context overflow recovery failed: '
        : 'Auto-compaction failed: ';
    this.host.emit({
      type: 'auto_compaction_end',
      reason,
      aborted,
      willRetry: false,
      errorMessage: prefix + outcome.message,
    });
    return false;
  }
}
