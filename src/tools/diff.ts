// A unified line diff (Myers' O(ND) algorithm on the region between the common prefix and
// suffix) for edit results. The diff is for people and UIs; it never reaches the model.
import { TOOL_DEFAULTS } from './defaults.js';

export interface DiffOptions {
  /** Shown in the ---/+++ header. */
  path?: string;
  /** Unchanged lines around each change. */
  context?: number;
  /** Above this edit distance, show the differing region as one block replace. */
  maxEditDistance?: number;
}

export interface DiffResult {
  /** Unified diff text, '' when nothing changed. */
  diff: string;
  /** 1-based line in the new text where the first change is, undefined when nothing changed. */
  firstChangedLine: number | undefined;
}

type Op = { t: '=' | '-' | '+'; text: string; oldLine: number; newLine: number };

/** Edit script between two line arrays, or undefined when it needs more than maxD edits. */
function myers(a: string[], b: string[], maxD: number): ('=' | '-' | '+')[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, maxD); d++) {
    // Keep only the diagonals round d reads: [-d-1, d+1].
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[off + k - 1] ?? 0) < (v[off + k + 1] ?? 0))
          ? (v[off + k + 1] ?? 0)
          : (v[off + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], n: number, m: number): ('=' | '-' | '+')[] {
  const ops: ('=' | '-' | '+')[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const row = trace[d] as Int32Array;
    const at = (k: number): number => row[k + d + 1] ?? 0;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push('=');
      x--;
      y--;
    }
    if (d > 0) ops.push(x === prevX ? '+' : '-');
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

// A final newline ends the last line; it does not start an empty one.
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Unified diff of two texts with `context` lines around each change. */
export function unifiedDiff(oldText: string, newText: string, options: DiffOptions = {}): DiffResult {
  const context = options.context ?? TOOL_DEFAULTS.diffContextLines;
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++;
  if (prefix === a.length && prefix === b.length) return { diff: '', firstChangedLine: undefined };

  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  const script = myers(midA, midB, options.maxEditDistance ?? TOOL_DEFAULTS.diffMaxEditDistance) ?? [
    ...midA.map(() => '-' as const),
    ...midB.map(() => '+' as const),
  ];

  // Ops with 1-based line numbers; only `context` lines of the common prefix/suffix are kept.
  const ops: Op[] = [];
  for (let i = Math.max(0, prefix - context); i < prefix; i++)
    ops.push({ t: '=', text: a[i] ?? '', oldLine: i + 1, newLine: i + 1 });
  let ia = prefix;
  let ib = prefix;
  for (const t of script) {
    if (t === '=') ops.push({ t, text: a[ia] ?? '', oldLine: ++ia, newLine: ++ib });
    else if (t === '-') ops.push({ t, text: a[ia] ?? '', oldLine: ++ia, newLine: ib });
    else ops.push({ t, text: b[ib] ?? '', oldLine: ia, newLine: ++ib });
  }
  for (let i = 0; i < Math.min(context, suffix); i++)
    ops.push({ t: '=', text: a[ia] ?? '', oldLine: ++ia, newLine: ++ib });

  const changes = ops.map((op, i) => (op.t === '=' ? -1 : i)).filter((i) => i >= 0);
  const first = ops[changes[0] ?? 0] as Op;
  const firstChangedLine = first.t === '+' ? first.newLine : first.newLine + 1;

  const lines: string[] = [`--- a/${options.path ?? 'file'}`, `+++ b/${options.path ?? 'file'}`];
  let g = 0;
  while (g < changes.length) {
    let last = g;
    while (last + 1 < changes.length && (changes[last + 1] ?? 0) - (changes[last] ?? 0) <= 2 * context + 1) last++;
    const from = Math.max(0, (changes[g] ?? 0) - context);
    const to = Math.min(ops.length, (changes[last] ?? 0) + context + 1);
    const hunk = ops.slice(from, to);
    const oldCount = hunk.filter((o) => o.t !== '+').length;
    const newCount = hunk.filter((o) => o.t !== '-').length;
    const h0 = hunk[0] as Op;
    // Line before the hunk: the first op's line minus one unless it does not consume that side.
    const oldBefore = h0.t === '+' ? h0.oldLine : h0.oldLine - 1;
    const newBefore = h0.t === '-' ? h0.newLine : h0.newLine - 1;
    const oldStart = oldCount === 0 ? oldBefore : oldBefore + 1;
    const newStart = newCount === 0 ? newBefore : newBefore + 1;
    lines.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const op of hunk) lines.push(`${op.t === '=' ? ' ' : op.t}${op.text}`);
    g = last + 1;
  }
  return { diff: lines.join('\n'), firstChangedLine };
}
