// The run guard's compaction judgement: re-reading after a compaction is progress, repeating a
// call with an unchanged result is not, a compaction that frees too little stops the next one,
// and an overflow that taught a smaller window may compact again right away.
import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ToolResultMessage } from '../../src/ai/types.js';
import { emptyUsage } from '../../src/ai/usage.js';
import { RunGuard } from '../../src/runtime/run-guard.js';
import { DEFAULT_LOOP_DETECTION, DEFAULT_RUN_LIMITS } from '../../src/runtime/run-limits.js';

let n = 0;
function turn(guard: RunGuard, name: string, args: Record<string, unknown>, result: string): void {
  const id = `c${++n}`;
  const message: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'toolCall', id, name, arguments: args }],
    api: 'x',
    provider: 'x',
    model: 'x',
    usage: emptyUsage(),
    stopReason: 'toolUse',
    timestamp: n,
  };
  const r: ToolResultMessage = {
    role: 'toolResult',
    toolCallId: id,
    toolName: name,
    content: [{ type: 'text', text: result }],
    isError: false,
    timestamp: n,
  };
  guard.afterTurn(message, true, [r]);
}

const guard = (): RunGuard =>
  new RunGuard({ ...DEFAULT_LOOP_DETECTION, enabled: false }, { ...DEFAULT_RUN_LIMITS, maxCompactionsPerPrompt: 10 });
const roomy = { tokensAfter: 1000, threshold: 10_000 };

describe('RunGuard compaction progress', () => {
  it('re-reading files after a compaction is progress', () => {
    const g = guard();
    turn(g, 'read', { path: 'a.ts' }, 'A');
    turn(g, 'read', { path: 'b.ts' }, 'B');
    expect(g.beforeCompaction(false)).toBeUndefined();
    g.compacted(roomy);
    turn(g, 'read', { path: 'a.ts' }, 'A');
    turn(g, 'read', { path: 'b.ts' }, 'B');
    expect(g.beforeCompaction(false)).toBeUndefined();
  });

  it('redoing a write with the same result after a compaction is not progress', () => {
    const h = guard();
    turn(h, 'write', { path: 'a.ts', content: 'x' }, 'wrote 1 byte');
    h.compacted(roomy);
    turn(h, 'write', { path: 'a.ts', content: 'x' }, 'wrote 1 byte');
    expect(h.beforeCompaction(false)?.message).toMatch(/no progress/);
  });

  it('a look-up repeated twice since the compaction counts once', () => {
    const g = guard();
    turn(g, 'write', { path: 'a.ts', content: 'x' }, 'wrote 1 byte');
    turn(g, 'read', { path: 'a.ts' }, 'x');
    g.compacted(roomy);
    turn(g, 'read', { path: 'a.ts' }, 'x');
    g.compacted(roomy);
    turn(g, 'write', { path: 'a.ts', content: 'x' }, 'wrote 1 byte');
    expect(g.beforeCompaction(false)?.message).toMatch(/no progress/);
  });

  it('a repeated call whose result changed is progress', () => {
    const g = guard();
    turn(g, 'bash', { command: 'npm test' }, '3 failing');
    g.compacted(roomy);
    turn(g, 'bash', { command: 'npm test' }, '1 failing');
    expect(g.beforeCompaction(false)).toBeUndefined();
    g.compacted(roomy);
    turn(g, 'bash', { command: 'npm test' }, '1 failing');
    expect(g.beforeCompaction(false)?.message).toMatch(/no progress/);
  });

  it('a compaction that frees too little stops the next one', () => {
    const g = guard();
    turn(g, 'read', { path: 'a.ts' }, 'A');
    g.compacted({ tokensAfter: 9_500, threshold: 10_000 });
    turn(g, 'read', { path: 'b.ts' }, 'B');
    expect(g.beforeCompaction(false)?.message).toMatch(/freed too little \(the context was still at 95 %/);
  });

  it('an overflow right after a compaction stops, unless it taught a smaller window', () => {
    const g = guard();
    turn(g, 'read', { path: 'a.ts' }, 'A');
    g.compacted(roomy);
    expect(g.beforeCompaction(true)?.message).toMatch(/still too long/);
    expect(g.beforeCompaction(true, true)).toBeUndefined();
  });
});
