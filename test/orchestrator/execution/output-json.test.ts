import { describe, expect, it } from 'vitest';
import { extractJson, outputFixPrompt, parseJsonOutput } from '../../../src/orchestrator/execution/output-json.js';

const schema = {
  type: 'object',
  required: ['subtasks'],
  properties: {
    subtasks: {
      type: 'array',
      items: { type: 'object', required: ['repo'], properties: { repo: { type: 'string' } } },
    },
  },
};

describe('JSON output', () => {
  it('parses bare JSON, a ```json fence, and JSON surrounded by prose', () => {
    expect(extractJson('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(extractJson('Here it is:\n```json\n{"a":2}\n```\nDone.')).toEqual({ ok: true, value: { a: 2 } });
    expect(extractJson('The list is [1, 2, 3] as asked.')).toEqual({ ok: true, value: [1, 2, 3] });
  });

  it('reports text that holds no JSON, quoting its start', () => {
    const r = extractJson('I could not find anything.');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/not valid JSON.*I could not/);
    expect(extractJson('   ').ok).toBe(false);
  });

  it('validates against output_schema and names the failing path', () => {
    expect(parseJsonOutput('{"subtasks":[{"repo":"a"}]}', schema)).toEqual({
      ok: true,
      value: { subtasks: [{ repo: 'a' }] },
    });
    const bad = parseJsonOutput('{"subtasks":[{"name":"a"}]}', schema);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/subtasks\.0\.repo/);
  });

  it('the fix prompt carries the error and the schema', () => {
    const p = outputFixPrompt('the JSON does not match', schema);
    expect(p).toMatch(/does not match/);
    expect(p).toMatch(/"required"/);
  });
});
