// JSON.stringify's exact output, faster for session lines. Most of a session line is long text
// (prompts, replies, tool output), and Node 20's JSON.stringify escapes text at ~2 ns per
// character. Here the structure is walked in JS and each string is copied as UTF-8 into
// WebAssembly memory, where json-escape-wasm.ts escapes it 8 bytes per step. With jsonBytes() the
// line never becomes a string at all. In the session bench (1.6 KB entries) this took an append
// from 10.4-12.1 µs to 8.3-9.4 µs.
//
// The result is always what JSON.stringify returns (the tests compare them on random values).
// Anything unusual is handed to JSON.stringify whole: values with toJSON (dates), objects that are
// not plain objects or arrays (class instances, boxed primitives, maps), BigInts, nesting deeper
// than MAX_DEPTH (and so cycles), lines beyond MAX_MEMORY_BYTES, a call made from inside a call
// (a getter that serializes), or no WebAssembly at all (node --jitless). Getters may then run twice.
import { ESCAPE_DATA_START, ESCAPE_TABLE, HEX_DIGITS, escapeModuleBytes } from './json-escape-wasm.js';

const PAGE = 65536;
/** Strings up to a third of this many characters are escaped in WebAssembly (3 UTF-8 bytes per unit at most). */
const INPUT_BYTES = 3 * PAGE;
const INPUT = ESCAPE_DATA_START;
const OUTPUT = INPUT + INPUT_BYTES;
/** The module's memory never shrinks: a bigger line goes to JSON.stringify instead. */
const MAX_MEMORY_BYTES = 8 << 20;
const MAX_DEPTH = 64;
/** Strings this short are checked and copied in JS: a call into WebAssembly costs more. */
const SHORT_STRING = 32;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Thrown inside a walk to hand the whole value to JSON.stringify. */
const HAND_OVER: unique symbol = Symbol('hand over to JSON.stringify');

type EscapeFunction = (src: number, len: number, dst: number) => number;

/** The parts of the WebAssembly API used here (this project's TypeScript libs do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

interface Engine {
  memory: WasmMemory;
  escape: EscapeFunction;
}

function createEngine(): Engine | undefined {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (wasm === undefined) return undefined; // node --jitless
  try {
    const instance = new wasm.Instance(new wasm.Module(escapeModuleBytes()));
    const memory = instance.exports.memory as WasmMemory;
    const escapeFn = instance.exports.escape as EscapeFunction;
    const table = new Uint8Array(memory.buffer);
    for (let c = 0; c < 0x20; c++) table[ESCAPE_TABLE + c] = 0x75; // \u00XX
    const short: Record<number, string> = {
      8: 'b',
      9: 't',
      10: 'n',
      12: 'f',
      13: 'r',
      [QUOTE]: '"',
      [BACKSLASH]: '\\',
    };
    for (const [c, letter] of Object.entries(short)) table[ESCAPE_TABLE + Number(c)] = letter.charCodeAt(0);
    for (let d = 0; d < 16; d++) table[HEX_DIGITS + d] = '0123456789abcdef'.charCodeAt(d);
    if (memory.buffer.byteLength < OUTPUT + PAGE)
      memory.grow(Math.ceil((OUTPUT + PAGE - memory.buffer.byteLength) / PAGE));
    return { memory, escape: escapeFn };
  } catch {
    return undefined; // WebAssembly refused (a locked-down host): JSON.stringify does it all
  }
}

const engine = createEngine();
let bytes = engine ? Buffer.from(engine.memory.buffer) : Buffer.alloc(0);
let pos = OUTPUT;
let ascii = true;
let busy = false;

/** JSON.stringify(value), the same text. */
export function stringifyJson(value: unknown): string {
  if (value === null || typeof value !== 'object' || !serialize(value)) return JSON.stringify(value);
  return bytes.toString(ascii ? 'latin1' : 'utf8', OUTPUT, pos);
}

/**
 * The UTF-8 bytes of JSON.stringify(value), without making the string (a session line goes
 * straight to its write buffer). Usually a view of a buffer that the next call of this function or
 * stringifyJson() overwrites: copy it before then.
 */
export function jsonBytes(value: object): Buffer {
  return serialize(value) ? bytes.subarray(OUTPUT, pos) : Buffer.from(JSON.stringify(value));
}

/** Serializes `value` into [OUTPUT, pos); false when JSON.stringify must do it (see the top). */
function serialize(value: object): boolean {
  if (engine === undefined || busy || typeof value !== 'object') return false;
  busy = true;
  pos = OUTPUT;
  ascii = true;
  try {
    writeObjectOrArray(value, 0);
    return true;
  } catch (err) {
    if (err === HAND_OVER) return false;
    throw err;
  } finally {
    busy = false;
  }
}

function ensure(n: number): void {
  if (pos + n <= bytes.length) return;
  const needed = pos + n;
  if (needed > MAX_MEMORY_BYTES) throw HAND_OVER;
  engine!.memory.grow(Math.ceil((needed - bytes.length) / PAGE));
  bytes = Buffer.from(engine!.memory.buffer); // growing detaches the old view
}

function writeByte(b: number): void {
  ensure(1);
  bytes[pos++] = b;
}

function writeAscii(s: string): void {
  ensure(s.length);
  for (let i = 0; i < s.length; i++) bytes[pos++] = s.charCodeAt(i);
}

/** Writes `value` and returns true, or returns false for what JSON leaves out (undefined, functions, symbols). */
function writeValue(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      writeString(value);
      return true;
    case 'number':
      writeAscii(Number.isFinite(value) ? String(value) : 'null');
      return true;
    case 'boolean':
      writeAscii(value ? 'true' : 'false');
      return true;
    case 'object':
      if (value === null) writeAscii('null');
      else writeObjectOrArray(value, depth);
      return true;
    case 'undefined':
    case 'function':
    case 'symbol':
      return false;
    default:
      throw HAND_OVER; // bigint: JSON.stringify throws, or calls BigInt.prototype.toJSON
  }
}

function writeObjectOrArray(value: object, depth: number): void {
  if (depth > MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') throw HAND_OVER;
  const proto: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) throw HAND_OVER;
    writeByte(0x5b); // [
    for (let i = 0; i < value.length; i++) {
      if (i > 0) writeByte(0x2c); // ,
      if (!writeValue(value[i], depth + 1)) writeAscii('null');
    }
    writeByte(0x5d); // ]
    return;
  }
  if (proto !== Object.prototype && proto !== null) throw HAND_OVER;
  writeByte(0x7b); // {
  let first = true;
  const record = value as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    const mark = pos;
    if (!first) writeByte(0x2c);
    writeString(k);
    writeByte(0x3a); // :
    if (writeValue(record[k], depth + 1)) first = false;
    else pos = mark; // JSON leaves the whole property out
  }
  writeByte(0x7d); // }
}

function writeString(s: string): void {
  const length = s.length;
  if (length <= SHORT_STRING && writeShortString(s)) return;
  if (length * 3 > INPUT_BYTES) return void writeWithJsonStringify(s);
  const n = bytes.write(s, INPUT, INPUT_BYTES, 'utf8');
  if (n !== length) {
    // Not ASCII. A lone surrogate would become U+FFFD in UTF-8; JSON.stringify escapes it as \udXXX.
    if (LONE_SURROGATE.test(s)) return void writeWithJsonStringify(s);
    ascii = false;
  }
  ensure(n * 6 + 2); // worst case: every byte a control character (\u00XX)
  bytes[pos] = QUOTE;
  pos = engine!.escape(INPUT, n, pos + 1);
  bytes[pos++] = QUOTE;
}

/** Printable ASCII with nothing to escape, copied directly; false (nothing written) otherwise. */
function writeShortString(s: string): boolean {
  ensure(s.length + 2);
  let p = pos + 1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return false;
    bytes[p++] = c;
  }
  bytes[pos] = QUOTE;
  bytes[p++] = QUOTE;
  pos = p;
  return true;
}

function writeWithJsonStringify(s: string): void {
  const json = JSON.stringify(s);
  ensure(json.length * 3);
  const n = bytes.write(json, pos, 'utf8');
  if (n !== json.length) ascii = false;
  pos += n;
}
