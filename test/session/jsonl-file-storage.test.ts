import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SESSION_DEFAULTS } from '../../src/session/defaults.js';
import { JsonlFileStorage } from '../../src/session/jsonl-file-storage.js';
import { MemoryStorage, type SessionStorage } from '../../src/session/storage.js';
import { tempDir } from './message-builders.js';

/** Whole lines as a storage takes them: UTF-8, each ending in a newline. */
function lines(...text: string[]): Uint8Array {
  return Buffer.from(text.map((l) => `${l}\n`).join(''));
}

function readAll(storage: SessionStorage): { lines: [string, number, boolean][]; endsWithNewline: boolean } {
  const lines: [string, number, boolean][] = [];
  const r = storage.readLines((l, n, t) => lines.push([l, n, t]));
  return { lines, endsWithNewline: r.endsWithNewline };
}

describe('JsonlFileStorage', () => {
  it('reads lines across chunk boundaries, including lines longer than a chunk and multibyte text', () => {
    const path = join(tempDir(), 'f.jsonl');
    const chunk = SESSION_DEFAULTS.readChunkBytes;
    const long = 'é'.repeat(chunk); // 2 bytes each: spans three chunks
    const mid = '漢'.repeat(Math.floor(chunk / 3) - 1); // ends near a chunk boundary
    const lines = ['first', long, mid, 'x', `${mid}字`, 'last'];
    writeFileSync(path, `${lines.join('\n')}\n`);
    const r = readAll(new JsonlFileStorage(path));
    expect(r.lines.map((l) => l[0])).toEqual(lines);
    expect(r.lines.map((l) => l[1])).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.endsWithNewline).toBe(true);
  });

  it('reports an unterminated last line and starts the next append on a fresh line', () => {
    const path = join(tempDir(), 'f.jsonl');
    writeFileSync(path, 'a\nb\ntorn');
    const s = new JsonlFileStorage(path);
    const r = readAll(s);
    expect(r.lines).toEqual([
      ['a', 1, true],
      ['b', 2, true],
      ['torn', 3, false],
    ]);
    s.append(lines('next'));
    s.append(lines('after', 'then ünïcödé 日本'));
    s.close();
    expect(readFileSync(path, 'utf8')).toBe('a\nb\ntorn\nnext\nafter\nthen ünïcödé 日本\n');
    expect(s.appendCount).toBe(2);
  });

  it('replaceAll swaps the whole file atomically and appends continue on the new file', () => {
    const path = join(tempDir(), 'f.jsonl');
    const s = new JsonlFileStorage(path);
    s.append(lines('one'));
    s.replaceAll('fresh\n');
    s.append(lines('two'));
    s.close();
    expect(readFileSync(path, 'utf8')).toBe('fresh\ntwo\n');
  });

  it('a batch bigger than the write buffer, and one after it, are written whole', () => {
    const path = join(tempDir(), 'f.jsonl');
    const s = new JsonlFileStorage(path);
    const big = Array.from({ length: 40 }, (_, i) => `${i} ${'é'.repeat(50_000)}`);
    s.append(lines(...big));
    s.append(lines('small'));
    s.close();
    expect(readFileSync(path, 'utf8')).toBe(`${big.join('\n')}\nsmall\n`);
  });

  it('a missing file reads as not existing', () => {
    expect(new JsonlFileStorage(join(tempDir(), 'none.jsonl')).readLines(() => {}).exists).toBe(false);
  });
});

describe('MemoryStorage', () => {
  it('behaves like a file for torn lines', () => {
    const m = new MemoryStorage('a\ntorn');
    expect(readAll(m).lines.at(-1)).toEqual(['torn', 2, false]);
    m.append(lines('b'));
    expect(m.content).toBe('a\ntorn\nb\n');
  });
});

describe('JsonlFileStorage errors', () => {
  it('a session path that cannot be read is named in the error, with the OS reason', () => {
    const path = join(tempDir(), 'f.jsonl');
    mkdirSync(path);
    expect(() => readAll(new JsonlFileStorage(path))).toThrow(
      new RegExp(`Could not read session file ${path}: EISDIR`),
    );
  });

  it('a session path that cannot be opened for appending is named in the error, with the OS reason', () => {
    const path = join(tempDir(), 'f.jsonl');
    const storage = new JsonlFileStorage(path);
    mkdirSync(path);
    expect(() => storage.append(lines('{}'))).toThrow(new RegExp(`Could not append to session file ${path}: EISDIR`));
  });
});
