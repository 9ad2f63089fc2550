import { describe, expect, it } from 'vitest';
import { shortTokens, statusParts, type StatusInput } from '../../../src/display/interactive/status-line.js';

const base: StatusInput = {
  model: 'claude-sonnet-4-5',
  stats: { cost: 0.0123, context: { tokens: 45_600, contextWindow: 200_000, percent: 22.8 } },
  activity: 'idle',
  queued: 0,
  confirmExit: false,
};

describe('status line', () => {
  it('model, context tokens / window with the percentage, session cost', () => {
    expect(statusParts(base)).toEqual({ left: 'claude-sonnet-4-5 · ctx 45.6k/200k (22.8%) · $0.0123', right: '/help' });
  });

  it('says what the agent does, how many messages wait, and when Ctrl+C would quit', () => {
    expect(statusParts({ ...base, activity: 'working', queued: 2 }).right).toBe('working · Esc aborts · 2 queued');
    expect(statusParts({ ...base, activity: 'compacting' }).right).toBe('compacting…');
    expect(statusParts({ ...base, activity: 'working', confirmExit: true }).right).toBe('Ctrl+C again to quit');
  });

  it('token counts stay short', () => {
    expect([999, 1_000, 12_345, 200_000, 1_000_000, 1_500_000].map(shortTokens)).toEqual([
      '999',
      '1k',
      '12.3k',
      '200k',
      '1M',
      '1.5M',
    ]);
  });
});
