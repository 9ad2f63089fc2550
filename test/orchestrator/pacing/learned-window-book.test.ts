// The run's book of learned context windows: a window is news once per model (the smallest
// wins), recorded as a window_learned event and broadcast; a resume starts from the log's
// windows (the fold's learnedWindows), so an agent launched after a resume starts with them and
// nothing is recorded again.
import { describe, expect, it } from 'vitest';
import { LearnedWindowBook } from '../../../src/orchestrator/pacing/learned-window-book.js';
import type { RunEvent, RunEventInput } from '../../../src/run/run-events.js';
import { foldEvents } from '../../../src/run/run-fold.js';

const W = { provider: 'local', baseUrl: 'http://gpu:8000/v1', model: 'qwen', window: 55_000 };

describe('LearnedWindowBook', () => {
  it('records and broadcasts a window once per model, and a smaller one again', () => {
    const recorded: RunEventInput[] = [];
    const sent: number[] = [];
    const book = new LearnedWindowBook({ record: (e) => recorded.push(e), broadcast: (w) => sent.push(w.window) });
    book.learned('a', W);
    book.learned('b', W); // the same window from another agent: nothing new
    book.learned('b', { ...W, window: 60_000 }); // larger: nothing new
    book.learned('c', { ...W, model: 'llama', window: 32_000 }); // another model
    book.learned('d', { ...W, window: 50_000 }); // smaller: news
    expect(sent).toEqual([55_000, 32_000, 50_000]);
    expect(recorded).toEqual([
      { type: 'window_learned', by: 'a', ...W },
      { type: 'window_learned', by: 'c', ...W, model: 'llama', window: 32_000 },
      { type: 'window_learned', by: 'd', ...W, window: 50_000 },
    ]);
    expect(book.list()).toEqual([
      { ...W, window: 50_000 },
      { ...W, model: 'llama', window: 32_000 },
    ]);
  });

  it('a resume starts from the windows its log recorded (the smallest per model)', () => {
    const base = { v: 1 as const, runId: 'r' };
    const log = [
      { ...base, ts: 1, type: 'window_learned', by: 'a', ...W },
      { ...base, ts: 2, type: 'window_learned', by: 'b', ...W, window: 48_000 },
      { ...base, ts: 3, type: 'window_learned', by: 'c', ...W, window: 52_000 },
    ] as RunEvent[];
    const fold = foldEvents(log);
    expect(fold.learnedWindows).toEqual([{ ...W, window: 48_000 }]);
    const recorded: RunEventInput[] = [];
    const book = new LearnedWindowBook({
      record: (e) => recorded.push(e),
      broadcast: () => undefined,
      restored: fold.learnedWindows,
    });
    expect(book.list()).toEqual([{ ...W, window: 48_000 }]);
    book.learned('d', { ...W, window: 50_000 });
    expect(recorded).toEqual([]);
  });
});
