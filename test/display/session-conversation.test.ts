import { appendFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatConversation } from '../../src/display/conversation-text.js';
import { readConversation } from '../../src/display/session-conversation.js';
import { KEYS, writeSyntheticRun } from './fixtures/synthetic-run.js';

describe('reading a conversation from a session file', () => {
  it('gives user text, assistant text with tool calls, and tool results in order', () => {
    const { store } = writeSyntheticRun(mkdtempSync(join(tmpdir(), 'conv-')));
    const conv = readConversation(store.sessionFile(KEYS.b));
    expect(conv.exists).toBe(true);
    expect(conv.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    const call = conv.items[1]!;
    expect(call.kind === 'assistant' && call.toolCalls).toEqual([
      { id: `call-${KEYS.b}`, name: 'read', args: { path: 'repos/repo-b/src/log.ts' } },
    ]);
    expect(conv.items[3]).toMatchObject({ kind: 'assistant', text: 'Renamed 2 calls in repo-b.' });
  });

  it('never writes to the file, and a torn last line becomes a warning', () => {
    const { store } = writeSyntheticRun(mkdtempSync(join(tmpdir(), 'conv-')));
    const file = store.sessionFile(KEYS.c);
    appendFileSync(file, '{"type":"message","id":"zz');
    const before = readFileSync(file, 'utf8');
    const conv = readConversation(file);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(conv.items.length).toBe(3);
    expect(conv.warnings.join('\n')).toMatch(/incomplete/);
  });

  it('a missing session file reads as empty, without creating it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'conv-')), 'nope.jsonl');
    expect(readConversation(file)).toMatchObject({ exists: false, items: [] });
    expect(existsSync(file)).toBe(false);
  });

  it('as text: tool calls as name(args), long tool results cut with the count of what was left out', () => {
    const { store } = writeSyntheticRun(mkdtempSync(join(tmpdir(), 'conv-')));
    const text = formatConversation(readConversation(store.sessionFile(KEYS.a)), 'apply.repo-a');
    expect(text).toContain('→ read({"path":"repos/repo-a/src/log.ts"})');
    expect(text).toMatch(/← read\n {4}<script>alert/);
    expect(text).toMatch(/… \[[\d]+ more characters\]/);
    expect(text).toContain('Renamed 4 calls in repo-a.');
  });
});
