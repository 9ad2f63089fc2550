// UTF-8 boundary arithmetic shared by truncation, bash streaming and binary sniffing.
// Everything here scans at most a few bytes or the kept region, never a whole input.

/** True for a UTF-8 continuation byte (0b10xxxxxx), which never starts a character. */
export function isContinuationByte(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** Moves `pos` forward past continuation bytes so it lands on the start of a character. */
export function alignToCharStart(bytes: Uint8Array, pos: number, end = bytes.length): number {
  let p = pos;
  while (p < end && isContinuationByte(bytes[p] ?? 0)) p++;
  return p;
}

/**
 * How many trailing bytes form an incomplete (not yet finished) UTF-8 sequence. A streaming
 * reader holds them back until the next chunk so no character is split between chunks.
 */
export function incompleteUtf8TailLength(bytes: Uint8Array): number {
  const n = bytes.length;
  // A sequence is at most 4 bytes, so only the last 3 bytes can belong to an unfinished one.
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = bytes[n - back] ?? 0;
    if (isContinuationByte(b)) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** UTF-8 byte length of one UTF-16 code unit sequence position (a surrogate pair counts once, as 4). */
function unitBytes(text: string, i: number): { bytes: number; units: number } {
  const c = text.charCodeAt(i);
  if (c < 0x80) return { bytes: 1, units: 1 };
  if (c < 0x800) return { bytes: 2, units: 1 };
  if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
    const prev = text.charCodeAt(i - 1);
    // The low half of a pair: the pair is 4 bytes, attributed when we reach its high half.
    if (prev >= 0xd800 && prev <= 0xdbff) return { bytes: 4, units: 2 };
  }
  return { bytes: 3, units: 1 };
}

/**
 * The smallest index `start` in [from, to] such that text.slice(start, to) encodes to at most
 * `maxBytes` UTF-8 bytes, walking back from `to` by whole code points (never splitting a pair).
 */
export function utf8TailStart(text: string, from: number, to: number, maxBytes: number): number {
  let bytes = 0;
  let i = to;
  while (i > from) {
    const { bytes: b, units } = unitBytes(text, i - 1);
    if (units === 2 && i - 2 < from) break;
    if (bytes + b > maxBytes) break;
    bytes += b;
    i -= units;
  }
  return i;
}

/** True when `bytes` (a prefix of a file) decodes as UTF-8, ignoring a sequence cut at its end. */
export function isValidUtf8Prefix(bytes: Uint8Array): boolean {
  const cut = incompleteUtf8TailLength(bytes);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, bytes.length - cut));
    return true;
  } catch {
    return false;
  }
}
