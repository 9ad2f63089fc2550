// `output: json`: the agent's final text is parsed as JSON and checked against `output_schema`.
// Models often wrap JSON in a ```json fence or add a sentence around it, so the parser looks for
// the fenced block first, then the outermost {...} or [...] span, before giving up.
import { z } from 'zod';

export type OutputCheck = { ok: true; value: unknown } | { ok: false; error: string };

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The JSON value in a final answer: whole text, a ```json fence, or the outermost bracketed span. */
export function extractJson(text: string): OutputCheck {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: 'the final answer is empty; a JSON value was expected' };
  const whole = tryParse(trimmed);
  if (whole.ok) return whole;
  for (const m of trimmed.matchAll(/```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)\r?\n?```/g)) {
    const fenced = tryParse(m[1]!.trim());
    if (fenced.ok) return fenced;
  }
  const starts = ['{', '['].map((c) => trimmed.indexOf(c)).filter((i) => i >= 0);
  if (starts.length) {
    const start = Math.min(...starts);
    const close = trimmed[start] === '{' ? '}' : ']';
    const end = trimmed.lastIndexOf(close);
    if (end > start) {
      const span = tryParse(trimmed.slice(start, end + 1));
      if (span.ok) return span;
    }
  }
  return {
    ok: false,
    error: `the final answer is not valid JSON (it starts with ${JSON.stringify(trimmed.slice(0, 60))})`,
  };
}

const schemaCache = new WeakMap<object, z.ZodType>();

/** Checks a value against a JSON Schema; the error lists each mismatch with its path. */
export function checkJsonSchema(value: unknown, schema: Record<string, unknown>): OutputCheck {
  let zodSchema = schemaCache.get(schema);
  if (!zodSchema) {
    try {
      // The recipe's JSON Schema is a plain object; fromJSONSchema's parameter type is zod's own JSON Schema type.
      zodSchema = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      return { ok: false, error: `output_schema cannot be used: ${(err as Error).message}` };
    }
    schemaCache.set(schema, zodSchema);
  }
  const r = zodSchema.safeParse(value);
  if (r.success) return { ok: true, value };
  const problems = r.error.issues
    .slice(0, 8)
    .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  const more = r.error.issues.length > 8 ? ` (and ${r.error.issues.length - 8} more)` : '';
  return { ok: false, error: `the JSON does not match output_schema: ${problems.join('; ')}${more}` };
}

/** Parses and validates a final answer for `output: json`. */
export function parseJsonOutput(text: string, schema?: Record<string, unknown>): OutputCheck {
  const parsed = extractJson(text);
  if (!parsed.ok || !schema) return parsed;
  return checkJsonSchema(parsed.value, schema);
}

/** The follow-up sent back to the agent when its JSON answer was unusable. */
export function outputFixPrompt(error: string, schema?: Record<string, unknown>): string {
  const schemaText = schema ? `\nThe answer must match this JSON Schema:\n${JSON.stringify(schema, null, 2)}` : '';
  return `Your final answer could not be used: ${error}.\nReply again with only the JSON value (no prose, no code fence).${schemaText}`;
}
