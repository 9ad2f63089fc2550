import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toLlmTools, toolJsonSchema } from '../../src/agent/tool-schema.js';
import type { AnyAgentTool } from '../../src/agent/types.js';

const params = z.object({
  path: z.string().describe('File path'),
  limit: z.number().int().optional(),
  encoding: z.enum(['utf8', 'base64']).default('utf8'),
  when: z.date().optional(),
});

describe('tool JSON Schema', () => {
  it('describes the input side: defaulted fields optional, descriptions kept, no $schema', () => {
    const json = toolJsonSchema(params);
    expect(json.type).toBe('object');
    expect(json.required).toEqual(['path']);
    expect(json.$schema).toBeUndefined();
    expect(json.properties?.path).toEqual({ type: 'string', description: 'File path' });
    expect(json.properties?.encoding).toMatchObject({ default: 'utf8', enum: ['utf8', 'base64'] });
    expect(json.properties?.when).toEqual({}); // unrepresentable types do not throw
  });

  it('is computed once per schema object', () => {
    expect(toolJsonSchema(params)).toBe(toolJsonSchema(params));
    expect(toolJsonSchema(z.object({ a: z.string() }))).not.toBe(toolJsonSchema(z.object({ a: z.string() })));
  });

  it('toLlmTools maps tools and reuses the result for the same list', () => {
    const tool: AnyAgentTool = {
      name: 'read',
      description: 'Read a file',
      parameters: params,
      execute: async () => ({ content: [] }),
    };
    const list = [tool];
    const llm = toLlmTools(list);
    expect(llm).toEqual([{ name: 'read', description: 'Read a file', parameters: toolJsonSchema(params) }]);
    expect(toLlmTools(list)).toBe(llm);
    list.push({ ...tool, name: 'read2' });
    expect(toLlmTools(list).map((t) => t.name)).toEqual(['read', 'read2']);
  });
});
