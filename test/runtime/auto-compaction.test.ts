// How full a compaction left the context, as the run guard judges "freed too little": a normal
// kept tail counts whole, a last turn kept beyond the tail budget counts only up to it (the next
// compaction summarizes it); and what every request carries besides its messages.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentMessage, AgentTool } from '../../src/agent/types.js';
import { estimateTextTokens } from '../../src/ai/token-estimate.js';
import { compactionFill, requestOverheadTokens } from '../../src/runtime/auto-compaction.js';
import { COMPACTION_MAX_FILL } from '../../src/runtime/run-guard.js';
import type { CompactionSettings } from '../../src/session/defaults.js';
import { assistant, toolResult, user } from '../session/message-builders.js';

const words = (tokens: number): string => 'abcd'.repeat(tokens);
const settings: CompactionSettings = { enabled: true, reserveTokens: 2_000, keepRecentTokens: 20_000 };
// Window 24,000: threshold 22,000, a kept tail of at most 11,000.
const WINDOW = 24_000;
const summary = (tokens: number): AgentMessage => ({
  role: 'compactionSummary',
  summary: words(tokens),
  tokensBefore: 30_000,
  timestamp: 1,
});

describe('compactionFill', () => {
  it('a normal kept tail counts whole: a summary that leaves no room still stops the next compaction', () => {
    const messages = [summary(16_000), user(words(3_000)), assistant(words(1_000))];
    const fill = compactionFill(messages, words(500), WINDOW, settings);
    expect(fill.threshold).toBe(22_000);
    expect(fill.tokensAfter).toBeGreaterThanOrEqual(500 + 16_000 + 4_000);
    expect(fill.tokensAfter / fill.threshold).toBeGreaterThan(COMPACTION_MAX_FILL);
  });

  it('a last turn kept beyond the tail budget counts only up to it: compacting again stays allowed', () => {
    const reply = assistant('reading', { toolCalls: [{ id: 'r', name: 'read', args: { path: 'big.txt' } }] });
    const messages = [summary(400), reply, toolResult('r', words(19_000), 'read')];
    const fill = compactionFill(messages, words(1_000), WINDOW, settings);
    const everything = 1_000 + 400 + 19_000;
    expect(everything / fill.threshold).toBeGreaterThan(COMPACTION_MAX_FILL);
    expect(fill.tokensAfter).toBeLessThanOrEqual(1_000 + 410 + 11_000);
    expect(fill.tokensAfter / fill.threshold).toBeLessThan(COMPACTION_MAX_FILL);
  });
});

describe('requestOverheadTokens', () => {
  it('counts the system prompt and the tool definitions sent with every request', () => {
    const tool: AgentTool = {
      name: 'lookup',
      description: 'Looks a word up in the glossary of the project.',
      parameters: z.object({ word: z.string().describe('the word') }),
      execute: async () => ({ content: [{ type: 'text', text: 'a word' }], details: undefined }),
    };
    const prompt = words(300);
    expect(requestOverheadTokens(prompt, [])).toBe(estimateTextTokens(prompt));
    const withTool = requestOverheadTokens(prompt, [tool]);
    expect(withTool).toBeGreaterThan(estimateTextTokens(prompt) + 15);
  });
});
