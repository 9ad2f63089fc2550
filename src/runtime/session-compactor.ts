// The summaries an AgentSession asks for: one compaction job (manual, automatic or to recover from
// an overflow) built from the session's current state, and the context branch summaries of
// navigate() use. Split out of agent-session.ts (which stays the wiring); the job itself is
// session-compaction.ts, navigation session-navigation.ts.
import type { Agent } from '../agent/agent.js';
import type { StreamOptions } from '../ai/types.js';
import type { CompactionSettings } from '../session/defaults.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompleteFunction } from '../session/summarize.js';
import { requestOverheadTokens } from './auto-compaction.js';
import type { SessionEventBus } from './event-bus.js';
import type { LoadedExtensions } from './extensions.js';
import {
  compactSession,
  summaryConversation,
  type CompactOptions,
  type SessionCompactionOutcome,
} from './session-compaction.js';
import type { AgentSessionHooks } from './session-hooks.js';
import type { NavigationContext } from './session-navigation.js';

export interface SessionCompactorDeps {
  agent: Agent;
  /** The session's store now (fork() replaces it). */
  store: () => SessionStore;
  settings: () => CompactionSettings;
  /** The metered summary call (every call counts against the spend caps). */
  complete: CompleteFunction;
  streamOptions?: StreamOptions;
  apiKey?: string;
  summaryRetry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  summaries: 'model' | 'extractive';
  hooks: AgentSessionHooks;
  extensions: LoadedExtensions;
  bus: SessionEventBus;
  /** Summaries go through another stream function than the turns. */
  separateSummaryStream: boolean;
}

export class SessionCompactor {
  private compactingNow = false;

  constructor(private readonly d: SessionCompactorDeps) {}

  get compacting(): boolean {
    return this.compactingNow;
  }

  /** What summary requests carry of the session's stream options (the key included). */
  streamOptions(): Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'> {
    const options: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'> = { ...this.d.streamOptions };
    if (this.d.apiKey) options.apiKey = this.d.apiKey;
    return options;
  }

  /** One compaction job; on success the agent continues from the rebuilt context. */
  async compact(
    customInstructions: string | undefined,
    signal: AbortSignal | undefined,
    options: CompactOptions = {},
  ): Promise<SessionCompactionOutcome> {
    const { agent, hooks } = this.d;
    const settings = this.d.settings();
    const store = this.d.store();
    const model = agent.state.model;
    this.compactingNow = true;
    try {
      const outcome = await compactSession(
        {
          store,
          model,
          complete: this.d.complete,
          streamOptions: this.streamOptions(),
          settings:
            options.keepRecentTokens === undefined
              ? settings
              : { ...settings, keepRecentTokens: options.keepRecentTokens },
          overheadTokens: requestOverheadTokens(agent.state.systemPrompt, agent.state.tools),
          summaryRetry: this.d.summaryRetry,
          summaries: this.d.summaries,
          beforeCompact: hooks.beforeCompact,
          extensions: this.d.extensions,
          bus: this.d.bus,
          conversation: summaryConversation({
            model,
            systemPrompt: agent.state.systemPrompt,
            tools: agent.state.tools,
            thinkingLevel: agent.state.thinkingLevel,
            transformsContext: hooks.transformContext !== undefined,
            cacheRetention: this.d.streamOptions?.cacheRetention,
            separateSummaryStream: this.d.separateSummaryStream,
          }),
        },
        customInstructions,
        signal,
      );
      if (outcome.status === 'compacted') agent.replaceMessages(this.d.store().buildContext().messages);
      return outcome;
    } finally {
      this.compactingNow = false;
    }
  }

  /** What navigate() needs to summarize the branch it leaves. */
  navigationContext(): NavigationContext {
    return {
      store: this.d.store(),
      model: this.d.agent.state.model,
      complete: this.d.complete,
      streamOptions: this.streamOptions(),
      summaries: this.d.summaries,
    };
  }
}
