// The summarizer's transcript fits a character budget: the longest paragraphs are cut to one
// common length (each keeps its start), short ones stay whole, and without a budget nothing is cut.
import { describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../src/agent/types.js';
import { emptyUsage } from '../../src/ai/usage.js';
import { serializeConversation } from '../../src/session/serialize-conversation.js';
import { transcriptChars } from '../../src/session/summarize.js';

const reply = (text: string): AgentMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  api: 'x',
  provider: 'x',
  model: 'x',
  usage: emptyUsage(),
  stopReason: 'stop',
  timestamp: 0,
});
const messages: AgentMessage[] = [
  { role: 'user', content: 'Change f1.ts', timestamp: 0 },
  reply(`Start of a long answer. ${'x'.repeat(40_000)}`),
  reply(`Another long one. ${'y'.repeat(40_000)}`),
  { role: 'user', content: 'thanks', timestamp: 0 },
];

describe('serializeConversation with a budget', () => {
  it('cuts the longest paragraphs until the text fits, keeping each start and the short ones', () => {
    const full = serializeConversation(messages);
    expect(full.length).toBeGreaterThan(80_000);
    const cut = serializeConversation(messages, undefined, 20_000);
    expect(cut.length).toBeLessThanOrEqual(20_000);
    expect(cut.length).toBeGreaterThan(15_000);
    expect(cut).toContain('[User]: Change f1.ts');
    expect(cut).toContain('[User]: thanks');
    expect(cut).toContain('[Assistant]: Start of a long answer.');
    expect(cut).toContain('[Assistant]: Another long one.');
    expect(cut).toMatch(/more characters truncated/);
    expect(serializeConversation(messages, undefined, 200_000)).toBe(full);
  });

  it('the transcript budget follows the window', () => {
    expect(transcriptChars({ contextWindow: 55_000 }, 13_000)).toBe(Math.floor((55_000 - 13_000 - 1_000) * 4 * 0.8));
    expect(transcriptChars({ contextWindow: 200_000 }, 13_000)).toBeGreaterThan(
      transcriptChars({ contextWindow: 55_000 }, 13_000),
    );
  });
});
