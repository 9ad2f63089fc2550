import { describe, expect, it } from 'vitest';
import type { AssistantMessage, Context, Model, StreamOptions } from '../../src/ai/types.js';
import { createFileOperations } from '../../src/session/file-operations.js';
import { prepareCompaction, type CompactionPreparation } from '../../src/session/prepare-compaction.js';
import { SessionStore } from '../../src/session/session-store.js';
import { serializeConversation } from '../../src/session/serialize-conversation.js';
import { compact, isRetryableSummaryError, SUMMARY_SECTIONS } from '../../src/session/summarize.js';
import { assistant, reply, scriptedSummarizer, testModel, toolResult, user } from './message-builders.js';

function preparation(overrides: Partial<CompactionPreparation> = {}): CompactionPreparation {
  return {
    firstKeptEntryId: 'abcd0123',
    messagesToSummarize: [
      user('please fix src/a.ts'),
      assistant('looking', { toolCalls: [{ id: 't1', name: 'read', args: { path: 'src/a.ts', offset: 3 } }] }),
      toolResult('t1', 'x'.repeat(2500)),
    ],
    turnPrefixMessages: [],
    isSplitTurn: false,
    tokensBefore: 1234,
    fileOps: createFileOperations(),
    settings: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 },
    summarizedEntryIds: [],
    ...overrides,
  };
}

describe('serializeConversation', () => {
  it('labels each item, shows tool calls with arguments and cuts long tool results', () => {
    const text = serializeConversation(preparation().messagesToSummarize);
    expect(text).toContain('[User]: please fix src/a.ts');
    expect(text).toContain('[Assistant]: looking');
    expect(text).toContain('[Assistant tool calls]: read(path="src/a.ts", offset=3)');
    expect(text).toContain(`[Tool result]: ${'x'.repeat(2000)}\n[... 500 more characters truncated]`);
    expect(text.split('\n\n')).toHaveLength(4);
  });
});

describe('compact', () => {
  it('asks for the fixed sections with the conversation, budget and reasoning', async () => {
    const { complete, calls } = scriptedSummarizer(['## Goal\nFix a']);
    const out = await compact(preparation(), {
      model: testModel({ reasoning: true }),
      complete,
      customInstructions: 'focus on tests',
    });
    expect(out.ok).toBe(true);
    const prompt = calls[0]!.prompt;
    expect(prompt.startsWith('<conversation>\n[User]: please fix src/a.ts')).toBe(true);
    for (const h of SUMMARY_SECTIONS) expect(prompt).toContain(`\n${h}\n`);
    expect(prompt).not.toContain('<previous-summary>');
    expect(prompt.endsWith('do not copy it into the summary.\nAdditional focus: focus on tests')).toBe(true);
    expect(calls[0]!.options).toMatchObject({ maxTokens: 13_107, reasoning: 'high' });
  });

  it('updates a previous summary incrementally', async () => {
    const { complete, calls } = scriptedSummarizer(['## Goal\nFix a']);
    await compact(preparation({ previousSummary: 'OLD SUMMARY' }), { model: testModel(), complete });
    expect(calls[0]!.prompt).toContain('</conversation>\n\n<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\n');
    expect(calls[0]!.prompt).toMatch(/move items that are now finished from In Progress to Done/);
    expect(calls[0]!.options?.reasoning).toBeUndefined();
  });

  it('generates the split-turn prefix summary in parallel with the history summary and merges both', async () => {
    let started = 0;
    let release!: () => void;
    const bothStarted = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    const complete = async (_m: Model, ctx: Context, opts?: StreamOptions): Promise<AssistantMessage> => {
      const prompt = (ctx.messages[0]!.content as { text: string }[])[0]!.text;
      const kind = prompt.includes('## Original Request') ? 'prefix' : 'history';
      order.push(`start ${kind} ${opts?.maxTokens}`);
      if (++started === 2) release();
      // Sequential generation would stall here: each call waits until both have started.
      await Promise.race([bothStarted, new Promise((r) => setTimeout(r, 2000))]);
      order.push(`end ${kind}`);
      return reply(kind === 'prefix' ? '## Original Request\nrefactor' : '## Goal\nhistory');
    };
    const out = await compact(
      preparation({ isSplitTurn: true, turnPrefixMessages: [user('refactor'), assistant('on it')] }),
      { model: testModel(), complete },
    );
    expect(order.slice(0, 2).every((s) => s.startsWith('start'))).toBe(true);
    expect(order).toContain('start prefix 8192');
    if (!out.ok) throw new Error(out.error);
    expect(out.value.summary).toBe(
      '## Goal\nhistory\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\nrefactor',
    );
  });

  it('appends sorted file lists, read minus modified', async () => {
    const fileOps = createFileOperations({ readFiles: ['z.ts', 'b.ts'], modifiedFiles: ['b.ts'] });
    fileOps.written.add('new.ts');
    const { complete } = scriptedSummarizer(['## Goal\nG\n\n<read-files>\nstale.ts\n</read-files>']);
    const out = await compact(preparation({ fileOps }), { model: testModel(), complete });
    if (!out.ok) throw new Error(out.error);
    expect(out.value.summary).toBe(
      '## Goal\nG\n\n<read-files>\nz.ts\n</read-files>\n\n<modified-files>\nb.ts\nnew.ts\n</modified-files>',
    );
    expect(out.value.details).toEqual({ readFiles: ['z.ts'], modifiedFiles: ['b.ts', 'new.ts'] });
    expect(out.value).toMatchObject({ firstKeptEntryId: 'abcd0123', tokensBefore: 1234 });
  });

  it('reports provider errors as values with a retry hint', async () => {
    const out = await compact(preparation(), {
      model: testModel(),
      complete: scriptedSummarizer([{ error: 'Overloaded' }]).complete,
    });
    expect(out).toEqual({ ok: false, error: 'Summarization failed: Overloaded', retryable: true, aborted: false });
    const thrown = await compact(preparation(), {
      model: testModel(),
      complete: async () => {
        throw new Error('socket hang up');
      },
    });
    expect(thrown).toMatchObject({ ok: false, retryable: true });
    expect(isRetryableSummaryError('prompt is too long: 250000 tokens')).toBe(false);
    expect(isRetryableSummaryError('401 Unauthorized')).toBe(false);
    expect(isRetryableSummaryError('500 Internal server error')).toBe(true);
  });

  it('works end to end from a prepared session', async () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 6; i++) {
      s.appendMessage(user(`q${i} ${'w'.repeat(400)}`));
      s.appendMessage(assistant(`a${i} ${'w'.repeat(400)}`));
    }
    const prep = prepareCompaction(s.getPath(), { enabled: true, reserveTokens: 1000, keepRecentTokens: 250 })!;
    const { complete, calls } = scriptedSummarizer();
    const out = await compact(prep, { model: testModel(), complete });
    expect(out.ok).toBe(true);
    expect(calls[0]!.prompt).toContain('[User]: q0');
    expect(calls[0]!.options?.maxTokens).toBe(800);
  });
});
