// The session store's durability point (src/session/session-store.ts, writeMode 'batched'): the
// lines of one synchronous stretch go out in one write at the next microtask checkpoint (before
// any timer or I/O callback), at once past the batch size, on persist()/flush()/close(), and on
// process exit; a process killed at any moment leaves a prefix of the session; a failed batch is
// kept, reported, and written once storage works again.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SESSION_DEFAULTS } from '../../src/session/defaults.js';
import { SessionStore } from '../../src/session/session-store.js';
import type { SessionEntry } from '../../src/session/types.js';
import { assistant, endOfStretch, tempDir, user } from './message-builders.js';

const REPO = resolve(import.meta.dirname, '../..');
const STORE_MODULE = join(REPO, 'src/session/session-store.ts');

const lineCount = (path: string): number =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0;
const messageText = (e: SessionEntry): string => {
  if (e.type !== 'message' || (e.message.role !== 'user' && e.message.role !== 'assistant')) return '';
  const content = e.message.content;
  return typeof content === 'string' ? content : content.map((c) => ('text' in c ? c.text : '')).join('');
};

/** A released session (header and first exchange written) at `path`. */
function startedSession(path: string): SessionStore {
  const s = SessionStore.create(path, { cwd: '/w' });
  s.appendMessage(user('start'));
  s.appendMessage(assistant('ok'));
  s.persist();
  return s;
}

/** Runs a TypeScript snippet in a child process (with `SessionStore` imported); resolves when it ends. */
function runChild(
  body: string,
  dir: string,
  onStdout?: (text: string, kill: () => void) => void,
): Promise<{ code: number | null; stderr: string }> {
  const script = join(dir, 'child.mts');
  writeFileSync(script, `import { SessionStore } from ${JSON.stringify(STORE_MODULE)};\n${body}\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => onStdout?.(d.toString(), () => child.kill('SIGKILL')));
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => done({ code, stderr }));
  });
}

describe('batched writes (the default)', () => {
  it('write a synchronous stretch in one write at the next checkpoint, before any timer or I/O callback', async () => {
    const path = join(tempDir(), 's.jsonl');
    const s = startedSession(path);
    const writes = s.storage.appendCount;
    let seenByTimer = -1;
    const timer = new Promise<void>((done) =>
      setTimeout(() => {
        seenByTimer = lineCount(path);
        done();
      }, 0),
    );
    s.appendMessage(user('a'));
    s.appendMessage(assistant('b'));
    s.appendMessage(user('c'));
    // Still in the stretch: in the tree, not yet in the file.
    expect(s.buildContext().messages).toHaveLength(5);
    expect(lineCount(path)).toBe(3);
    await endOfStretch();
    expect(s.storage.appendCount).toBe(writes + 1);
    expect(lineCount(path)).toBe(6);
    await timer;
    expect(seenByTimer).toBe(6);
  });

  it('write at once when a stretch passes the batch size, so the unwritten window stays small', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = startedSession(path);
    const big = 'x'.repeat(4096);
    const perBatch = Math.ceil(SESSION_DEFAULTS.writeBatchBytes / big.length);
    for (let i = 0; i < perBatch * 3; i++) s.appendMessage(user(`${i} ${big}`));
    // No checkpoint yet: only the size bound wrote, each time in one write.
    expect(s.storage.appendCount).toBeGreaterThanOrEqual(3);
    expect(lineCount(path)).toBeGreaterThanOrEqual(3 + perBatch * 2);
    expect(lineCount(path)).toBeLessThan(3 + perBatch * 3);
    s.close();
    expect(lineCount(path)).toBe(3 + perBatch * 3);
  });

  it('never splits one logical step between writes, however big (a branched copy is one write)', () => {
    const dir = tempDir();
    const s = startedSession(join(dir, 'a.jsonl'));
    const big = 'z'.repeat(4096);
    for (let i = 0; i < 200; i++) s.appendMessage(i % 2 ? assistant(`${i} ${big}`) : user(`${i} ${big}`));
    const copy = s.createBranchedSession(s.leafId, join(dir, 'b.jsonl'));
    copy.persist();
    expect(copy.storage.appendCount).toBe(1);
    expect(lineCount(join(dir, 'b.jsonl'))).toBe(1 + 202);
  });

  it('persist() writes now and close() writes what is left; a reopened session has every entry', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = startedSession(path);
    s.appendMessage(user('a'));
    s.persist();
    expect(lineCount(path)).toBe(4);
    s.appendMessage(assistant('b'));
    s.moveLeaf(s.getPath()[0]!.id);
    s.close();
    const reopened = SessionStore.open(path);
    expect(reopened.warnings).toEqual([]);
    expect(reopened.entries).toHaveLength(4);
    expect(reopened.leafId).toBe(s.getPath()[0]!.id);
  });

  it('flush() writes a new session before its first reply; persist() does not', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    s.appendMessage(user('only a question'));
    s.persist();
    expect(existsSync(path)).toBe(false);
    s.flush();
    expect(lineCount(path)).toBe(2);
  });

  it('a failed batch is reported, blocks further appends with a clear error, and is written once storage works again', async () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path);
    const errors: Error[] = [];
    s.onWriteError((e) => errors.push(e));
    s.appendMessage(user('q'));
    s.appendMessage(assistant('a'));
    mkdirSync(path); // the file's path is taken by a folder before the checkpoint write
    await endOfStretch();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain(path);
    expect(errors[0]!.message).toMatch(/EISDIR/);
    // While storage fails, nothing more is appended.
    expect(() => s.appendMessage(user('more'))).toThrow(/EISDIR/);
    expect(s.entries).toHaveLength(2);
    // Storage works again: the kept batch goes out first, in order.
    rmdirSync(path);
    s.appendMessage(user('more'));
    s.close();
    const reopened = SessionStore.open(path);
    expect(reopened.warnings).toEqual([]);
    expect(reopened.entries.map(messageText)).toEqual(['q', 'a', 'more']);
  });

  it('an entry JSON cannot hold (a cycle, a BigInt) is refused whole; the session goes on and reopens clean', () => {
    const path = join(tempDir(), 's.jsonl');
    const s = startedSession(path);
    s.appendMessage(user('staged before'));
    const cyclic: Record<string, unknown> = { text: 'x'.repeat(100) };
    cyclic.self = cyclic;
    expect(() => s.appendCustom('state', cyclic)).toThrow(TypeError);
    expect(() => s.appendCustom('state', { n: 1n })).toThrow(TypeError);
    expect(s.entries).toHaveLength(3);
    s.appendMessage(user('after'));
    s.close();
    const reopened = SessionStore.open(path);
    expect(reopened.warnings).toEqual([]);
    expect(reopened.entries.map(messageText)).toEqual(['start', 'ok', 'staged before', 'after']);
  });

  it("writeMode 'immediate': a failed write leaves the entry out of the session and the next append retries", () => {
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path, { writeMode: 'immediate' });
    s.appendMessage(user('q'));
    mkdirSync(path);
    expect(() => s.appendMessage(assistant('a'))).toThrow(/EISDIR/);
    expect(s.entries).toHaveLength(1);
    expect(s.isPersisted).toBe(false);
    rmdirSync(path);
    s.appendMessage(assistant('a'));
    expect(lineCount(path)).toBe(3);
  });

  it('process.exit() in the middle of a stretch still writes it (the exit hook)', async () => {
    const dir = tempDir();
    const path = join(dir, 's.jsonl');
    const { code, stderr } = await runChild(
      `const s = SessionStore.create(${JSON.stringify(path)}, { cwd: '/w' });
const msg = (role: 'user' | 'assistant', text: string) => role === 'user'
  ? { role, content: text, timestamp: 1 }
  : { role, content: [{ type: 'text', text }], api: 'x', provider: 'x', model: 'x', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: 2 };
s.appendMessage(msg('user', 'q') as never);
s.appendMessage(msg('assistant', 'a') as never);
s.appendMessage(msg('user', 'last words') as never);
process.exit(7);`,
      dir,
    );
    expect(code, stderr).toBe(7);
    const reopened = SessionStore.open(path);
    expect(reopened.warnings).toEqual([]);
    expect(reopened.entries).toHaveLength(3);
  });

  it('a process killed at an arbitrary moment leaves a prefix of the session: every entry up to some point, in order', async () => {
    const dir = tempDir();
    const path = join(dir, 's.jsonl');
    // The child appends numbered entries in stretches of 40 forever; it is killed while doing so.
    const { code, stderr } = await runChild(
      `const s = SessionStore.create(${JSON.stringify(path)}, { cwd: '/w' });
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
let i = 0;
const pad = 'y'.repeat(700);
for (;;) {
  for (let k = 0; k < 40; k++, i++) {
    if (i % 2 === 0) s.appendMessage({ role: 'user', content: [{ type: 'text', text: String(i) + ' ' + pad }], timestamp: i } as never);
    else s.appendMessage({ role: 'assistant', content: [{ type: 'text', text: String(i) + ' ' + pad }], api: 'x', provider: 'x', model: 'x', usage, stopReason: 'stop', timestamp: i } as never);
  }
  if (i === 400) process.stdout.write('running\\n');
  await new Promise((r) => setImmediate(r));
}`,
      dir,
      (text, kill) => {
        if (text.includes('running')) setTimeout(kill, 150);
      },
    );
    expect(code, stderr).toBe(null); // killed, not ended
    const reopened = SessionStore.open(path);
    // At most the one line the kill tore is dropped; everything before it is intact.
    expect(reopened.warnings.length).toBeLessThanOrEqual(1);
    const numbers = reopened.entries.map((e) => Number(messageText(e).split(' ')[0]));
    expect(numbers.length).toBeGreaterThanOrEqual(400);
    expect(numbers).toEqual(numbers.map((_, i) => i));
    const path0 = reopened.getPath();
    expect(path0).toHaveLength(numbers.length);
  });
});
