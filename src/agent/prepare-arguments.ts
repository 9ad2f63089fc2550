// Stage 1 of the tool pipeline: repair the malformed arguments models commonly send, before the
// zod schema judges them. Every repair is driven by the tool's JSON Schema (generated once from
// its zod schema, see tool-schema.ts), never by tool names:
//   - the whole arguments object sent as a JSON string;
//   - a field holding JSON text where the schema wants an object or array;
//   - numbers and booleans sent as strings ("5" -> 5, "true" -> true);
//   - a single value where an array is expected (wrapped into a one-element array);
//   - known parameter-name aliases (`tool.argumentAliases`, e.g. file_path -> path).
// A repair only happens when the value does not already fit the schema, so valid input passes
// through untouched (and unallocated). The raw arguments are never mutated.
import { toolJsonSchema } from './tool-schema.js';
import type { AnyAgentTool } from './types.js';

export interface PreparedArguments {
  args: unknown;
  /** One line per repair, e.g. `edits: wrapped a single object into an array`. */
  repairs: string[];
}

type JsonSchema = Record<string, unknown>;
// 'other' = undefined, functions, symbols: never a JSON value, never repaired.
type JsonType = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null' | 'other';

export function prepareArguments(tool: AnyAgentTool, raw: unknown): PreparedArguments {
  const root = toolJsonSchema(tool.parameters) as JsonSchema;
  const repairs: string[] = [];
  let args = raw;

  if (typeof args === 'string') {
    const parsed = parseJson(args);
    if (parsed !== undefined && jsonTypeOf(parsed) === 'object') {
      args = parsed;
      repairs.push('(root): parsed arguments sent as a JSON string');
    }
  } else if (args === undefined || args === null) {
    // Tools without parameters are often called with no input at all.
    if (acceptedTypes(root, root)?.has('object')) {
      args = {};
      repairs.push('(root): no arguments given, used {}');
    }
  }

  if (tool.argumentAliases && isPlainObject(args)) args = applyAliases(args, tool.argumentAliases, repairs);
  args = repairValue(args, root, root, '', repairs);
  return { args, repairs };
}

function applyAliases(
  args: Record<string, unknown>,
  aliases: Record<string, string>,
  repairs: string[],
): Record<string, unknown> {
  let out = args;
  for (const alias in aliases) {
    const canonical = aliases[alias]!;
    if (!(alias in out) || canonical in out) continue;
    if (out === args) out = { ...args };
    out[canonical] = out[alias];
    delete out[alias];
    repairs.push(`${alias}: renamed to "${canonical}"`);
  }
  return out;
}

/** Returns the repaired value, or the same value (same reference) when nothing needed fixing. */
function repairValue(value: unknown, schemaIn: unknown, root: JsonSchema, path: string, repairs: string[]): unknown {
  const schema = resolveRef(schemaIn, root);
  if (!schema) return value;
  const accepted = acceptedTypes(schema, root);
  if (!accepted) return value; // {} or unknown keywords: anything goes
  const actual = jsonTypeOf(value);

  if (accepted.has(actual) || (actual === 'number' && accepted.has('integer'))) {
    return repairChildren(value, actual, branchFor(schema, actual, root), root, path, repairs);
  }

  if (actual === 'string') {
    const text = value as string;
    if (accepted.has('object') || accepted.has('array')) {
      const parsed = parseJson(text);
      const parsedType = parsed === undefined ? undefined : jsonTypeOf(parsed);
      if (parsedType && (accepted.has(parsedType) || (parsedType === 'object' && accepted.has('array')))) {
        repairs.push(`${label(path)}: parsed JSON text into ${parsedType === 'array' ? 'an array' : 'an object'}`);
        return repairValue(parsed, schema, root, path, repairs);
      }
    }
    if (accepted.has('number') || accepted.has('integer')) {
      const n = parseNumber(text);
      if (n !== undefined) {
        repairs.push(`${label(path)}: converted string "${text}" to number`);
        return n;
      }
    }
    if (accepted.has('boolean')) {
      const lowered = text.trim().toLowerCase();
      if (lowered === 'true' || lowered === 'false') {
        repairs.push(`${label(path)}: converted string "${text}" to boolean`);
        return lowered === 'true';
      }
    }
    if (accepted.has('null') && text.trim() === 'null') {
      repairs.push(`${label(path)}: converted string "null" to null`);
      return null;
    }
  }

  if (accepted.has('array') && actual !== 'array' && actual !== 'null' && actual !== 'other') {
    const arraySchema = branchFor(schema, 'array', root);
    const items = arraySchema ? resolveRef(arraySchema.items, root) : undefined;
    const itemTypes = items ? acceptedTypes(items, root) : undefined;
    // Wrap only when the single element fits the items (or will after repair: "5" into numbers).
    const fits =
      !itemTypes ||
      itemTypes.has(actual) ||
      (actual === 'number' && itemTypes.has('integer')) ||
      (actual === 'string' && (itemTypes.has('number') || itemTypes.has('integer') || itemTypes.has('boolean')));
    if (fits) {
      repairs.push(`${label(path)}: wrapped a single ${actual} into an array`);
      return repairValue([value], schema, root, path, repairs);
    }
  }
  return value;
}

function repairChildren(
  value: unknown,
  actual: JsonType,
  schema: JsonSchema | undefined,
  root: JsonSchema,
  path: string,
  repairs: string[],
): unknown {
  if (!schema) return value;
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    const props = isPlainObject(schema.properties) ? schema.properties : undefined;
    const extra = isPlainObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
    if (!props && !extra) return value;
    let out = obj;
    for (const key in obj) {
      const child = props && key in props ? props[key] : extra;
      if (child === undefined) continue;
      const before = obj[key];
      const after = repairValue(before, child, root, path ? `${path}.${key}` : key, repairs);
      if (after !== before) {
        if (out === obj) out = { ...obj };
        out[key] = after;
      }
    }
    return out;
  }
  if (actual === 'array') {
    const arr = value as unknown[];
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : undefined;
    const items = schema.items;
    if (!prefix && items === undefined) return value;
    let out = arr;
    for (let i = 0; i < arr.length; i++) {
      const child = prefix && i < prefix.length ? prefix[i] : items;
      if (child === undefined || typeof child === 'boolean') continue;
      const before = arr[i];
      const after = repairValue(before, child, root, `${path}[${i}]`, repairs);
      if (after !== before) {
        if (out === arr) out = arr.slice();
        out[i] = after;
      }
    }
    return out;
  }
  return value;
}

// Per schema node; null = accepts anything. Schemas are cached and shared, so this is computed once.
const typesCache = new WeakMap<object, Set<string> | null>();

/** The JSON types a schema accepts; undefined means "anything". */
function acceptedTypes(schemaIn: unknown, root: JsonSchema, depth = 0): Set<string> | undefined {
  const schema = resolveRef(schemaIn, root);
  if (!schema || depth > 8) return undefined;
  const cached = typesCache.get(schema);
  if (cached !== undefined) return cached ?? undefined;
  const types = computeAcceptedTypes(schema, root, depth);
  typesCache.set(schema, types ?? null);
  return types;
}

function computeAcceptedTypes(schema: JsonSchema, root: JsonSchema, depth: number): Set<string> | undefined {
  if (typeof schema.type === 'string') return new Set([schema.type]);
  if (Array.isArray(schema.type)) return new Set(schema.type as string[]);
  const options = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(options)) {
    const all = new Set<string>();
    for (const option of options) {
      const t = acceptedTypes(option, root, depth + 1);
      if (!t) return undefined;
      for (const x of t) all.add(x);
    }
    return all;
  }
  if ('const' in schema) return new Set([jsonTypeOf(schema.const)]);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(jsonTypeOf));
  return undefined;
}

/** The (first) branch of a union that describes values of `type`, for recursing into children. */
function branchFor(schema: JsonSchema, type: JsonType, root: JsonSchema): JsonSchema | undefined {
  const options = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (!Array.isArray(options)) return schema;
  for (const option of options) {
    const resolved = resolveRef(option, root);
    if (resolved && acceptedTypes(resolved, root)?.has(type)) return branchFor(resolved, type, root);
  }
  return undefined;
}

/** Follows local `$ref`s ("#" for recursive schemas, "#/$defs/Name" for reused ones). */
function resolveRef(schemaIn: unknown, root: JsonSchema): JsonSchema | undefined {
  let schema = isPlainObject(schemaIn) ? schemaIn : undefined;
  for (let hops = 0; schema && typeof schema.$ref === 'string' && hops < 8; hops++) {
    const ref: string = schema.$ref;
    if (ref === '#') schema = root;
    else if (ref.startsWith('#/')) {
      let node: unknown = root;
      for (const part of ref.slice(2).split('/'))
        node = isPlainObject(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
      schema = isPlainObject(node) ? node : undefined;
    } else return undefined;
  }
  return schema;
}

function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  if (t === 'object') return 'object';
  if (t === 'number' || t === 'bigint') return 'number';
  if (t === 'boolean') return 'boolean';
  if (t === 'string') return 'string';
  return 'other';
}

const NUMBER_RE = /^\s*-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

function parseNumber(text: string): number | undefined {
  if (!NUMBER_RE.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  const first = trimmed[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function label(path: string): string {
  return path || '(root)';
}
