import { appendFileSync, existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/session/session-store.js';
import { assistant, endOfStretch, tempDir, toolResult, user } from './message-builders.js';

const lines = (path: string): string[] => readFileSync(path, 'utf8').split('\n').filter(Boolean);
const parsed = (path: string): Record<string, unknown>[] =>
  lines(path).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('persistence rule', () => {
  it('writes nothing before the first assistant message, then header and all entries in one append', async () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path, { cwd: '/proj' });
    s.appendModelChange('anthropic', 'claude-x');
    s.appendThinkingLevelChange('medium');
    s.appendMessage(user('fix the test'));
    await endOfStretch();
    expect(existsSync(path)).toBe(false);
    expect(s.isPersisted).toBe(false);

    s.appendMessage(assistant('done'));
    await endOfStretch();
    expect(s.storage.appendCount).toBe(1);
    const objs = parsed(path);
    expect(objs.map((o) => o.type)).toEqual(['session', 'model_change', 'thinking_level_change', 'message', 'message']);
    expect(objs[0]).toMatchObject({ type: 'session', version: 3, cwd: '/proj' });

    s.appendMessage(user('next'));
    await endOfStretch();
    expect(s.storage.appendCount).toBe(2);
    expect(lines(path)).toHaveLength(6);
  });

  it("writeMode 'immediate' writes each append before it returns", () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path, { cwd: '/proj', writeMode: 'immediate' });
    s.appendMessage(user('fix the test'));
    expect(existsSync(path)).toBe(false);
    s.appendMessage(assistant('done'));
    expect(s.storage.appendCount).toBe(1);
    expect(lines(path)).toHaveLength(3);
    s.appendMessage(user('next'));
    expect(s.storage.appendCount).toBe(2);
    expect(lines(path)).toHaveLength(4);
  });

  it('a session that never got a reply leaves no file', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    s.appendMessage(user('hello?'));
    s.close();
    expect(existsSync(path)).toBe(false);
  });

  it('create() in a folder picks a timestamped file name', () => {
    const dir = tempDir();
    const s = SessionStore.create(dir, { cwd: '/p' });
    s.appendMessage(user('a'));
    s.appendMessage(assistant('b'));
    s.persist();
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`_${s.id}\\.jsonl$`));
  });

  it('forking from the first user message keeps exactly one header and unique ids', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    const first = s.appendMessage(user('first'));
    s.appendMessage(assistant('one'));
    s.moveLeaf(s.getEntry(first)!.parentId);
    s.appendMessage(user('first, edited'));
    s.appendMessage(assistant('two'));
    s.persist();

    const objs = parsed(path);
    expect(objs.filter((o) => o.type === 'session')).toHaveLength(1);
    const ids = objs.filter((o) => typeof o.id === 'string' && o.type !== 'session').map((o) => o.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(s.getChildren(null)).toHaveLength(2);

    const reopened = SessionStore.open(path);
    expect(reopened.warnings).toEqual([]);
    expect(
      reopened.buildContext().messages.map((m) => (m.role === 'user' || m.role === 'assistant' ? m.content : null)),
    ).toEqual([[{ type: 'text', text: 'first, edited' }], [{ type: 'text', text: 'two' }]]);
  });

  it('a branched copy to a new file keeps the path, its ids, labels and a parentSession link', () => {
    const dir = tempDir();
    const s = SessionStore.create(join(dir, 'a.jsonl'));
    const u = s.appendMessage(user('q'));
    const a = s.appendMessage(assistant('a'));
    s.appendLabel(u, 'start');
    s.appendMessage(user('other'));
    const copy = s.createBranchedSession(a, join(dir, 'b.jsonl'));
    expect(copy.header.parentSession).toBe(join(dir, 'a.jsonl'));
    expect(copy.isPersisted).toBe(true);
    copy.close();
    const reopened = SessionStore.open(join(dir, 'b.jsonl'));
    expect(reopened.getEntry(u)).toBeDefined();
    expect(reopened.getEntry(a)?.parentId).toBe(u);
    expect(reopened.getLabel(u)).toBe('start');
    expect(reopened.buildContext().messages).toHaveLength(2);
  });
});

describe('opening damaged files', () => {
  function session(path: string): SessionStore {
    const s = SessionStore.create(path);
    s.appendMessage(user('one'));
    s.appendMessage(assistant('two'));
    s.appendMessage(user('three'));
    s.close();
    return s;
  }

  it('a torn last line is skipped with a warning and the next append starts on a fresh line', () => {
    const path = join(tempDir(), 's.jsonl');
    session(path);
    const full = readFileSync(path, 'utf8');
    // Simulate a process killed in the middle of writing one more entry.
    appendFileSync(
      path,
      '{"type":"message","id":"deadbeef","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"us',
    );
    const s = SessionStore.open(path);
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toMatch(/line 5 is incomplete/);
    expect(s.entries).toHaveLength(3);
    s.appendMessage(assistant('four'));
    s.close();

    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(full)).toBe(true);
    const again = SessionStore.open(path);
    expect(again.entries).toHaveLength(4);
    expect(again.warnings).toHaveLength(1);
    expect(again.warnings[0]).toMatch(/line 5 is not valid JSON/);
    expect(again.buildContext().messages).toHaveLength(4);
  });

  it('a file truncated mid-line at every possible byte reopens with every complete entry', () => {
    const path = join(tempDir(), 's.jsonl');
    session(path);
    const full = readFileSync(path);
    const lastLineStart = full.lastIndexOf('\n', full.length - 2) + 1;
    for (const cut of [lastLineStart + 1, lastLineStart + 20, full.length - 2]) {
      writeFileSync(path, full.subarray(0, cut));
      const s = SessionStore.open(path);
      expect(s.entries).toHaveLength(2);
      expect(s.warnings.some((w) => w.includes('incomplete'))).toBe(true);
    }
  });

  it('malformed lines anywhere are skipped with a warning, never fatal', () => {
    const path = join(tempDir(), 's.jsonl');
    session(path);
    const l = lines(path);
    writeFileSync(path, `${[l[0], l[1], 'not json at all', '[1,2,3]', l[2], l[3]].join('\n')}\n`);
    const s = SessionStore.open(path);
    expect(s.warnings).toHaveLength(2);
    expect(s.entries).toHaveLength(3);
    expect(s.buildContext().messages).toHaveLength(3);
  });

  it('an empty file starts a new session at the same path', () => {
    const path = join(tempDir(), 's.jsonl');
    writeFileSync(path, '');
    const s = SessionStore.open(path, { cwd: '/w' });
    expect(s.warnings[0]).toMatch(/was empty/);
    s.appendMessage(user('hi'));
    s.appendMessage(assistant('hello'));
    s.close();
    const objs = parsed(path);
    expect(objs[0]).toMatchObject({ type: 'session', version: 3, cwd: '/w' });
    expect(objs).toHaveLength(3);
  });

  it('a corrupt header is replaced by a new one, keeping readable entries and a backup of the original', () => {
    const dir = tempDir();
    const path = join(dir, 's.jsonl');
    session(path);
    const l = lines(path);
    writeFileSync(path, `${['{"type":"sess', ...l.slice(1)].join('\n')}\n`);
    const s = SessionStore.open(path);
    expect(s.warnings.some((w) => /corrupt header/.test(w))).toBe(true);
    expect(s.entries).toHaveLength(3);
    const objs = parsed(path);
    expect(objs[0]).toMatchObject({ type: 'session', version: 3 });
    expect(objs).toHaveLength(4);
    expect(readdirSync(dir).some((f) => f.includes('.corrupt-'))).toBe(true);
    expect(SessionStore.open(path).warnings).toEqual([]);
  });

  it('a file with entries but no header line gets a header', () => {
    const path = join(tempDir(), 's.jsonl');
    session(path);
    writeFileSync(path, `${lines(path).slice(1).join('\n')}\n`);
    const s = SessionStore.open(path);
    expect(s.warnings.some((w) => /missing header/.test(w))).toBe(true);
    expect(parsed(path)[0]!.type).toBe('session');
    expect(s.buildContext().messages).toHaveLength(3);
  });
});

describe('tree', () => {
  it('a rewind survives reopening (leaf line), and the next append forks from there', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    const u1 = s.appendMessage(user('one'));
    const a1 = s.appendMessage(assistant('two'));
    s.appendMessage(user('three'));
    s.appendMessage(assistant('four'));
    s.moveLeaf(a1);
    s.close();

    const r = SessionStore.open(path);
    expect(r.leafId).toBe(a1);
    expect(r.buildContext().messages).toHaveLength(2);
    const u2 = r.appendMessage(user('three, again'));
    expect(r.getEntry(u2)!.parentId).toBe(a1);
    expect(r.getChildren(a1)).toHaveLength(2);
    expect(r.getBranches()).toHaveLength(2);
    r.close();
    expect(SessionStore.open(path).leafId).toBe(u2);
    expect(
      SessionStore.open(path)
        .getPath()
        .map((e) => e.id),
    ).toEqual([u1, a1, u2]);
  });

  it('moving the leaf to where it already is writes nothing', () => {
    const s = SessionStore.inMemory();
    s.appendMessage(user('a'));
    const a = s.appendMessage(assistant('b'));
    const before = s.storage.appendCount;
    s.moveLeaf(a);
    expect(s.storage.appendCount).toBe(before);
  });

  it('rewinding to before a model change restores the old model with no undo step', () => {
    const s = SessionStore.inMemory();
    s.appendModelChange('p1', 'old-model');
    s.appendThinkingLevelChange('low');
    s.appendMessage(user('a'));
    const a = s.appendMessage(assistant('b', { provider: 'p1', model: 'old-model' }));
    s.appendModelChange('p2', 'new-model');
    s.appendThinkingLevelChange('high');
    s.appendMessage(user('c'));
    s.appendMessage(assistant('d', { provider: 'p2', model: 'new-model' }));
    expect(s.buildContext()).toMatchObject({ model: { provider: 'p2', modelId: 'new-model' }, thinkingLevel: 'high' });
    s.moveLeaf(a);
    expect(s.buildContext()).toMatchObject({ model: { provider: 'p1', modelId: 'old-model' }, thinkingLevel: 'low' });
  });

  it('labels are tracked, cleared, and never enter context; unknown targets are refused', () => {
    const s = SessionStore.inMemory();
    const u = s.appendMessage(user('a'));
    s.appendLabel(u, ' checkpoint ');
    expect(s.getLabel(u)).toBe('checkpoint');
    s.appendLabel(u, undefined);
    expect(s.getLabel(u)).toBeUndefined();
    expect(s.buildContext().messages).toHaveLength(1);
    expect(() => s.appendLabel('nope', 'x')).toThrow(/no such entry/);
  });

  it('custom entries stay out of context while custom messages enter it', () => {
    const s = SessionStore.inMemory();
    s.appendMessage(user('a'));
    s.appendCustom('orchestrator.task', { id: 't1' });
    s.appendCustomMessage('orchestrator.plan', 'merged plan', false, { v: 1 });
    s.appendSessionInfo('  my session ');
    const msgs = s.buildContext().messages;
    expect(msgs).toHaveLength(2);
    expect(msgs[1]).toMatchObject({
      role: 'custom',
      customType: 'orchestrator.plan',
      content: 'merged plan',
      display: false,
      details: { v: 1 },
    });
    expect(s.sessionName).toBe('my session');
  });

  it('every entry has an 8-hex id unique in the session', () => {
    const s = SessionStore.inMemory();
    for (let i = 0; i < 2000; i++) s.appendMessage(i % 2 ? assistant('x') : user('y'));
    const ids = s.entries.map((e) => e.id);
    expect(ids.every((id) => /^[0-9a-f]{8}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('tool results appended in one step after their call reopen in order', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    s.appendMessage(user('read it'));
    s.appendMessage(assistant('', { toolCalls: [{ id: 't1', name: 'read', args: { path: 'a.ts' } }] }));
    s.appendMessage(toolResult('t1', 'content'));
    s.close();
    expect(
      SessionStore.open(path)
        .buildContext()
        .messages.map((m) => m.role),
    ).toEqual(['user', 'assistant', 'toolResult']);
  });

  it('a missing file opened with open() becomes a new session at that path', () => {
    const path = join(tempDir(), 'nested', 'new.jsonl');
    const s = SessionStore.open(path, { cwd: '/c' });
    expect(s.warnings).toEqual([]);
    s.appendMessage(user('a'));
    s.appendMessage(assistant('b'));
    s.persist();
    expect(parsed(path)[0]).toMatchObject({ cwd: '/c' });
  });

  it('create() refuses to overwrite an existing session', async () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    s.appendMessage(user('a'));
    s.appendMessage(assistant('b'));
    await endOfStretch();
    expect(() => SessionStore.create(path)).toThrow(/already exists/);
  });

  it('truncating the file (not just the last line) still opens', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    s.appendMessage(user('a'));
    s.appendMessage(assistant('b'));
    s.close();
    truncateSync(path, 10);
    const r = SessionStore.open(path);
    expect(r.entries).toHaveLength(0);
    expect(r.warnings.length).toBeGreaterThan(0);
  });
});

describe('header recovery keeps the saved leaf', () => {
  it('a rewind saved before the header got corrupted is still the leaf after recovery and reopening', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    s.appendMessage(user('one'));
    const a = s.appendMessage(assistant('two'));
    s.appendMessage(user('three'));
    s.moveLeaf(a);
    s.close();
    const l = lines(path);
    writeFileSync(path, `${['garbage', ...l.slice(1)].join('\n')}\n`);
    expect(SessionStore.open(path).leafId).toBe(a);
    expect(SessionStore.open(path).leafId).toBe(a);
  });
});
