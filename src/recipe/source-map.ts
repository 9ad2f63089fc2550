// Maps a path in the parsed recipe (['tasks', 1, 'retries']) back to a line and column in the YAML
// text, so every problem can say file:line:col. Missing keys point at the map that should hold
// them; unknown keys point at the key itself; expression problems point inside the scalar.
import { type Document, type LineCounter, isAlias, isMap, isScalar, isSeq } from 'yaml';

export interface SourcePosition {
  line: number;
  col: number;
}

export type DocPath = readonly (string | number)[];

export interface LocateOptions {
  /** Point at the key of the last segment instead of its value. */
  key?: boolean;
  /** Offset into the scalar's string value (for expressions inside a prompt). */
  offset?: number;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range?.[0];
}

export class SourceMap {
  constructor(
    private readonly doc: Document,
    private readonly lineCounter: LineCounter,
    private readonly text: string,
  ) {}

  private at(offset: number): SourcePosition {
    return this.lineCounter.linePos(Math.max(0, Math.min(offset, this.text.length)));
  }

  /** The YAML node at `path`, if every segment exists. */
  node(path: DocPath): unknown {
    const found = this.walk(path);
    return found.exact ? found.node : undefined;
  }

  private walk(path: DocPath): { node: unknown; keyNode?: unknown; exact: boolean } {
    let node: unknown = this.doc.contents;
    let keyNode: unknown;
    for (const seg of path) {
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node)) {
        const pair = node.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === String(seg));
        if (!pair) return { node, keyNode, exact: false };
        keyNode = pair.key;
        node = pair.value;
        if (node === null || node === undefined) return { node: keyNode, keyNode, exact: true };
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg];
        if (item === undefined) return { node, keyNode, exact: false };
        keyNode = undefined;
        node = item;
      } else {
        return { node, keyNode, exact: false };
      }
    }
    return { node, keyNode, exact: true };
  }

  /** Line and column for `path`, falling back to the deepest ancestor that exists. */
  locate(path: DocPath, opts: LocateOptions = {}): SourcePosition {
    const { node, keyNode, exact } = this.walk(path);
    if (exact && opts.key && keyNode) return this.at(rangeStart(keyNode) ?? 0);
    // An empty value (`prompt:` and nothing after it) has no useful position of its own.
    if (
      exact &&
      isScalar(node) &&
      (node.value === null || node.value === '') &&
      keyNode &&
      node.range?.[0] === node.range?.[1]
    ) {
      return this.at(rangeStart(keyNode) ?? 0);
    }
    const start = rangeStart(node);
    if (start === undefined) return { line: 1, col: 1 };
    if (exact && opts.offset !== undefined && isScalar(node) && typeof node.value === 'string') {
      return this.at(this.offsetInScalar(node.value, node.range!, opts.offset));
    }
    return this.at(start);
  }

  /** Source offset of character `offset` of a scalar's value, or the scalar's start if unsure. */
  private offsetInScalar(value: string, range: [number, number, number], offset: number): number {
    const [start, end] = range;
    const raw = this.text.slice(start, end);
    if (raw === value) return start + offset;
    if ((raw.startsWith('"') || raw.startsWith("'")) && raw.slice(1, -1) === value) return start + 1 + offset;
    // Block scalars and escaped strings: find the text from `offset` to its line end in the source.
    const lineEnd = value.indexOf('\n', offset);
    const snippet = value.slice(offset, lineEnd < 0 ? undefined : lineEnd).slice(0, 60);
    if (snippet.length >= 3) {
      const found = raw.indexOf(snippet);
      if (found >= 0 && raw.indexOf(snippet, found + 1) < 0) return start + found;
    }
    return start;
  }
}
