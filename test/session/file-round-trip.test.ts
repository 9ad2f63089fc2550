// Random sessions written through the batched file store: at every checkpoint the file, reopened,
// must hold exactly what the store holds (entries, leaf, labels, name, context), and a file cut at
// any byte must reopen with a prefix of those entries. This is the "never loses data" promise
// checked over many operation mixes rather than one hand-picked sequence.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SessionStore } from '../../src/session/session-store.js';
import { seededInt } from '../helpers/seeded-random.js';
import { assistant, endOfStretch, tempDir, toolResult, user } from './message-builders.js';

/** What a reader of the file sees; compared between the live store and a reopened copy. */
function view(s: SessionStore) {
  return {
    ids: s.entries.map((e) => e.id),
    entries: s.entries,
    leafId: s.leafId,
    labels: s.entries.map((e) => s.getLabel(e.id) ?? null),
    name: s.sessionName ?? null,
    context: s.buildContext(),
  };
}

function reopen(path: string): SessionStore {
  const r = SessionStore.open(path);
  expect(r.warnings).toEqual([]);
  return r;
}

/** One random operation on `s` (with `step` making texts unique). */
function randomOperation(s: SessionStore, rand: (k: number) => number, step: number): void {
  const ids = s.entries.map((e) => e.id);
  const anyId = (): string => ids[rand(ids.length)]!;
  const r = rand(24);
  if (r < 2 && ids.length > 0) s.moveLeaf(anyId());
  else if (r === 2) s.moveLeaf(null);
  else if (r === 3 && s.currentPath().length > 2) {
    const path = s.currentPath();
    s.appendCompaction(`summary ${step}`, path[rand(path.length)]!.id, 1000 + step, {
      readFiles: [`r${step}.ts`],
      modifiedFiles: [],
    });
  } else if (r === 4) s.appendBranchSummary(ids.length > 0 ? anyId() : null, `branch ${step}`);
  else if (r === 5 && ids.length > 0) s.branchWithSummary(anyId(), s.leafId, `left ${step}`);
  else if (r === 6) s.appendModelChange('p', `m${step}`);
  else if (r === 7) s.appendThinkingLevelChange(step % 2 ? 'low' : 'high');
  else if (r === 8) s.appendCustomMessage('note', `custom ${step}`);
  else if (r === 9) s.appendCustom('state', { step, nested: { list: [step, 'x\n"y"'] } });
  else if (r === 10 && ids.length > 0) s.appendLabel(anyId(), rand(3) === 0 ? undefined : `label ${step}`);
  else if (r === 11) s.appendSessionInfo(`name ${step}`);
  else if (r < 16) {
    const call = `call_${step}`;
    s.appendMessage(
      assistant(
        `reply ${step} ✓ 日本語`,
        rand(2) ? { toolCalls: [{ id: call, name: 'read', args: { path: `f${step}.ts` } }] } : {},
      ),
    );
    if (rand(2)) s.appendMessage(toolResult(call, `line 1\nline "2"\t${step}`));
  } else s.appendMessage(user(`ask ${step}\n\u0001 control and \\ backslash`));
}

describe('batched file store, random sessions', () => {
  for (const seed of [1, 7, 42, 1234]) {
    it(`seed ${seed}: every checkpoint leaves the file equal to the store, and reopening continues it`, async () => {
      const rand = seededInt(seed);
      const path = join(tempDir(), 's.jsonl');
      const s = SessionStore.create(path, { cwd: '/proj' });
      s.appendMessage(user('start'));
      s.appendMessage(assistant('ready'));
      let checkpoints = 0;
      for (let step = 0; step < 300; step++) {
        randomOperation(s, rand, step);
        const pause = rand(10);
        if (pause === 0) s.persist();
        if (pause > 1) continue;
        if (pause === 1) await endOfStretch();
        const r = reopen(path);
        expect(view(r)).toEqual(view(s));
        r.close();
        checkpoints++;
      }
      expect(checkpoints).toBeGreaterThan(20);
      s.close();

      // Reopened, the session goes on from the same leaf, and that survives another reopening.
      const r = reopen(path);
      expect(view(r)).toEqual(view(s));
      randomOperation(r, rand, 1000);
      const next = r.appendMessage(user('after reopening'));
      r.close();
      const again = reopen(path);
      expect(again.leafId).toBe(next);
      expect(view(again)).toEqual(view(r));
      again.close();
    });
  }

  it('a file cut at any byte reopens with a prefix of the entries, each one whole', () => {
    const rand = seededInt(99);
    const path = join(tempDir(), 's.jsonl');
    const s = SessionStore.create(path, { cwd: '/proj' });
    s.appendMessage(user('start'));
    s.appendMessage(assistant('ready'));
    for (let step = 0; step < 60; step++) randomOperation(s, rand, step);
    s.close();
    const full = readFileSync(path);
    const all = reopen(path).entries;
    const cut = join(memoryDir(), 'cut.jsonl');
    // Every byte of the first lines, then strides through the rest (a few hundred cuts in all).
    const size = statSync(path).size;
    for (let at = 0; at < size; at += at < 1000 ? 1 : 61) {
      writeFileSync(cut, full);
      truncateSync(cut, at);
      const r = SessionStore.open(cut);
      const ids = r.entries.map((e) => e.id);
      expect(all.slice(0, ids.length).map((e) => e.id)).toEqual(ids);
      expect(r.entries).toEqual(all.slice(0, ids.length));
      // Every line complete before the cut is back (the last one even without its newline): all
      // but the header and rewind (leaf) lines are entries.
      const pieces = full.subarray(0, at).toString('utf8').split('\n');
      const complete = isJson(pieces.at(-1)!) ? pieces : pieces.slice(0, -1);
      const entryLines = complete.filter((l) => !l.startsWith('{"type":"session"') && !l.startsWith('{"type":"leaf"'));
      expect(ids).toHaveLength(entryLines.length);
      r.close();
    }
  });
});

/**
 * A folder in memory where Linux has one (/dev/shm), else a temp folder. A cut inside the header
 * line makes open() rewrite the file with an fsync and keep a backup: on a busy disk those fsyncs
 * were most of the cut test's time, and durability is not what it checks.
 */
function memoryDir(): string {
  if (!existsSync('/dev/shm')) return tempDir();
  const dir = mkdtempSync('/dev/shm/session-test-');
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
