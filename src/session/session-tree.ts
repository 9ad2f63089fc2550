// The in-memory index of a session: entries by id, children through a reverse index built on
// open (never stored in parents), labels, and the current root-to-leaf path kept as an array.
//
// Every node knows its depth, so the path array satisfies path[node.depth] === node.entry for
// each node on it. Moving the leaf walks up from the target only until it meets the current
// path (the common ancestor), then truncates and extends: O(distance), not O(path) or O(n).
import { PathContext } from './path-context.js';
import type { SessionContext, SessionEntry } from './types.js';

interface TreeNode {
  entry: SessionEntry;
  parent: TreeNode | null;
  /** Distance from the root; -1 while unknown, -2 while being computed (cycle guard). */
  depth: number;
  children: TreeNode[] | undefined;
}

const UNKNOWN = -1;
const VISITING = -2;

export class SessionTree {
  /** All entries in file order. */
  readonly entries: SessionEntry[] = [];
  private readonly nodes = new Map<string, TreeNode>();
  private readonly labels = new Map<string, string>();
  private name: string | undefined;
  private leaf: TreeNode | null = null;
  /** Root-to-leaf path of the current leaf, with its context contribution. */
  private readonly current = new PathContext((id) => this.nodes.get(id)?.depth ?? -1);
  private readonly path: SessionEntry[] = this.current.path;

  /** Indexes entries read from storage; damage (duplicate ids, orphans, cycles) becomes warnings. */
  static build(entries: readonly SessionEntry[], warnings: string[]): SessionTree {
    const tree = new SessionTree();
    const fresh: TreeNode[] = [];
    let duplicates = 0;
    for (const entry of entries) {
      if (tree.nodes.has(entry.id)) {
        duplicates++;
        continue;
      }
      const node: TreeNode = { entry, parent: null, depth: UNKNOWN, children: undefined };
      tree.nodes.set(entry.id, node);
      tree.entries.push(entry);
      fresh.push(node);
    }
    if (duplicates > 0) warnings.push(`${duplicates} entr${duplicates === 1 ? 'y repeats an id' : 'ies repeat ids'} already used earlier in the file; the later copies were skipped.`);
    let orphans = 0;
    for (const node of fresh) {
      const pid = node.entry.parentId;
      if (pid === null) continue;
      const parent = tree.nodes.get(pid);
      if (parent && parent !== node) node.parent = parent;
      else orphans++;
    }
    if (orphans > 0) warnings.push(`${orphans} entr${orphans === 1 ? 'y refers' : 'ies refer'} to a parent that is not in the file; treated as roots.`);
    let cycles = 0;
    for (const node of fresh) cycles += tree.computeDepth(node);
    if (cycles > 0) warnings.push(`${cycles} parent cycle(s) found; each was cut at one entry, which became a root.`);
    for (const node of fresh) {
      if (node.parent) (node.parent.children ??= []).push(node);
      tree.noteMetadata(node.entry);
    }
    return tree;
  }

  private computeDepth(node: TreeNode): number {
    if (node.depth >= 0) return 0;
    let cycles = 0;
    const stack: TreeNode[] = [];
    let n: TreeNode | null = node;
    while (n !== null && n.depth < 0) {
      if (n.depth === VISITING) {
        n.parent = null;
        cycles++;
        break;
      }
      n.depth = VISITING;
      stack.push(n);
      n = n.parent;
    }
    for (let i = stack.length - 1; i >= 0; i--) {
      const s = stack[i]!;
      s.depth = s.parent ? s.parent.depth + 1 : 0;
    }
    return cycles;
  }

  private noteMetadata(entry: SessionEntry): void {
    if (entry.type === 'label') {
      if (entry.label && entry.label.trim()) this.labels.set(entry.targetId, entry.label.trim());
      else this.labels.delete(entry.targetId);
    } else if (entry.type === 'session_info') {
      this.name = entry.name?.trim() || undefined;
    }
  }

  get size(): number {
    return this.entries.length;
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  get(id: string): SessionEntry | undefined {
    return this.nodes.get(id)?.entry;
  }

  get leafId(): string | null {
    return this.leaf ? this.leaf.entry.id : null;
  }

  get sessionName(): string | undefined {
    return this.name;
  }

  label(id: string): string | undefined {
    return this.labels.get(id);
  }

  /** Adds an entry whose parent is already indexed (or null); it becomes the leaf. */
  add(entry: SessionEntry): void {
    const parent = entry.parentId === null ? null : this.nodes.get(entry.parentId);
    if (parent === undefined) throw new Error(`Parent ${entry.parentId} of new entry ${entry.id} is not in the session.`);
    if (parent !== this.leaf) this.setLeaf(entry.parentId);
    const node: TreeNode = { entry, parent, depth: parent ? parent.depth + 1 : 0, children: undefined };
    this.nodes.set(entry.id, node);
    this.entries.push(entry);
    if (parent) (parent.children ??= []).push(node);
    this.noteMetadata(entry);
    this.current.push(entry);
    this.leaf = node;
  }

  /** Moves the leaf; null means "before the first entry" (the next append starts a new root). */
  setLeaf(id: string | null): void {
    if (id === null) {
      this.leaf = null;
      this.current.truncate(0);
      return;
    }
    const target = this.nodes.get(id);
    if (!target) throw new Error(`Entry ${id} is not in the session.`);
    const stretch: TreeNode[] = [];
    let n: TreeNode | null = target;
    while (n !== null && this.path[n.depth] !== n.entry) {
      stretch.push(n);
      n = n.parent;
    }
    this.current.truncate(n ? n.depth + 1 : 0);
    for (let i = stretch.length - 1; i >= 0; i--) this.current.push(stretch[i]!.entry);
    this.leaf = target;
  }

  /** Context at the current leaf (from the incremental cache). */
  context(): SessionContext {
    return this.current.build();
  }

  /** The current root-to-leaf path, shared: callers must not mutate it. */
  currentPath(): readonly SessionEntry[] {
    return this.path;
  }

  /** Root-to-entry path (a fresh array); unknown id → empty. */
  pathTo(id: string | null): SessionEntry[] {
    if (id === this.leafId) return this.path.slice();
    let n = id === null ? null : (this.nodes.get(id) ?? null);
    if (!n) return [];
    const out: SessionEntry[] = new Array(n.depth + 1);
    while (n) {
      out[n.depth] = n.entry;
      n = n.parent;
    }
    return out;
  }

  /** Children in append order; null lists the roots. */
  children(id: string | null): SessionEntry[] {
    if (id === null) {
      const roots: SessionEntry[] = [];
      for (const node of this.nodes.values()) if (!node.parent) roots.push(node.entry);
      return roots;
    }
    return this.nodes.get(id)?.children?.map((c) => c.entry) ?? [];
  }

  /** Entries without children: the tip of every branch, in file order. */
  leaves(): SessionEntry[] {
    const out: SessionEntry[] = [];
    for (const node of this.nodes.values()) if (!node.children) out.push(node.entry);
    return out;
  }

  /** Deepest entry shared by the paths to `a` and `b` (null when they share no root). */
  commonAncestor(a: string | null, b: string | null): string | null {
    let x = a === null ? null : (this.nodes.get(a) ?? null);
    let y = b === null ? null : (this.nodes.get(b) ?? null);
    while (x && y && x !== y) {
      if (x.depth >= y.depth) x = x.parent;
      else y = y.parent;
    }
    return x && y ? x.entry.id : null;
  }
}
