import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { prepareArguments } from '../../src/agent/prepare-arguments.js';
import type { AnyAgentTool } from '../../src/agent/types.js';

function toolWith(parameters: z.ZodType, argumentAliases?: Record<string, string>): AnyAgentTool {
  return { name: 't', description: 't', parameters, argumentAliases, execute: async () => ({ content: [] }) };
}

const Node: z.ZodType<{ name: string; size?: number; children?: unknown[] }> = z.object({
  name: z.string(),
  size: z.number().optional(),
  get children() {
    return z.array(Node).optional();
  },
});

describe('prepareArguments', () => {
  it('returns valid arguments untouched (same reference, no repairs)', () => {
    const args = { a: 1, b: ['x'], c: { d: true } };
    const tool = toolWith(z.object({ a: z.number(), b: z.array(z.string()), c: z.object({ d: z.boolean() }) }));
    const out = prepareArguments(tool, args);
    expect(out.args).toBe(args);
    expect(out.repairs).toEqual([]);
  });

  it('parses JSON text where the schema wants an object or an array', () => {
    const tool = toolWith(z.object({ opts: z.object({ deep: z.number() }), list: z.array(z.number()) }));
    const out = prepareArguments(tool, { opts: '{"deep":"2"}', list: '[1,"2"]' });
    expect(out.args).toEqual({ opts: { deep: 2 }, list: [1, 2] });
    expect(out.repairs).toContain('opts: parsed JSON text into an object');
  });

  it('leaves strings alone where the schema wants a string, even when they look like JSON', () => {
    const tool = toolWith(z.object({ content: z.string(), n: z.string() }));
    const args = { content: '{"a":1}', n: '5' };
    expect(prepareArguments(tool, args).args).toBe(args);
  });

  it('converts numeric and boolean strings only where the schema wants them', () => {
    const tool = toolWith(
      z.object({ n: z.number(), i: z.number().int(), b: z.boolean(), s: z.string(), bad: z.number() }),
    );
    const out = prepareArguments(tool, { n: '-1.5e2', i: ' 7 ', b: 'FALSE', s: 'true', bad: '12abc' });
    expect(out.args).toEqual({ n: -150, i: 7, b: false, s: 'true', bad: '12abc' });
  });

  it('handles unions, nullables and enums through their JSON Schema', () => {
    const tool = toolWith(
      z.object({
        u: z.union([z.number(), z.array(z.number())]),
        maybe: z.number().nullable(),
        mode: z.enum(['a', 'b']),
        lit: z.literal(3),
      }),
    );
    const out = prepareArguments(tool, { u: '4', maybe: 'null', mode: 'a', lit: '3' });
    expect(out.args).toEqual({ u: 4, maybe: null, mode: 'a', lit: 3 });
  });

  it('wraps a single value where an array is expected, and repairs the element', () => {
    const tool = toolWith(
      z.object({ items: z.array(z.object({ k: z.number() })), nums: z.array(z.number()), tags: z.array(z.string()) }),
    );
    const out = prepareArguments(tool, { items: { k: '1' }, nums: '3', tags: 'only' });
    expect(out.args).toEqual({ items: [{ k: 1 }], nums: [3], tags: ['only'] });
  });

  it('does not wrap a value that could not be an element', () => {
    const tool = toolWith(z.object({ items: z.array(z.object({ k: z.number() })) }));
    expect(prepareArguments(tool, { items: 'nonsense' }).args).toEqual({ items: 'nonsense' });
  });

  it('follows recursive schemas ($ref)', () => {
    const out = prepareArguments(toolWith(Node), {
      name: 'root',
      children: [{ name: 'kid', size: '3', children: '[]' }],
    });
    expect(out.args).toEqual({ name: 'root', children: [{ name: 'kid', size: 3, children: [] }] });
  });

  it('parses whole arguments sent as a JSON string, and treats missing arguments as {}', () => {
    const tool = toolWith(z.object({ n: z.number().optional() }));
    expect(prepareArguments(tool, '{"n":"2"}').args).toEqual({ n: 2 });
    expect(prepareArguments(tool, undefined).args).toEqual({});
    expect(prepareArguments(tool, 'not json').args).toBe('not json');
  });

  it('applies aliases only when the canonical name is absent', () => {
    const tool = toolWith(z.object({ path: z.string() }), { file_path: 'path', filename: 'path' });
    expect(prepareArguments(tool, { file_path: 'a' }).args).toEqual({ path: 'a' });
    expect(prepareArguments(tool, { path: 'a', filename: 'b' }).args).toEqual({ path: 'a', filename: 'b' });
  });

  it('repairs record values through additionalProperties', () => {
    const tool = toolWith(z.object({ env: z.record(z.string(), z.number()) }));
    expect(prepareArguments(tool, { env: { A: '1' } }).args).toEqual({ env: { A: 1 } });
  });
});
