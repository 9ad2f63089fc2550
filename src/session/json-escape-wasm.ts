// The byte loop behind stringify-json.ts: a WebAssembly function that copies UTF-8 text while
// escaping it for a JSON string literal. Node 20's JSON.stringify escapes at ~2 ns per character
// (one check and one builder append per character); this copies 8 bytes per step and jumps
// straight to the next byte that needs escaping (~0.4 ns per byte on prose and code). The module
// is assembled here from its instructions, so there is no toolchain and no opaque binary; wabt's
// wat2wasm turns the text format below into the same bytes. In short:
//
//   (memory (export "memory") 4)
//   ;; Memory 0..255: per byte, 0 (copy) or the letter after the backslash ('u' for \u00XX);
//   ;; 256..271: hex digits. Returns the end of the output.
//   (func (export "escape") (param $src i32) (param $len i32) (param $dst i32) (result i32)
//     (local $end i32) (local $b i32) (local $e i32) (local $x i64) (local $q i64) (local $m i64) (local $k i32)
//     end = src + len
//     (block $done (loop $next
//       if (src + 8 <= end) {
//         x = i64.load(src); i64.store(dst, x)        ;; copy 8 bytes, fix up below if needed
//         m = hasLess(x, 0x20) | hasByte(x, '"') | hasByte(x, '\\')
//         if (m == 0) { src += 8; dst += 8; br $next }
//         k = ctz(m) >> 3; src += k; dst += k         ;; the first byte that needs escaping
//       } else {
//         br_if $done (src >= end)                     ;; the last 0-7 bytes, one at a time
//       }
//       b = load8(src); src += 1; e = load8(b)
//       if (e == 0) { store8(dst, b); dst += 1; br $next }
//       store8(dst, '\\'); store8(dst + 1, e)
//       if (e == 'u') { store8(dst + 2..5, "00" hex(b >> 4) hex(b & 15)); dst += 6; br $next }
//       dst += 2; br $next))
//     dst)
//
// hasLess(x, n) = (x - n * 0x0101..01) & ~x & 0x8080..80 is non-zero exactly when some byte of x
// is below n (n <= 128), and its lowest set bit is in the first such byte; hasByte(x, c) =
// hasLess(x ^ c * 0x0101..01, 1). The 8-byte store may run up to 7 bytes ahead of the output,
// within the room the caller leaves (6 bytes per input byte). UTF-8 bytes >= 0x80 never need
// escaping, so the loop is correct for any well-formed text.

/** Addresses in the module's memory (see the table above). */
export const ESCAPE_TABLE = 0;
export const HEX_DIGITS = 256;
/** First free address after the tables. */
export const ESCAPE_DATA_START = 512;
const INITIAL_PAGES = 4;

// Opcodes (WebAssembly core spec, binary format).
const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const ELSE = 0x05;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const EMPTY = 0x40;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const I64_LOAD = 0x29;
const I32_LOAD8_U = 0x2d;
const I64_STORE = 0x37;
const I32_STORE8 = 0x3a;
const I32_CONST = 0x41;
const I64_CONST = 0x42;
const I32_EQZ = 0x45;
const I32_EQ = 0x46;
const I32_LE_U = 0x4d;
const I32_GE_U = 0x4f;
const I64_EQZ = 0x50;
const I32_ADD = 0x6a;
const I32_AND = 0x71;
const I32_SHR_U = 0x76;
const I64_CTZ = 0x7a;
const I64_SUB = 0x7d;
const I64_AND = 0x83;
const I64_OR = 0x84;
const I64_XOR = 0x85;
const I64_SHR_U = 0x88;
const I32_WRAP_I64 = 0xa7;
const I32 = 0x7f;
const I64 = 0x7e;

function unsignedLeb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function signedLeb(n: bigint): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = Number(n & 0x7fn);
    n >>= 7n;
    const done = (n === 0n && (byte & 0x40) === 0) || (n === -1n && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

const i32 = (n: number): number[] => [I32_CONST, ...signedLeb(BigInt(n))];
const i64 = (n: bigint): number[] => [I64_CONST, ...signedLeb(BigInt.asIntN(64, n))];
const get = (local: number): number[] => [LOCAL_GET, local];
const set = (local: number): number[] => [LOCAL_SET, local];
/** A memory access: the natural alignment as a hint (unaligned addresses still work), then the constant offset. */
const mem = (op: number, offset = 0): number[] => [
  op,
  op === I64_LOAD || op === I64_STORE ? 3 : 0,
  ...unsignedLeb(offset),
];
const bytes8 = (c: number): bigint => BigInt(c) * 0x0101010101010101n;

// Locals: parameters first, then the declared ones.
const SRC = 0;
const LEN = 1;
const DST = 2;
const END_ = 3;
const B = 4;
const E = 5;
const X = 6;
const Q = 7;
const M = 8;
const K = 9;

/** hasLess(x, n) | hasByte(x, '"') | hasByte(x, '\\'), masked: non-zero when a byte needs escaping. */
function needsEscape(): number[] {
  const hasByte = (c: number): number[] => [
    ...get(X),
    ...i64(bytes8(c)),
    I64_XOR,
    LOCAL_TEE,
    Q,
    ...i64(bytes8(1)),
    I64_SUB,
    ...get(Q),
    ...i64(-1n),
    I64_XOR,
    I64_AND,
  ];
  return [
    ...get(X),
    ...i64(bytes8(0x20)),
    I64_SUB,
    ...get(X),
    ...i64(-1n),
    I64_XOR,
    I64_AND,
    ...hasByte(0x22),
    I64_OR,
    ...hasByte(0x5c),
    I64_OR,
    ...i64(bytes8(0x80)),
    I64_AND,
  ];
}

function escapeBody(): number[] {
  const advance = (local: number, by: number): number[] => [...get(local), ...i32(by), I32_ADD, ...set(local)];
  const advanceBy = (local: number, by: number): number[] => [...get(local), ...get(by), I32_ADD, ...set(local)];
  const hexDigit = (nibble: number[]): number[] => [...nibble, ...mem(I32_LOAD8_U, HEX_DIGITS)];
  return [
    ...get(SRC),
    ...get(LEN),
    I32_ADD,
    ...set(END_),
    BLOCK,
    EMPTY,
    LOOP,
    EMPTY, // $done, $next (depths: $next 0, $done 1; one more per enclosing if)
    ...get(SRC),
    ...i32(8),
    I32_ADD,
    ...get(END_),
    I32_LE_U,
    IF,
    EMPTY,
    ...get(SRC),
    ...mem(I64_LOAD),
    ...set(X),
    ...get(DST),
    ...get(X),
    ...mem(I64_STORE),
    ...needsEscape(),
    ...set(M),
    ...get(M),
    I64_EQZ,
    IF,
    EMPTY,
    ...advance(SRC, 8),
    ...advance(DST, 8),
    BR,
    2, // $next
    END,
    ...get(M),
    I64_CTZ,
    ...i64(3n),
    I64_SHR_U,
    I32_WRAP_I64,
    ...set(K),
    ...advanceBy(SRC, K),
    ...advanceBy(DST, K),
    ELSE,
    ...get(SRC),
    ...get(END_),
    I32_GE_U,
    BR_IF,
    2, // $done
    END,
    ...get(SRC),
    ...mem(I32_LOAD8_U),
    ...set(B),
    ...advance(SRC, 1),
    ...get(B),
    ...mem(I32_LOAD8_U, ESCAPE_TABLE),
    ...set(E),
    ...get(E),
    I32_EQZ,
    IF,
    EMPTY,
    ...get(DST),
    ...get(B),
    ...mem(I32_STORE8),
    ...advance(DST, 1),
    BR,
    1,
    END,
    ...get(DST),
    ...i32(0x5c),
    ...mem(I32_STORE8),
    ...get(DST),
    ...get(E),
    ...mem(I32_STORE8, 1),
    ...get(E),
    ...i32(0x75),
    I32_EQ,
    IF,
    EMPTY,
    ...get(DST),
    ...i32(0x30),
    ...mem(I32_STORE8, 2),
    ...get(DST),
    ...i32(0x30),
    ...mem(I32_STORE8, 3),
    ...get(DST),
    ...hexDigit([...get(B), ...i32(4), I32_SHR_U]),
    ...mem(I32_STORE8, 4),
    ...get(DST),
    ...hexDigit([...get(B), ...i32(15), I32_AND]),
    ...mem(I32_STORE8, 5),
    ...advance(DST, 6),
    BR,
    1,
    END,
    ...advance(DST, 2),
    BR,
    0,
    END,
    END,
    ...get(DST),
    END,
  ];
}

function section(id: number, content: number[]): number[] {
  return [id, ...unsignedLeb(content.length), ...content];
}

function name(s: string): number[] {
  return [...unsignedLeb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
}

/** The module's binary: exports "memory" and "escape". */
export function escapeModuleBytes(): Uint8Array {
  const locals = [3, 3, I32, 3, I64, 1, I32]; // 3 groups: end b e (i32), x q m (i64), k (i32)
  const body = [...locals, ...escapeBody()];
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00, // "\0asm", version 1
    ...section(1, [1, 0x60, 3, I32, I32, I32, 1, I32]), // type 0: (i32 i32 i32) -> i32
    ...section(3, [1, 0]), // function 0 has type 0
    ...section(5, [1, 0x00, ...unsignedLeb(INITIAL_PAGES)]), // one memory, no maximum
    ...section(7, [2, ...name('memory'), 0x02, 0, ...name('escape'), 0x00, 0]),
    ...section(10, [1, ...unsignedLeb(body.length), ...body]),
  ]);
}
