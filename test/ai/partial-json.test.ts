import { describe, expect, it } from 'vitest';
import { parsePartialJson, parseToolArguments, StreamedToolArguments } from '../../src/ai/partial-json.js';

describe('parseToolArguments', () => {
  it('parses complete JSON exactly', () => {
    expect(parseToolArguments('{"a":1,"b":[true,null,"x"],"c":{"d":-2.5e3}}')).toEqual({
      a: 1,
      b: [true, null, 'x'],
      c: { d: -2500 },
    });
  });

  it('returns what is complete at every prefix of a streamed document', () => {
    const full = '{"path": "src/a.ts", "edits": [{"oldText": "x\\n", "newText": "y"}], "n": 12}';
    const seen = new Set<string>();
    for (let i = 0; i <= full.length; i++) {
      const v = parseToolArguments(full.slice(0, i));
      expect(typeof v).toBe('object');
      seen.add(JSON.stringify(v));
    }
    expect(seen).toContain('{}');
    expect(seen).toContain('{"path":"src/a"}');
    expect(seen).toContain('{"path":"src/a.ts","edits":[{"oldText":"x\\n"}]}');
    expect(seen).toContain('{"path":"src/a.ts","edits":[{"oldText":"x\\n","newText":"y"}],"n":1}');
    expect(parseToolArguments(full)).toEqual({ path: 'src/a.ts', edits: [{ oldText: 'x\n', newText: 'y' }], n: 12 });
  });

  it('drops unfinished keys, literals and escapes', () => {
    expect(parseToolArguments('{"a": 1, "b')).toEqual({ a: 1 });
    expect(parseToolArguments('{"a": tr')).toEqual({});
    expect(parseToolArguments('{"a": "x\\')).toEqual({ a: 'x' });
    expect(parseToolArguments('{"a": "\\u00')).toEqual({ a: '' });
    expect(parseToolArguments('{"a": -')).toEqual({});
    expect(parseToolArguments('{"a": 1.')).toEqual({ a: 1 });
  });

  it('returns {} on garbage, arrays, scalars and empty input', () => {
    expect(parseToolArguments('')).toEqual({});
    expect(parseToolArguments('not json')).toEqual({});
    expect(parseToolArguments('{"a" 1}')).toEqual({});
    expect(parseToolArguments('[1,2]')).toEqual({});
    expect(parseToolArguments('"str"')).toEqual({});
  });

  it('parsePartialJson keeps non-object values', () => {
    expect(parsePartialJson('[1, 2, {"a": "b')).toEqual([1, 2, { a: 'b' }]);
    expect(parsePartialJson('garbage')).toBeUndefined();
  });
});

describe('StreamedToolArguments', () => {
  it('a huge argument streamed in small deltas is parsed O(log n) times, not once per delta', () => {
    const args = { path: 'big.txt', content: 'z'.repeat(2_000_000) };
    const json = JSON.stringify(args);
    const s = new StreamedToolArguments(1_000, 1.25);
    let deltas = 0;
    for (let i = 0; i < json.length; i += 24) {
      s.push(json.slice(i, i + 24));
      deltas++;
    }
    expect(s.final()).toEqual(args);
    expect(deltas).toBeGreaterThan(80_000);
    // Eager parses up to 1000 chars (~42 deltas), then one per 25 % of growth.
    expect(s.parses).toBeLessThan(42 + Math.ceil(Math.log(json.length / 1_000) / Math.log(1.25)) + 3);
  });

  it('every live value is a parse of some prefix: small buffers are exact, large ones lag by under the growth factor', () => {
    const json = JSON.stringify({ a: 'x'.repeat(5_000), b: [1, 2, 3] });
    const s = new StreamedToolArguments(100, 1.5);
    for (let i = 0; i < json.length; i += 7) {
      const v = s.push(json.slice(i, i + 7));
      const n = Math.min(json.length, i + 7);
      if (n <= 100) expect(v).toEqual(parseToolArguments(json.slice(0, n)));
      else expect(typeof v).toBe('object');
    }
    expect(s.final()).toEqual(JSON.parse(json));
  });
});
