// The in-memory index of a session: entries by id, children through a reverse index built on
// open (never stored in parents), labels, and the current root-to-leaf path kept as an array.
//
// Nodes are numbered in file order and their links (parent, depth, first/last child, next
// sibling) live in typed arrays: opening 100k entries allocates no per-node objects, which
// keeps the garbage collector and the memory footprint small.
//
// Every node knows its depth, so the path array satisfies path[depth(n)] === entry(n) for each
// node on it. Moving the leaf walks up from the target only until it meets the current path (the
// common ancestor), then truncates and extends: O(distance), not O(path) or O(n).
import { IdIndex } from './id-index.js';
import { PathContext } from './path-context.js';
import type { SessionContext, SessionEntry } from './types.js';

const NONE = -1;
const UNKNOWN = -1;
const VISITING = -2;

type Links = Int32Array<ArrayBuffer>;

function grow(a: Links, size: number): Links {
  if (size <= a.length) return a;
  const b = new Int32Array(Math.max(size, a.length * 2));
  b.set(a);
  return b;
}

export class SessionTree {
  /** All entries in file order; an entry's index here is its node number. */
  readonly entries: SessionEntry[] = [];
  private readonly index = new IdIndex();
  private parent = new Int32Array(16);
  private depth = new Int32Array(16);
  private firstChild = new Int32Array(16);
  private lastChild = new Int32Array(16);
  private nextSibling = new Int32Array(16);
  private readonly labels = new Map<string, string>();
  private name: string | undefined;
  private leaf = NONE;
  /** Root-to-leaf path of the current leaf, with its context contribution. */
  private readonly current = new PathContext((id) => {
    const n = this.index.get(id);
    return n === undefined ? -1 : this.depth[n]!;
  });

  private reserve(size: number): void {
    if (size <= this.parent.length) return;
    this.parent = grow(this.parent, size);
    this.depth = grow(this.depth, size);
    this.firstChild = grow(this.firstChild, size);
    this.lastChild = grow(this.lastChild, size);
    this.nextSibling = grow(this.nextSibling, size);
  }

  /** Registers an entry as node n (links filled by the caller). */
  private register(entry: SessionEntry): number {
    const n = this.entries.length;
    this.reserve(n + 1);
    this.index.set(entry.id, n);
    this.entries.push(entry);
    this.parent[n] = NONE;
    this.depth[n] = UNKNOWN;
    this.firstChild[n] = NONE;
    this.lastChild[n] = NONE;
    this.nextSibling[n] = NONE;
    return n;
  }

  private linkChild(p: number, n: number): void {
    if (this.firstChild[p] === NONE) this.firstChild[p] = n;
    else this.nextSibling[this.lastChild[p]!] = n;
    this.lastChild[p] = n;
  }

  /** Indexes entries read from storage; damage (duplicate ids, orphans, cycles) becomes warnings. */
  static build(entries: readonly SessionEntry[], warnings: string[]): SessionTree {
    const tree = new SessionTree();
    // Room kept at open: the first appends after opening must not copy every link array (nor
    // rehash the id index, nor regrow the path's message ends) of a long session.
    const room = entries.length + (entries.length >> 3) + 64;
    tree.reserve(room);
    tree.index.reserve(room);
    tree.current.reserve(room);
    let duplicates = 0;
    for (const entry of entries) {
      if (tree.index.has(entry.id)) duplicates++;
      else tree.register(entry);
    }
    if (duplicates > 0)
      warnings.push(
        `${duplicates} entr${duplicates === 1 ? 'y repeats an id' : 'ies repeat ids'} already used earlier in the file; the later copies were skipped.`,
      );
    const count = tree.entries.length;
    let orphans = 0;
    for (let n = 0; n < count; n++) {
      const pid = tree.entries[n]!.parentId;
      if (pid === null) continue;
      const p = tree.index.get(pid);
      if (p !== undefined && p !== n) tree.parent[n] = p;
      else orphans++;
    }
    if (orphans > 0)
      warnings.push(
        `${orphans} entr${orphans === 1 ? 'y refers' : 'ies refer'} to a parent that is not in the file; treated as roots.`,
      );
    let cycles = 0;
    for (let n = 0; n < count; n++) cycles += tree.computeDepth(n);
    if (cycles > 0) warnings.push(`${cycles} parent cycle(s) found; each was cut at one entry, which became a root.`);
    for (let n = 0; n < count; n++) {
      const p = tree.parent[n]!;
      if (p !== NONE) tree.linkChild(p, n);
      tree.noteMetadata(tree.entries[n]!);
    }
    return tree;
  }

  /** Depth of n and of its unknown ancestors; returns the number of cycles cut. */
  private computeDepth(node: number): number {
    if (this.depth[node]! >= 0) return 0;
    let cycles = 0;
    const stack: number[] = [];
    let n = node;
    while (n !== NONE && this.depth[n]! < 0) {
      if (this.depth[n] === VISITING) {
        this.parent[n] = NONE;
        cycles++;
        break;
      }
      this.depth[n] = VISITING;
      stack.push(n);
      n = this.parent[n]!;
    }
    for (let i = stack.length - 1; i >= 0; i--) {
      const s = stack[i]!;
      const p = this.parent[s]!;
      this.depth[s] = p === NONE ? 0 : this.depth[p]! + 1;
    }
    return cycles;
  }

  private noteMetadata(entry: SessionEntry): void {
    if (entry.type === 'label') {
      if (entry.label?.trim()) this.labels.set(entry.targetId, entry.label.trim());
      else this.labels.delete(entry.targetId);
    } else if (entry.type === 'session_info') {
      this.name = entry.name?.trim() || undefined;
    }
  }

  get size(): number {
    return this.entries.length;
  }

  has(id: string): boolean {
    return this.index.has(id);
  }

  get(id: string): SessionEntry | undefined {
    const n = this.index.get(id);
    return n === undefined ? undefined : this.entries[n];
  }

  get leafId(): string | null {
    return this.leaf === NONE ? null : this.entries[this.leaf]!.id;
  }

  get sessionName(): string | undefined {
    return this.name;
  }

  label(id: string): string | undefined {
    return this.labels.get(id);
  }

  /** Adds an entry whose parent is already indexed (or null); it becomes the leaf. */
  add(entry: SessionEntry): void {
    // Usually the parent is the leaf: no lookup then.
    const p =
      entry.parentId === null
        ? NONE
        : this.leaf !== NONE && this.entries[this.leaf]!.id === entry.parentId
          ? this.leaf
          : this.index.get(entry.parentId);
    if (p === undefined) throw new Error(`Parent ${entry.parentId} of new entry ${entry.id} is not in the session.`);
    if (p !== this.leaf) this.setLeaf(entry.parentId);
    const n = this.register(entry);
    this.parent[n] = p;
    this.depth[n] = p === NONE ? 0 : this.depth[p]! + 1;
    if (p !== NONE) this.linkChild(p, n);
    this.noteMetadata(entry);
    this.current.push(entry);
    this.leaf = n;
  }

  /** Moves the leaf; null means "before the first entry" (the next append starts a new root). */
  setLeaf(id: string | null): void {
    if (id === null) {
      this.leaf = NONE;
      this.current.truncate(0);
      return;
    }
    const target = this.index.get(id);
    if (target === undefined) throw new Error(`Entry ${id} is not in the session.`);
    const path = this.current;
    const stretch: number[] = [];
    let n = target;
    while (n !== NONE && path.at(this.depth[n]!) !== this.entries[n]) {
      stretch.push(n);
      n = this.parent[n]!;
    }
    this.current.truncate(n === NONE ? 0 : this.depth[n]! + 1);
    for (let i = stretch.length - 1; i >= 0; i--) this.current.push(this.entries[stretch[i]!]!);
    this.leaf = target;
  }

  /**
   * Called once a session is opened: runs the rewind code once without changing anything, so the
   * first real rewind finds it compiled, and prepares the first context's array (path-context.ts).
   */
  prepareRewind(): void {
    this.current.truncate(this.current.length);
    if (this.leaf !== NONE) this.setLeaf(this.entries[this.leaf]!.id);
    this.current.prepareFirstBuild();
  }

  /** Context at the current leaf (from the incremental cache). */
  context(): SessionContext {
    return this.current.build();
  }

  /** The current root-to-leaf path, shared: callers must not mutate it; a rewind replaces it. */
  currentPath(): readonly SessionEntry[] {
    return this.current.path();
  }

  /** Root-to-entry path (a fresh array); unknown id → empty. */
  pathTo(id: string | null): SessionEntry[] {
    if (id === this.leafId) return this.current.copy();
    let n = id === null ? undefined : this.index.get(id);
    if (n === undefined) return [];
    const out: SessionEntry[] = new Array(this.depth[n]! + 1);
    while (n !== NONE) {
      out[this.depth[n]!] = this.entries[n]!;
      n = this.parent[n]!;
    }
    return out;
  }

  /** Children in append order; null lists the roots. */
  children(id: string | null): SessionEntry[] {
    const out: SessionEntry[] = [];
    if (id === null) {
      for (let n = 0; n < this.entries.length; n++) if (this.parent[n] === NONE) out.push(this.entries[n]!);
      return out;
    }
    const p = this.index.get(id);
    if (p === undefined) return out;
    for (let c = this.firstChild[p]!; c !== NONE; c = this.nextSibling[c]!) out.push(this.entries[c]!);
    return out;
  }

  /** Entries without children: the tip of every branch, in file order. */
  leaves(): SessionEntry[] {
    const out: SessionEntry[] = [];
    for (let n = 0; n < this.entries.length; n++) if (this.firstChild[n] === NONE) out.push(this.entries[n]!);
    return out;
  }

  /** Deepest entry shared by the paths to `a` and `b` (null when they share no root). */
  commonAncestor(a: string | null, b: string | null): string | null {
    let x = a === null ? NONE : (this.index.get(a) ?? NONE);
    let y = b === null ? NONE : (this.index.get(b) ?? NONE);
    while (x !== NONE && y !== NONE && x !== y) {
      if (this.depth[x]! >= this.depth[y]!) x = this.parent[x]!;
      else y = this.parent[y]!;
    }
    return x !== NONE && y !== NONE ? this.entries[x]!.id : null;
  }
}
