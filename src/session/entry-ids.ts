// Entry ids: 8 random hex chars, re-drawn on collision within the session.
import { randomFillSync, randomUUID } from 'node:crypto';
import { SESSION_DEFAULTS } from './defaults.js';

// Random bytes are drawn in blocks: one crypto call per 1024 ids keeps appends cheap.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
const HEX_BYTES = SESSION_DEFAULTS.entryIdHexLength / 2;

function randomHex(): string {
  if (poolOffset + HEX_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const s = pool.toString('hex', poolOffset, poolOffset + HEX_BYTES);
  poolOffset += HEX_BYTES;
  return s;
}

/** A short id not yet used in the session (`taken`). */
export function newEntryId(taken: { has(id: string): boolean }): string {
  for (let i = 0; i < SESSION_DEFAULTS.entryIdMaxTries; i++) {
    const id = randomHex();
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

export function newSessionId(): string {
  return randomUUID();
}
