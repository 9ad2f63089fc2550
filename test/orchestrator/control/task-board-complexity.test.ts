// The task board does O(1) board-wide work per create and per instance end, whatever its size:
// counted, not timed. Every iteration over the board's map is counted by the items it could
// visit; creating N items and releasing N instances' items stays linear (each create scanned
// every id for the next number and each instance's end scanned every item, O(N^2) in all).
import { afterEach, describe, expect, it } from 'vitest';
import { TaskBoard } from '../../../src/orchestrator/control/task-board.js';

const original = {
  values: Map.prototype.values,
  keys: Map.prototype.keys,
  entries: Map.prototype.entries,
  iterator: Map.prototype[Symbol.iterator],
};
afterEach(() => {
  Map.prototype.values = original.values;
  Map.prototype.keys = original.keys;
  Map.prototype.entries = original.entries;
  Map.prototype[Symbol.iterator] = original.iterator;
});

describe('TaskBoard complexity', () => {
  it('creates N items and releases N instances with board scans linear in N', () => {
    const board = new TaskBoard({ record: () => undefined });
    let visited = 0;
    const counted = <F extends (...a: never[]) => unknown>(f: F): F =>
      function (this: Map<unknown, unknown>, ...a: never[]) {
        if (this === board.board) visited += this.size;
        return f.apply(this, a);
      } as unknown as F;
    Map.prototype.values = counted(original.values);
    Map.prototype.keys = counted(original.keys);
    Map.prototype.entries = counted(original.entries);
    Map.prototype[Symbol.iterator] = counted(original.iterator);

    const n = 2_000;
    for (let i = 0; i < n; i++) {
      const r = board.handle('lead', { op: 'create', subject: `item ${i}` });
      expect(r.ok && r.items[0]!.id).toBe(String(i + 1));
    }
    for (let i = 1; i <= n; i++)
      expect(board.handle(`w${i}`, { op: 'update', id: String(i), status: 'in_progress' }).ok).toBe(true);
    for (let i = 1; i <= n; i++) board.releaseInstance(`w${i}`, 'failed (crashed)');
    expect([...original.values.call(board.board)].every((item) => item.status === 'pending' && !item.owner)).toBe(true);
    expect(visited).toBeLessThanOrEqual(10 * n);
  });
});
