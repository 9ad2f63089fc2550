import { describe, expect, it } from 'vitest';
import { emptyAssistantMessage } from '../../src/ai/event-stream.js';
import { scriptedModel } from '../../src/ai/models.js';
import type { AssistantMessage } from '../../src/ai/types.js';
import { canonicalJson, LoopDetector, MIN_REPEATED_TEXT_CHARS } from '../../src/runtime/loop-detector.js';
import { DEFAULT_LOOP_DETECTION } from '../../src/runtime/run-limits.js';

let ids = 0;
function reply(calls: [string, Record<string, unknown>][], text = ''): AssistantMessage {
  const m = emptyAssistantMessage(scriptedModel());
  if (text) m.content.push({ type: 'text', text });
  for (const [name, args] of calls) m.content.push({ type: 'toolCall', id: `c${ids++}`, name, arguments: args });
  m.stopReason = calls.length ? 'toolUse' : 'stop';
  return m;
}
const read = (path: string, extra: Record<string, unknown> = {}) => reply([['read', { path, ...extra }]]);

/** Feeds replies in order; the index (1-based) of the first finding and the finding. */
function firstFinding(replies: AssistantMessage[], settings = DEFAULT_LOOP_DETECTION) {
  const d = new LoopDetector(settings);
  for (let i = 0; i < replies.length; i++) {
    const f = d.observe(replies[i]!);
    if (f) return { at: i + 1, ...f };
  }
  return undefined;
}

describe('LoopDetector', () => {
  it('canonical arguments: key order does not matter, values do', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
  });

  it('the same call N times in a row (arguments in any key order) is a loop at the Nth call', () => {
    const replies = [
      read('a', { limit: 5, offset: 1 }),
      read('a', { offset: 1, limit: 5 }),
      read('a', { limit: 5, offset: 1 }),
      read('a', { offset: 1, limit: 5 }),
    ];
    expect(firstFinding(replies)).toMatchObject({
      at: 4,
      pattern: 'identical_calls',
      detail: expect.stringContaining('read('),
    });
    expect(firstFinding(replies.slice(0, 3))).toBeUndefined();
  });

  it('a different call in between resets the streak', () => {
    expect(firstFinding([read('a'), read('a'), read('a'), read('b'), read('a'), read('a'), read('a')])).toBeUndefined();
  });

  it('a cycle of two or three calls repeated cycleRepeats times is a loop; progress is not', () => {
    expect(firstFinding([read('a'), read('b'), read('a'), read('b'), read('a'), read('b')])).toMatchObject({
      at: 6,
      pattern: 'cycle',
    });
    const abc = [read('a'), read('b'), read('c')];
    expect(firstFinding([...abc, ...abc, ...abc])).toMatchObject({
      at: 9,
      pattern: 'cycle',
      detail: expect.stringContaining('3 calls'),
    });
    // Reading one file after another, each once, never looks like a loop.
    expect(firstFinding(Array.from({ length: 30 }, (_, i) => read(`f${i}`)))).toBeUndefined();
  });

  it('the same long text N replies in a row is a loop; short phrases are not', () => {
    const long = 'I will now look at the configuration again to find where the retry delay is set up.';
    expect(long.length).toBeGreaterThanOrEqual(MIN_REPEATED_TEXT_CHARS);
    expect(
      firstFinding([
        reply([['read', { path: 'a' }]], long),
        reply([['read', { path: 'b' }]], long),
        reply([['read', { path: 'c' }]], long),
      ]),
    ).toMatchObject({ at: 3, pattern: 'repeated_text' });
    const short = 'Let me check the next file.';
    expect(
      firstFinding(Array.from({ length: 10 }, (_, i) => reply([['read', { path: `f${i}` }]], short))),
    ).toBeUndefined();
  });

  it('disabled: never a finding', () => {
    expect(
      firstFinding(
        Array.from({ length: 20 }, () => read('a')),
        { ...DEFAULT_LOOP_DETECTION, enabled: false },
      ),
    ).toBeUndefined();
  });
});
