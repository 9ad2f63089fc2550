// Entry ids: 8 hex chars, unique within the session.
import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';
import { SESSION_DEFAULTS } from './defaults.js';

// Random bytes are drawn in blocks: one crypto call per 1024 ids keeps migrations cheap.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
const HEX_BYTES = SESSION_DEFAULTS.entryIdHexLength / 2;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function randomHex(): string {
  if (poolOffset + HEX_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const s = pool.toString('hex', poolOffset, poolOffset + HEX_BYTES);
  poolOffset += HEX_BYTES;
  return s;
}

/** A random short id not yet used in `taken` (re-drawn on collision). */
export function newEntryId(taken: { has(id: string): boolean }): string {
  for (let i = 0; i < SESSION_DEFAULTS.entryIdMaxTries; i++) {
    const id = randomHex();
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/**
 * The ids one store gives its new entries: a keyed bijection of a counter over 32 bits, so they
 * look random but never repeat among themselves (until 2^32 ids) and need no lookup. Only ids
 * that came from elsewhere (read from the file, copied from another session) can collide with
 * them; with those present, pass the index as `taken` and a taken id is skipped.
 */
export class EntryIdSequence {
  private counter: number;
  private readonly key: number;

  constructor() {
    const seed = randomBytes(8);
    this.counter = seed.readUInt32LE(0);
    this.key = seed.readUInt32LE(4);
  }

  next(taken?: { has(id: string): boolean }): string {
    for (;;) {
      this.counter = (this.counter + 1) >>> 0;
      const id = this.format(this.mix(this.counter));
      if (!taken?.has(id)) return id;
    }
  }

  /** Each step is invertible on 32-bit values (xor-shift, odd multiply, xor), so the whole is a bijection. */
  private mix(n: number): number {
    let x = (n ^ this.key) >>> 0;
    x ^= x >>> 16;
    x = Math.imul(x, 0x7feb352d);
    x ^= x >>> 15;
    x = Math.imul(x, 0x846ca68b);
    x ^= x >>> 16;
    return x >>> 0;
  }

  private format(x: number): string {
    return HEX[x >>> 24]! + HEX[(x >>> 16) & 255]! + HEX[(x >>> 8) & 255]! + HEX[x & 255]!;
  }
}

export function newSessionId(): string {
  return randomUUID();
}
