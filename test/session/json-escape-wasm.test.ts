// The hand-assembled WebAssembly module: valid, exports its memory and escape(), and escape()
// copies bytes, escapes what the table marks (short forms and \u00XX with the hex digits from
// memory), and returns the end of its output. stringify-json.test.ts checks it against
// JSON.stringify at every position of its 8-byte steps.
import { describe, expect, it } from 'vitest';
import { ESCAPE_DATA_START, ESCAPE_TABLE, HEX_DIGITS, escapeModuleBytes } from '../../src/session/json-escape-wasm.js';

type Escape = (src: number, len: number, dst: number) => number;
/** This project's TypeScript libs do not declare WebAssembly. */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

describe('escapeModuleBytes', () => {
  it('is a valid module whose escape() copies, escapes marked bytes and returns the end', () => {
    const bytes = escapeModuleBytes();
    expect(wasm.validate(bytes)).toBe(true);
    const { exports } = new wasm.Instance(new wasm.Module(bytes));
    const memory = new Uint8Array((exports.memory as { buffer: ArrayBuffer }).buffer);
    const escapeFn = exports.escape as Escape;
    memory[ESCAPE_TABLE + 0x0a] = 'n'.charCodeAt(0);
    memory[ESCAPE_TABLE + 0x22] = '"'.charCodeAt(0);
    memory[ESCAPE_TABLE + 0x01] = 'u'.charCodeAt(0);
    memory.set(Buffer.from('0123456789abcdef'), HEX_DIGITS);
    const input = Buffer.from('plain text of 20+ b\n"quoted"\u0001 and é after');
    const src = ESCAPE_DATA_START;
    const dst = src + 1000;
    memory.set(input, src);
    const end = escapeFn(src, input.length, dst);
    expect(Buffer.from(memory.subarray(dst, end)).toString('utf8')).toBe(
      'plain text of 20+ b\\n\\"quoted\\"\\u0001 and é after',
    );
    expect(escapeFn(src, 0, dst)).toBe(dst);
  });
});
