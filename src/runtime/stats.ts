// Session statistics: what was spent (every assistant reply in the file, all branches, retries
// included: they were paid for) and how full the current context is.
import type { AgentMessage } from '../agent/types.js';
import { estimateContextTokens } from '../ai/token-estimate.js';
import type { Model } from '../ai/types.js';
import type { SessionEntry } from '../session/types.js';

export interface TokenTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export interface SessionStats {
  sessionId: string;
  sessionFile?: string;
  userMessages: number;
  assistantMessages: number;
  /** Replies that ended in an error or abort (they count in tokens and cost too). */
  failedReplies: number;
  toolCalls: number;
  toolResults: number;
  /** Model calls (one per assistant reply). */
  turns: number;
  tokens: TokenTotals;
  /** US dollars, from the model's price table at the time of each reply. */
  cost: number;
  context: {
    /** Tokens of the current context: the last reply's usage plus estimates of what followed. */
    tokens: number;
    /** True when no reply since the start (or the last compaction) reported usage: all estimated. */
    estimated: boolean;
    contextWindow: number;
    /** tokens / contextWindow x 100, one decimal. */
    percent: number;
  };
}

export function computeStats(
  entries: readonly SessionEntry[],
  contextMessages: readonly AgentMessage[],
  model: Model,
  session: { id: string; file?: string },
): SessionStats {
  const tokens: TokenTotals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let cost = 0;
  let userMessages = 0;
  let assistantMessages = 0;
  let failedReplies = 0;
  let toolCalls = 0;
  let toolResults = 0;
  for (const e of entries) {
    if (e.type !== 'message') continue;
    const m = e.message;
    if (m.role === 'user') userMessages++;
    else if (m.role === 'toolResult') toolResults++;
    else if (m.role === 'assistant') {
      assistantMessages++;
      if (m.stopReason === 'error' || m.stopReason === 'aborted') failedReplies++;
      for (const b of m.content) if (b.type === 'toolCall') toolCalls++;
      tokens.input += m.usage.input;
      tokens.output += m.usage.output;
      tokens.cacheRead += m.usage.cacheRead;
      tokens.cacheWrite += m.usage.cacheWrite;
      cost += m.usage.cost.total;
    }
  }
  tokens.total = tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite;
  const estimate = estimateContextTokens(contextMessages);
  const window = model.contextWindow;
  const stats: SessionStats = {
    sessionId: session.id,
    userMessages,
    assistantMessages,
    failedReplies,
    toolCalls,
    toolResults,
    turns: assistantMessages,
    tokens,
    cost,
    context: {
      tokens: estimate.tokens,
      estimated: estimate.lastUsageIndex === -1,
      contextWindow: window,
      percent: window > 0 ? Math.round((estimate.tokens / window) * 1000) / 10 : 0,
    },
  };
  if (session.file !== undefined) stats.sessionFile = session.file;
  return stats;
}
