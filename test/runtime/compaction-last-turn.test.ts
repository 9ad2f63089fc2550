// A compaction keeps the last turn. The model reads two big inputs in one reply; their results
// push the context past the threshold, and the reply with its results is far larger than the
// tail a compaction normally keeps, yet it fits the window beside the system prompt. Keeping
// nothing there made the model read them again, which filled the window again, compacted again,
// and so on until the compaction cap stopped a task that fits. A real AgentSession with real
// read/write tools on real files, against the scripted provider in overflow mode.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentText } from '../../src/ai/content-text.js';
import { scriptedModel } from '../../src/ai/models.js';
import { createScriptedProvider, type ScriptedTurn, type ScriptedTurnSpec } from '../../src/ai/scripted.js';
import { estimateMessageTokens } from '../../src/ai/token-estimate.js';
import type { Context } from '../../src/ai/types.js';
import { requestOverheadTokens } from '../../src/runtime/auto-compaction.js';
import { createAgentSession } from '../../src/runtime/create-agent-session.js';
import type { AgentSessionEvent } from '../../src/runtime/session-events.js';
import { maxKeptTokens } from '../../src/session/prepare-compaction.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const WINDOW = 24_000;
const RESERVE = 2_000;
const THRESHOLD = WINDOW - RESERVE;
/** How far below "fits beside the system prompt" the read turn lands (less than any summary). */
const MARGIN = 100;

/** The inputs' contents as the model saw them in tool results (undefined when not in view). */
function inputsInView(ctx: Context): string[] {
  const texts = ctx.messages.flatMap((m) => (m.role === 'toolResult' ? [contentText(m.content)] : []));
  return ['BIG-1', 'BIG-2'].flatMap((tag) => texts.filter((t) => t.startsWith(tag)));
}

/**
 * Writes two notes, reads both inputs in one reply, then writes answer.txt from what the reads
 * returned: with the results out of view it can only read them again.
 */
function worker(): ScriptedTurn[] {
  return Array.from(
    { length: 60 },
    (): ScriptedTurn => (ctx) => {
      const all = JSON.stringify(ctx.messages);
      if (all.includes('answer.txt')) return { text: 'Done: answer.txt holds the sizes of both inputs.' };
      const inputs = inputsInView(ctx);
      if (inputs.length === 2)
        return {
          tools: [{ name: 'write', args: { path: 'answer.txt', content: inputs.map((t) => t.length).join(' ') } }],
        };
      for (const k of [1, 2]) {
        if (!all.includes(`note-${k}.txt`)) {
          const turn: ScriptedTurnSpec = {
            text: `Note ${k}. ${'Thinking this through step by step. '.repeat(40)}`,
            tools: [{ name: 'write', args: { path: `note-${k}.txt`, content: `note ${k}\n${'n '.repeat(800)}` } }],
          };
          return turn;
        }
      }
      return {
        text: 'Reading both inputs.',
        tools: [
          { name: 'read', args: { path: 'big-1.txt' } },
          { name: 'read', args: { path: 'big-2.txt' } },
        ],
      };
    },
  );
}

/** A file of about `tokens` tokens starting with `tag`, in 100-character lines. */
function bigFile(tag: string, tokens: number): string {
  const line = `${'x'.repeat(99)}\n`;
  const body = line.repeat(Math.floor((tokens * 4 - tag.length - 1) / line.length));
  return `${tag}\n${body}${'y'.repeat(tokens * 4 - tag.length - 1 - body.length - 1)}\n`;
}

describe('a compaction keeps the last turn', () => {
  // Without loop detection the old behaviour ran into the compaction cap (8 per prompt); with it,
  // the detector stopped the re-reads: either way a task that fits failed.
  it.each([
    ['with loop detection', true],
    ['without loop detection', false],
  ])(
    '%s: a read turn larger than the kept tail but within the window is kept whole; the model goes on without reading again and finishes',
    async (_label, loop) => {
      const cwd = mkdtempSync(join(tmpdir(), 'orch-last-turn-'));
      dirs.push(cwd);
      const provider = createScriptedProvider(worker(), { turnSelection: 'calls', contextWindow: WINDOW });
      const session = await createAgentSession({
        cwd,
        inMemory: true,
        tools: ['read', 'write'],
        defaultSkills: false,
        contextFiles: false,
        model: scriptedModel({ contextWindow: WINDOW }),
        compaction: { reserveTokens: RESERVE },
        streamFn: provider,
        summaries: 'extractive',
        retry: { baseDelayMs: 1 },
        notify: () => {},
        loopDetection: { enabled: loop },
      });
      const events: AgentSessionEvent[] = [];
      session.subscribe((e) => events.push(e));

      // The read turn (the reply and both results) lands just under the room beside the system prompt.
      const room = THRESHOLD - requestOverheadTokens(session.systemPrompt, session.tools);
      const each = Math.floor((room - MARGIN) / 2);
      writeFileSync(join(cwd, 'big-1.txt'), bigFile('BIG-1', each));
      writeFileSync(join(cwd, 'big-2.txt'), bigFile('BIG-2', each));

      await session.prompt('Write two notes, then record the sizes of the two big inputs in the answer file.');

      expect(events.filter((e) => e.type === 'run_stopped')).toEqual([]);
      expect(session.lastAssistantText()).toContain('Done');
      expect(readFileSync(join(cwd, 'answer.txt'), 'utf8')).toMatch(/^\d+ \d+$/);

      const path = session.store.currentPath();
      const replies = path.flatMap((e) => (e.type === 'message' && e.message.role === 'assistant' ? [e] : []));
      const reads = replies.filter((e) =>
        e.type === 'message' && e.message.role === 'assistant'
          ? e.message.content.some((b) => b.type === 'toolCall' && b.name === 'read')
          : false,
      );
      // Each input was read once: the compaction kept the results the model needed.
      expect(reads).toHaveLength(1);

      const compactions = path.filter((e) => e.type === 'compaction');
      expect(compactions.length).toBeGreaterThanOrEqual(1);
      const first = compactions[0]!;
      if (first.type !== 'compaction') throw new Error('unreachable');
      // It kept the read reply itself (with its results after it), not nothing.
      expect(first.firstKeptEntryId).toBe(reads[0]!.id);
      const readAt = path.indexOf(reads[0]!);
      const kept = path.slice(readAt, path.indexOf(first)).flatMap((e) => (e.type === 'message' ? [e.message] : []));
      expect(kept.map((m) => m.role)).toEqual(['assistant', 'toolResult', 'toolResult']);
      const keptTokens = kept.reduce((n, m) => n + estimateMessageTokens(m), 0);
      expect(keptTokens).toBeGreaterThan(
        maxKeptTokens({ enabled: true, reserveTokens: RESERVE, keepRecentTokens: 20_000 }, WINDOW),
      );
      expect(keptTokens).toBeLessThanOrEqual(room);

      // The request right after that compaction: the summary, then the read reply and both results.
      const after = provider.calls.find((c) => JSON.stringify(c.messages[0]).includes('compacted'))!;
      expect(inputsInView(after)).toHaveLength(2);
      expect(after.messages[1]).toMatchObject({ role: 'assistant' });
    },
  );
});
