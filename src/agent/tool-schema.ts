// zod parameter schemas -> JSON Schema the model sees. Generation is not cheap (tens of µs per
// tool), so each schema object is converted once and the result reused for every model call and
// for argument repair (prepare-arguments.ts reads the same cached JSON Schema).
import { z } from 'zod';
import type { Tool, ToolParametersSchema } from '../ai/types.js';
import type { AnyAgentTool } from './types.js';

const schemaCache = new WeakMap<z.ZodType, ToolParametersSchema>();
const toolCache = new WeakMap<AnyAgentTool, Tool>();
const listCache = new WeakMap<readonly AnyAgentTool[], { tools: AnyAgentTool[]; llm: Tool[] }>();

/**
 * JSON Schema (draft 2020-12) of a tool's parameters as the model should fill them: `io: 'input'`
 * keeps defaulted fields optional (parse fills them in). `$schema` is stripped because providers
 * reject or ignore it. Types JSON Schema cannot express (dates, functions) become `{}` rather
 * than throwing, so one odd field never takes the whole tool set down. Treat the result as
 * read-only: it is shared.
 */
export function toolJsonSchema(schema: z.ZodType): ToolParametersSchema {
  let json = schemaCache.get(schema);
  if (!json) {
    const generated = z.toJSONSchema(schema, {
      io: 'input',
      target: 'draft-2020-12',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    delete generated.$schema;
    json = generated as ToolParametersSchema;
    schemaCache.set(schema, json);
  }
  return json;
}

/** One tool as the model sees it (cached per tool object; tools are treated as immutable). */
export function toLlmTool(tool: AnyAgentTool): Tool {
  let llm = toolCache.get(tool);
  if (!llm || llm.name !== tool.name || llm.description !== tool.description) {
    llm = { name: tool.name, description: tool.description, parameters: toolJsonSchema(tool.parameters) };
    toolCache.set(tool, llm);
  }
  return llm;
}

/**
 * The tool list for a model call. The same input list (same tools in the same order) returns
 * the same array, so the loop pays nothing per turn once the tools are set.
 */
export function toLlmTools(tools: readonly AnyAgentTool[]): Tool[] {
  const cached = listCache.get(tools);
  if (cached && sameTools(cached.tools, tools)) return cached.llm;
  const llm = tools.map(toLlmTool);
  listCache.set(tools, { tools: tools.slice(), llm });
  return llm;
}

function sameTools(a: readonly AnyAgentTool[], b: readonly AnyAgentTool[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return false;
  }
  return true;
}
