// Where a hooks key of a settings.json is, as line:col, so a warning about it (an event this
// runtime does not fire, a hook type it does not run) points at the line, as recipe problems do.
// JSON is YAML, so yaml's parser gives every node's offset; a file it cannot read gives none.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/** "hooks.PreToolUse[0].hooks[1].timeout" -> ['hooks', 'PreToolUse', 0, 'hooks', 1, 'timeout']. */
export function keyPathSteps(key: string): (string | number)[] {
  return key
    .split(/\.|\[(\d+)\]/)
    .filter((s): s is string => s !== undefined && s !== '')
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** The 1-based line and column of `key` (a path from the file's root, e.g. hooks.Notification) in `text`. */
export function settingsKeyPosition(text: string, key: string): { line: number; col: number } | undefined {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0) return undefined;
  let node: unknown = doc.contents;
  let offset: number | undefined;
  for (const step of keyPathSteps(key)) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(step));
      if (!pair) break;
      // The key itself: that is where the reader looks for "hooks.Notification".
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof step === 'number') {
      const item = node.items[step] as Node | undefined;
      if (item === undefined) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  if (offset === undefined) return undefined;
  const { line, col } = lines.linePos(offset);
  return { line, col };
}
