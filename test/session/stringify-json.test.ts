// stringifyJson and jsonBytes must give exactly what JSON.stringify gives (the session file's lines
// are read back with JSON.parse, and other tools read them too): random values, every character
// that needs escaping at every place in an 8-byte step of the WebAssembly loop, text that is not
// ASCII, lone surrogates, and everything that is handed over to JSON.stringify.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jsonBytes, stringifyJson } from '../../src/session/stringify-json.js';
import { seededInt } from '../helpers/seeded-random.js';

function expectSame(value: unknown): void {
  const expected = JSON.stringify(value);
  expect(stringifyJson(value)).toBe(expected);
  if (value !== null && typeof value === 'object')
    expect(Buffer.from(jsonBytes(value)).toString('utf8')).toBe(expected);
}

describe('stringifyJson', () => {
  it('escapes every character JSON escapes, at every position of the 8-byte steps, in long and short strings', () => {
    const specials = [
      ...Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(c)),
      '"',
      '\\',
      '\u007f',
      'é',
      '日',
      '😀',
    ];
    for (const special of specials) {
      for (const length of [1, 7, 8, 9, 31, 32, 33, 40, 41, 47, 48, 49, 64]) {
        for (let at = 0; at < length; at++) {
          const text = 'a'.repeat(at) + special + 'b'.repeat(length - at - 1);
          expect(stringifyJson({ text })).toBe(JSON.stringify({ text }));
        }
      }
    }
  });

  it('matches JSON.stringify on random values (random keys, strings of every kind, numbers, nesting, left-out values)', () => {
    const rand = seededInt(7);
    const alphabet = [
      'a',
      'Z',
      ' ',
      '\n',
      '\t',
      '\r',
      '"',
      '\\',
      '/',
      '\u0000',
      '\u001f',
      '\u007f',
      '\u0080',
      'é',
      'ß',
      '日本',
      '😀',
      '\ud800',
      '\udfff',
      '\u2028',
      '{',
      '}',
      ':',
    ];
    const text = (): string => {
      const pieces = rand(4) === 0 ? 40 + rand(400) : rand(12);
      let s = '';
      for (let i = 0; i < pieces; i++) s += rand(3) === 0 ? alphabet[rand(alphabet.length)]! : 'plain text ';
      return s;
    };
    const numbers = [
      0,
      -0,
      1,
      -1,
      42,
      1.5,
      -2.25e-7,
      1e21,
      123456789012345680000,
      Number.MAX_SAFE_INTEGER,
      Number.MIN_VALUE,
      NaN,
      Infinity,
      -Infinity,
    ];
    const value = (depth: number): unknown => {
      switch (rand(depth > 3 ? 6 : 9)) {
        case 0:
          return text();
        case 1:
          return numbers[rand(numbers.length)]! * (rand(2) ? 1 : rand(1000));
        case 2:
          return rand(2) === 0;
        case 3:
          return null;
        case 4:
          return [undefined, () => 1, Symbol('s')][rand(3)];
        case 5:
          return text();
        case 6:
        case 7: {
          const o: Record<string, unknown> = {};
          for (let i = rand(6); i > 0; i--) o[rand(5) === 0 ? String(rand(20)) : text()] = value(depth + 1);
          return o;
        }
        default:
          return Array.from({ length: rand(6) }, () => value(depth + 1));
      }
    };
    let long = 0;
    for (let i = 0; i < 3000; i++) {
      const v = { type: 'message', id: i.toString(16), body: value(0), list: [value(1), value(1)] };
      const expected = JSON.stringify(v);
      if (expected.length > 200) long++;
      expect(stringifyJson(v)).toBe(expected);
      expect(Buffer.from(jsonBytes(v)).toString('utf8')).toBe(expected);
    }
    expect(long).toBeGreaterThan(500); // the WebAssembly path was exercised
  });

  it('keeps text that is not ASCII, and escapes a lone surrogate as JSON.stringify does', () => {
    expectSame({
      cjk: '日本語のテキスト'.repeat(20),
      emoji: `${'ok 😀 '.repeat(20)}`,
      mixed: `é\n${'x'.repeat(40)}"日"`,
    });
    expectSame({
      lone: `${'x'.repeat(40)}\ud83d tail`,
      low: `\ude00${'y'.repeat(40)}`,
      pair: `${'z'.repeat(40)}\ud83d\ude00`,
    });
  });

  it('long strings beyond the WebAssembly input area and lines beyond its memory cap come out the same', () => {
    expectSame({ big: `${'line of text "quoted"\n'.repeat(20_000)}`, after: 'x' });
    expectSame({ huge: 'a\\b\n'.repeat(3_000_000) });
    expectSame({ small: 'still fine after the big ones\n'.repeat(3) });
  });

  it('hands what is not plain data to JSON.stringify: toJSON, class instances, maps, boxed primitives', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    expectSame({ at: new Date(0), nested: { d: new Date(1_700_000_000_000) } });
    expectSame({ p: new Point(1, 2), m: new Map([[1, 2]]), s: new Set([1]) });
    expectSame({ boxed: [Object('text'), Object(1), Object(true)] });
    expectSame({ custom: { toJSON: (key: string) => `key was ${key}` } });
    expectSame(Object.assign(Object.create(null) as object, { bare: 'object', n: 1 }));
    expectSame([new Point(3, 4), 'x'.repeat(50)]);
  });

  it('throws what JSON.stringify throws for a cycle and a BigInt, and then still works', () => {
    const cyclic: Record<string, unknown> = { a: 'x'.repeat(40) };
    cyclic.self = cyclic;
    expect(() => stringifyJson(cyclic)).toThrow(TypeError);
    expect(() => jsonBytes({ n: 1n })).toThrow(TypeError);
    expectSame({ after: 'errors\n'.repeat(10) });
  });

  it('deep nesting, and a getter that serializes while a value is being serialized', () => {
    let deep: unknown = 'bottom\n'.repeat(10);
    for (let i = 0; i < 500; i++) deep = i % 2 ? [deep] : { d: deep };
    expectSame(deep);
    const outer = {
      first: 'a\n'.repeat(30),
      get inner(): string {
        return stringifyJson({ nested: 'b\n'.repeat(30) });
      },
      last: 'c\n'.repeat(30),
    };
    expectSame(outer);
  });

  it('primitives at the top level go straight to JSON.stringify', () => {
    for (const v of ['text\n', 1.5, true, null, undefined]) expect(stringifyJson(v)).toBe(JSON.stringify(v));
  });

  it('without WebAssembly (node --jitless) the output is the same', () => {
    const module = fileURLToPath(new URL('../../src/session/stringify-json.ts', import.meta.url));
    const script = `import('${module}').then((m) => { const v = { t: 'quote " and\\nnewline '.repeat(9), n: [1, -0, 2.5] }; process.stdout.write(m.stringifyJson(v) === JSON.stringify(v) ? 'same' : 'different'); })`;
    const r = spawnSync(process.execPath, ['--jitless', '--import', 'tsx', '-e', script], { encoding: 'utf8' });
    expect(r.stdout).toBe('same');
  });
});
