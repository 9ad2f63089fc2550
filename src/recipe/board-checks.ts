// Checks of the recipe's `board:` seeds that need the whole list: two items with one id, and a
// blocked_by that names no item (such an item could never be taken). Reported at the item's
// file:line:col before anything runs. Ids are numbered the way normalize.ts numbers them.
import type { PendingProblem } from './problems.js';
import { isRecord } from '../util/unknown-value.js';

export function checkBoardSeeds(board: unknown): PendingProblem[] {
  if (!Array.isArray(board)) return [];
  const out: PendingProblem[] = [];
  const given = board.flatMap((b) => (isRecord(b) && typeof b.id === 'string' ? [b.id] : []));
  const taken = new Set(given);
  let next = 1;
  const ids: (string | undefined)[] = board.map((b) => {
    if (isRecord(b) && typeof b.id === 'string') return b.id;
    if (typeof b !== 'string' && !isRecord(b)) return undefined;
    while (taken.has(String(next))) next++;
    taken.add(String(next));
    return String(next);
  });
  const seen = new Map<string, number>();
  board.forEach((b, i) => {
    const id = ids[i];
    if (id === undefined) return;
    const first = seen.get(id);
    if (first !== undefined && isRecord(b) && typeof b.id === 'string')
      out.push({
        code: 'bad_board',
        path: ['board', i, 'id'],
        message: `board item id "${id}" is used twice (first by item ${first + 1})`,
        hint: 'give each item its own id, or leave id out to have it numbered',
      });
    else if (first === undefined) seen.set(id, i);
  });
  const known = new Set(ids.filter((id): id is string => id !== undefined));
  board.forEach((b, i) => {
    if (!isRecord(b) || !Array.isArray(b.blocked_by)) return;
    b.blocked_by.forEach((ref, j) => {
      const id = String(ref);
      if (known.has(id) && id !== ids[i]) return;
      out.push({
        code: 'bad_board',
        path: ['board', i, 'blocked_by', j],
        message: id === ids[i] ? `board item "${id}" is blocked by itself` : `blocked_by names no board item: "${id}"`,
        hint: `the items are ${[...known].map((k) => `"${k}"`).join(', ')} (items without an id are numbered 1, 2, ...)`,
      });
    });
  });
  return out;
}
