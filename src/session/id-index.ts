// Entry id -> node number, for the session tree.
//
// Every id this code makes is 8 lowercase hex digits, i.e. a 32-bit number. Those live in an
// open-addressing hash table made of two typed arrays: no object per id and nothing for the
// garbage collector to trace. A Map<string, number> with 100k string keys cost about 1 µs per
// append in a session that keeps its entries in memory (bench/session.bench.ts); this costs a
// few tens of ns. Any other id (an older file, the UUID fallback of newEntryId) goes to a Map.

/** The value of an 8-digit lowercase hex id in [0, 2^32), or -1 for any other string. */
function hexValue(id: string): number {
  if (id.length !== 8) return -1;
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const c = id.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

const EMPTY = -1;

export class IdIndex {
  /** Slot -> key (the id's 32-bit value, as int32); meaningful only where `nodes` is set. */
  private keys = new Int32Array(1024);
  /** Slot -> node number, or EMPTY. The table size is always a power of two. */
  private nodes = new Int32Array(1024).fill(EMPTY);
  private hexCount = 0;
  private readonly other = new Map<string, number>();

  get size(): number {
    return this.hexCount + this.other.size;
  }

  get(id: string): number | undefined {
    const v = hexValue(id);
    if (v < 0) return this.other.get(id);
    const n = this.nodes[this.slotOf(v | 0)]!;
    return n === EMPTY ? undefined : n;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** Sizes the table for `count` ids without growing (opening a session of known length). */
  reserve(count: number): void {
    if (count * 2 <= this.nodes.length) return;
    if (this.hexCount > 0) {
      while (count * 2 > this.nodes.length) this.grow();
      return;
    }
    let size = this.nodes.length;
    while (count * 2 > size) size *= 2;
    this.keys = new Int32Array(size);
    this.nodes = new Int32Array(size).fill(EMPTY);
  }

  /** Maps `id` to node `n` (replacing an earlier mapping of the same id). */
  set(id: string, n: number): void {
    const v = hexValue(id);
    if (v < 0) {
      this.other.set(id, n);
      return;
    }
    // Grow at half full: probe runs stay short.
    if ((this.hexCount + 1) * 2 > this.nodes.length) this.grow();
    if (this.put(v | 0, n)) this.hexCount++;
  }

  /**
   * The slot holding `key`, or the empty slot where it belongs (linear probing). The start is a
   * Fibonacci hash over the table's bit count: ids read from a file may be sequential, not random.
   */
  private slotOf(key: number): number {
    const mask = this.nodes.length - 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> (Math.clz32(this.nodes.length) + 1);
    while (this.nodes[slot] !== EMPTY && this.keys[slot] !== key) slot = (slot + 1) & mask;
    return slot;
  }

  /** Returns true when the key was new. */
  private put(key: number, n: number): boolean {
    const slot = this.slotOf(key);
    const isNew = this.nodes[slot] === EMPTY;
    this.keys[slot] = key;
    this.nodes[slot] = n;
    return isNew;
  }

  private grow(): void {
    const keys = this.keys;
    const nodes = this.nodes;
    this.keys = new Int32Array(keys.length * 2);
    this.nodes = new Int32Array(nodes.length * 2).fill(EMPTY);
    for (let slot = 0; slot < nodes.length; slot++) if (nodes[slot] !== EMPTY) this.put(keys[slot]!, nodes[slot]!);
  }
}
