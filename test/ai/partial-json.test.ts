import { describe, expect, it } from 'vitest';
import { parsePartialJson, parseToolArguments } from '../../src/ai/partial-json.js';

describe('parseToolArguments', () => {
  it('parses complete JSON exactly', () => {
    expect(parseToolArguments('{"a":1,"b":[true,null,"x"],"c":{"d":-2.5e3}}')).toEqual({ a: 1, b: [true, null, 'x'], c: { d: -2500 } });
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
