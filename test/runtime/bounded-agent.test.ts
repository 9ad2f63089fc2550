// "An agent of ours can never spend without bound": models that misbehave on purpose (a call
// repeated forever, a cycle, a chatty model on a small window, one that ignores its summary)
// against a real AgentSession with real tools on real files. Every run must end, within a
// bounded number of requests, with a clear reason.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/ai/models.js';
import {
  createScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedTurn,
  type ScriptedTurnSpec,
} from '../../src/ai/scripted.js';
import type { Context } from '../../src/ai/types.js';
import type { AgentSession } from '../../src/runtime/agent-session.js';
import { createAgentSession, type CreateAgentSessionOptions } from '../../src/runtime/create-agent-session.js';
import { isRunStoppedError, type RunStoppedError } from '../../src/runtime/run-limits.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-bounded-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Harness {
  session: AgentSession;
  events: AgentSessionEvent[];
  calls: Context[];
  cwd: string;
}

async function harness(
  turns: ScriptedTurn[],
  options: CreateAgentSessionOptions = {},
  providerOptions: ScriptedProviderOptions = {},
): Promise<Harness> {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'a.txt'), 'alpha\n');
  writeFileSync(join(cwd, 'b.txt'), 'beta\n');
  const provider = createScriptedProvider(turns, { turnSelection: 'calls', ...providerOptions });
  const session = await createAgentSession({
    cwd,
    inMemory: true,
    tools: ['read', 'write'],
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: provider,
    summaries: 'extractive',
    retry: { baseDelayMs: 1 },
    notify: () => {},
    ...options,
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((e) => events.push(e));
  return { session, events, calls: provider.calls, cwd };
}

/** The prompt's rejection (a RunStoppedError), or a failure when it resolved. */
async function stopped(p: Promise<void>): Promise<RunStoppedError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isRunStoppedError(err))
    throw new Error(`expected a RunStoppedError, got ${err === undefined ? 'a resolved prompt' : String(err)}`);
  return err;
}

/** A script that never runs out (the guards must end the run, not the script). */
const forever = (turn: ScriptedTurnSpec | ((ctx: Context, i: number) => ScriptedTurnSpec)): ScriptedTurn[] =>
  Array.from({ length: 1_000 }, (): ScriptedTurn => (ctx, i) => (typeof turn === 'function' ? turn(ctx, i) : turn));
const readA: ScriptedTurnSpec = { tools: [{ name: 'read', args: { path: 'a.txt' } }] };

function allText(ctx: Context): string {
  return JSON.stringify(ctx.messages);
}

describe('loop detection', () => {
  it('a model that repeats one call forever is warned, then stopped: 5 requests, class loop', async () => {
    const h = await harness([...forever(readA)]);
    const err = await stopped(h.session.prompt('Read a.txt'));
    expect(err.kind).toBe('loop');
    expect(err.message).toContain('read(');
    // 4 identical calls, the warning, one more repeat, stop.
    expect(h.calls).toHaveLength(5);
    expect(h.events.filter((e) => e.type === 'loop_warning')).toEqual([
      expect.objectContaining({ pattern: 'identical_calls' }),
    ]);
    expect(h.events.filter((e) => e.type === 'run_stopped')).toEqual([expect.objectContaining({ kind: 'loop' })]);
    // The model saw the warning before its last call.
    expect(allText(h.calls[4]!)).toContain('You are repeating yourself');
    expect(allText(h.calls[3]!)).not.toContain('You are repeating yourself');
    // The session stays usable and the stop is not sticky: the next prompt runs.
    await stopped(h.session.prompt('again')).catch(() => undefined);
    expect(h.calls.length).toBeGreaterThan(5);
  });

  it('a model that heeds the warning finishes normally', async () => {
    const h = await harness([
      ...forever((ctx) =>
        allText(ctx).includes('You are repeating yourself') ? { text: 'I was stuck: a.txt says alpha. Done.' } : readA,
      ),
    ]);
    await h.session.prompt('Read a.txt');
    expect(h.calls).toHaveLength(5);
    expect(h.session.lastAssistantText()).toContain('Done.');
    expect(h.events.some((e) => e.type === 'run_stopped')).toBe(false);
  });

  it('an alternating cycle of two calls is stopped within 8 requests', async () => {
    const readB: ScriptedTurnSpec = { tools: [{ name: 'read', args: { path: 'b.txt' } }] };
    const h = await harness([...forever((_c, i) => (i % 2 === 0 ? readA : readB))]);
    const err = await stopped(h.session.prompt('Compare the files'));
    expect(err.kind).toBe('loop');
    expect(h.calls.length).toBeLessThanOrEqual(8);
    expect(h.events.find((e) => e.type === 'loop_warning')).toMatchObject({ pattern: 'cycle' });
  });

  it('loop detection can be turned off; the turn cap still ends the run', async () => {
    const h = await harness([...forever(readA)], { loopDetection: { enabled: false }, limits: { maxTurns: 12 } });
    const err = await stopped(h.session.prompt('Read a.txt'));
    expect(err.kind).toBe('max_turns');
    expect(h.calls).toHaveLength(12);
  });
});

describe('caps', () => {
  it('max turns: a model that keeps making progress-looking calls stops at the cap with a message naming it', async () => {
    const h = await harness(
      [...forever((_c, i) => ({ tools: [{ name: 'write', args: { path: `f${i}.txt`, content: String(i) } }] }))],
      { limits: { maxTurns: 6 } },
    );
    const err = await stopped(h.session.prompt('Write files'));
    expect(err.kind).toBe('max_turns');
    expect(err.message).toMatch(/6 turns.*--max-turns/);
    expect(h.calls).toHaveLength(6);
    // setLimits raises the cap from the next prompt on.
    h.session.setLimits({ maxTurns: 3 });
    await stopped(h.session.prompt('more'));
    expect(h.calls).toHaveLength(9);
  });

  it('a token budget stops the run at the first turn boundary past it, and a spent budget makes no call at all', async () => {
    const h = await harness(
      [...forever((_c, i) => ({ tools: [{ name: 'write', args: { path: `f${i}.txt`, content: 'x'.repeat(400) } }] }))],
      { limits: { budgetTokens: 2_000 } },
    );
    const err = await stopped(h.session.prompt('Write files'));
    expect(err.kind).toBe('budget');
    expect(err.message).toContain('--budget-tokens');
    const spent = h.session.runLimits.spent.tokens;
    expect(spent).toBeGreaterThanOrEqual(2_000);
    const callsBefore = h.calls.length;
    const again = await stopped(h.session.prompt('go on'));
    expect(again.kind).toBe('budget');
    expect(h.calls).toHaveLength(callsBefore);
  });

  it('a USD budget counts every call at the model price', async () => {
    const model = scriptedModel({ cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
    const h = await harness(
      [...forever((_c, i) => ({ tools: [{ name: 'write', args: { path: `f${i}.txt`, content: 'y'.repeat(4000) } }] }))],
      { model, limits: { budgetUsd: 0.01 } },
    );
    const err = await stopped(h.session.prompt('Write files'));
    expect(err.kind).toBe('budget');
    expect(h.session.runLimits.spent.usd).toBeGreaterThanOrEqual(0.01);
    // Stopped at the first boundary past the cap: the spend before the last call was under it.
    expect(h.calls.length).toBeLessThan(10);
  });
});

// A task of STEPS steps; each reply chats at length and writes the next step's file. The model
// works out the next step from what it can see: the write calls in its context and the files a
// compaction summary lists as modified.
const STEPS = 10;
function nextStep(ctx: Context, honest: boolean): number {
  const seen = new Set<number>();
  const text = honest ? allText(ctx) : JSON.stringify(ctx.messages.filter((m) => m.role === 'assistant'));
  for (const m of text.matchAll(/step-(\d+)\.txt/g)) seen.add(Number(m[1]));
  let k = 1;
  while (seen.has(k)) k++;
  return k;
}
function chattyWorker(honest: boolean): ScriptedTurn[] {
  return forever((ctx) => {
    const k = nextStep(ctx, honest);
    if (k > STEPS) return { text: 'All steps are done.' };
    return {
      text: `Working on step ${k}. ${'Let me think about this carefully. '.repeat(120)}`,
      tools: [{ name: 'write', args: { path: `step-${k}.txt`, content: `step ${k}\n${'data '.repeat(1200)}` } }],
    };
  });
}
const smallWindow = { model: scriptedModel({ contextWindow: 20_000 }), compaction: { reserveTokens: 4_000 } };

describe('compaction that cannot thrash', () => {
  it('a chatty model on a small window finishes its task after several compactions, each step done once, never overflowing', async () => {
    const h = await harness([...chattyWorker(true)], smallWindow, { contextWindow: 20_000 });
    await h.session.prompt(`Do steps 1 to ${STEPS}, one file each.`);
    expect(h.session.lastAssistantText()).toBe('All steps are done.');
    const written = readdirSync(h.cwd).filter((f) => f.startsWith('step-'));
    expect(written).toHaveLength(STEPS);
    // One request per step plus the final answer: no step was redone, no request overflowed.
    expect(h.calls).toHaveLength(STEPS + 1);
    const compactions = h.events.filter((e) => e.type === 'auto_compaction_end');
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    expect(compactions.every((e) => e.type === 'auto_compaction_end' && e.result !== undefined)).toBe(true);
    expect(h.session.messages.some((m) => m.role === 'assistant' && m.stopReason === 'error')).toBe(false);
  });

  it('compaction happens at the turn boundary inside one prompt, before the provider would refuse the request', async () => {
    const h = await harness([...chattyWorker(true)], smallWindow, { contextWindow: 20_000 });
    await h.session.prompt('Do the steps.');
    for (const call of h.calls) {
      const chars = JSON.stringify(call.messages).length;
      // The scripted provider's overflow mode would have failed any request past the window.
      expect(chars / 4).toBeLessThan(20_000);
    }
    expect(
      h.events
        .filter((e) => e.type === 'auto_compaction_start')
        .every((e) => e.type === 'auto_compaction_start' && e.reason === 'threshold'),
    ).toBe(true);
  });

  it('a model that ignores its summary and redoes finished work is stopped instead of compacting forever', async () => {
    const h = await harness([...chattyWorker(false)], smallWindow, { contextWindow: 20_000 });
    const err = await stopped(h.session.prompt('Do the steps.'));
    expect(err.kind).toBe('compaction');
    expect(err.message).toContain('no progress');
    expect(h.calls.length).toBeLessThanOrEqual(12);
  });

  it('the compaction cap per prompt stops a task that does not fit', async () => {
    const h = await harness(
      [...chattyWorker(true)],
      { ...smallWindow, limits: { maxCompactionsPerPrompt: 1 } },
      { contextWindow: 20_000 },
    );
    const err = await stopped(h.session.prompt('Do the steps.'));
    expect(err.kind).toBe('compaction');
    expect(err.message).toContain('1 compactions');
    expect(h.events.filter((e) => e.type === 'auto_compaction_end' && e.result)).toHaveLength(1);
    expect(existsSync(join(h.cwd, 'step-1.txt'))).toBe(true);
  });
});

describe('the scripted model across a compaction inside a run', () => {
  it('a plain list script goes on after the last reply served, not from the replies left in view', async () => {
    // Three big writes push the context past the threshold at a turn boundary; the compaction
    // summarizes them away, and the script must still continue with its fourth turn.
    const big = (n: number): ScriptedTurnSpec => ({
      tools: [{ name: 'write', args: { path: `big-${n}.txt`, content: 'q'.repeat(30_000) } }],
    });
    const h = await harness(
      [big(1), big(2), big(3), { tools: [{ name: 'read', args: { path: 'a.txt' } }] }, { text: 'finished' }],
      { ...smallWindow },
      { turnSelection: 'replies' },
    );
    await h.session.prompt('write three big files, then read a.txt');
    expect(h.session.lastAssistantText()).toBe('finished');
    expect(h.calls).toHaveLength(5);
    expect(h.events.some((e) => e.type === 'auto_compaction_end' && e.result !== undefined)).toBe(true);
  });

  it('the provider recognizes the summary the agent layer sends', async () => {
    const { COMPACTION_SUMMARY_PREFACE } = await import('../../src/agent/convert-to-llm.js');
    const { COMPACTION_SUMMARY_START } = await import('../../src/ai/scripted.js');
    expect(COMPACTION_SUMMARY_PREFACE.startsWith(COMPACTION_SUMMARY_START)).toBe(true);
  });
});
