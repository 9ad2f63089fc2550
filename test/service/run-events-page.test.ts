// The run_events cursor (a byte offset in run.jsonl): every complete event once across pages, a
// line still being written waits for the next page, a line longer than a page is stepped over
// instead of stalling the cursor, filtered events still move it, and paths come back absolute.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEventsPage, runLogSize } from '../../src/service/run-events-page.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function runDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-events-page-'));
  made.push(dir);
  return dir;
}

const base = { v: 1, runId: 'r1' };
const start = {
  ...base,
  ts: 1,
  type: 'run_start',
  recipe: 'recipe.yaml',
  root: '../..',
  name: 'x',
  recipeHash: 'h',
  inputs: {},
  plan: [],
};
const queued = (key: string, ts: number) => ({ ...base, ts, type: 'instance_queued', task: 't', key, attempt: 1 });
const line = (e: object) => `${JSON.stringify(e)}\n`;

describe('readEventsPage', () => {
  it('pages through the log by cursor: each event once, in order, the last page says no more', () => {
    const dir = runDir();
    writeFileSync(
      join(dir, 'run.jsonl'),
      [start, queued('a', 2), queued('b', 3), queued('c', 4), queued('d', 5)].map(line).join(''),
    );
    const seen: string[] = [];
    let cursor = 0;
    let pages = 0;
    for (;;) {
      const page = readEventsPage(dir, cursor, { limit: 2, maxBytes: 1 << 20 });
      pages++;
      seen.push(...page.events.map((e) => ('key' in e ? e.key : e.type)));
      expect(page.next).toBeGreaterThanOrEqual(cursor);
      cursor = page.next;
      if (!page.more) break;
    }
    expect(seen).toEqual(['run_start', 'a', 'b', 'c', 'd']);
    expect(pages).toBe(3);
    expect(cursor).toBe(runLogSize(dir));
    // run_start's recipe and root come back absolute.
    const first = readEventsPage(dir, 0, { limit: 1, maxBytes: 1 << 20 }).events[0]!;
    expect(first).toMatchObject({
      type: 'run_start',
      root: join(dir, '..', '..'),
      recipe: join(dir, '..', '..', 'recipe.yaml'),
    });
  });

  it('a line still being written waits for the next page; garbage is counted, not returned', () => {
    const dir = runDir();
    const file = join(dir, 'run.jsonl');
    const torn = line(queued('b', 3));
    writeFileSync(file, `${line(start)}not json\n${line(queued('a', 2))}${torn.slice(0, 20)}`);
    const page = readEventsPage(dir, 0, { limit: 100, maxBytes: 1 << 20 });
    expect(page.events.map((e) => e.type)).toEqual(['run_start', 'instance_queued']);
    expect(page.skipped).toBe(1);
    expect(page.more).toBe(false);
    appendFileSync(file, torn.slice(20));
    const next = readEventsPage(dir, page.next, { limit: 100, maxBytes: 1 << 20 });
    expect(next.events).toMatchObject([{ key: 'b' }]);
    expect(next.next).toBe(runLogSize(dir));
  });

  it('a line longer than a whole page is stepped over; filtered events still move the cursor', () => {
    const dir = runDir();
    const huge = {
      ...base,
      ts: 2,
      type: 'instance_skipped',
      task: 't',
      key: 'big',
      attempt: 1,
      reason: 'x'.repeat(5000),
    };
    writeFileSync(join(dir, 'run.jsonl'), [start, huge, queued('a', 3)].map(line).join(''));
    const opts = { limit: 100, maxBytes: 1000, keep: (e: { type: string }) => e.type !== 'run_start' };
    const first = readEventsPage(dir, 0, opts);
    expect(first.events).toEqual([]);
    expect(first.filtered).toBe(1);
    const over = readEventsPage(dir, first.next, opts);
    expect(over.skipped).toBe(1);
    expect(over.next).toBeGreaterThan(first.next + 5000);
    const last = readEventsPage(dir, over.next, opts);
    expect(last.events).toMatchObject([{ key: 'a' }]);
    expect(readEventsPage(dir, last.next, opts)).toMatchObject({ events: [], next: last.next, more: false });
  });

  it('a folder without a log yet reads as empty', () => {
    expect(readEventsPage(runDir(), 0, { limit: 10, maxBytes: 1000 })).toMatchObject({
      events: [],
      next: 0,
      more: false,
    });
  });
});
