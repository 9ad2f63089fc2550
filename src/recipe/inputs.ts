// Recipe inputs: their declared types, and values from defaults and `--set key=value`.
import type { RecipeDocument } from './schema.js';
import { suggestionHint } from './suggest.js';

export type InputType = 'string' | 'number' | 'boolean' | 'list';

export interface InputSpec {
  type: InputType;
  default?: unknown;
  required: boolean;
  description?: string;
}

/** A problem with an input value; `name` is the input it concerns (for positions). */
export interface InputIssue {
  name?: string;
  /** A required input has no value (only `run` insists; `validate` does not). */
  missing?: boolean;
  message: string;
  hint?: string;
}

export function inputSpecs(doc: RecipeDocument): Record<string, InputSpec> {
  const out: Record<string, InputSpec> = {};
  for (const [name, def] of Object.entries(doc.inputs ?? {})) {
    const inferred: InputType = Array.isArray(def.default)
      ? 'list'
      : typeof def.default === 'number'
        ? 'number'
        : typeof def.default === 'boolean'
          ? 'boolean'
          : 'string';
    const spec: InputSpec = { type: def.type ?? inferred, required: def.required ?? false };
    if (def.default !== undefined) spec.default = def.default;
    if (def.description !== undefined) spec.description = def.description;
    out[name] = spec;
  }
  return out;
}

/** Converts command-line text to the input's type: "3" -> 3, "yes" -> true, "a,b" or JSON -> list. */
export function coerceInput(
  spec: InputSpec,
  text: string,
): { ok: true; value: unknown } | { ok: false; message: string } {
  switch (spec.type) {
    case 'string':
      return { ok: true, value: text };
    case 'number': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n)
        ? { ok: true, value: n }
        : { ok: false, message: `expects a number, got "${text}"` };
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      if (['true', 'yes', '1', 'on'].includes(t)) return { ok: true, value: true };
      if (['false', 'no', '0', 'off'].includes(t)) return { ok: true, value: false };
      return { ok: false, message: `expects true or false, got "${text}"` };
    }
    case 'list': {
      if (text.trim().startsWith('[')) {
        try {
          const v: unknown = JSON.parse(text);
          // A NUL byte (JSON \u0000) cannot be part of a path or a file name an input may become.
          if (Array.isArray(v) && v.some((x) => typeof x === 'string' && x.includes('\0')))
            return { ok: false, message: 'has an item with a NUL byte (\\u0000), which no path or file name can hold' };
          if (Array.isArray(v)) return { ok: true, value: v };
        } catch {
          // fall through to the message below
        }
        return { ok: false, message: `expects a list: a,b,c or a JSON array, got "${text}"` };
      }
      return {
        ok: true,
        value: text
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      };
    }
  }
}

/** Input values: defaults, then each `key=value` of --set in order (the last one wins). */
export function resolveInputs(
  specs: Record<string, InputSpec>,
  sets: readonly string[],
): { values: Record<string, unknown>; issues: InputIssue[] } {
  const values: Record<string, unknown> = {};
  const issues: InputIssue[] = [];
  for (const [name, spec] of Object.entries(specs)) if (spec.default !== undefined) values[name] = spec.default;
  const names = Object.keys(specs);
  for (const assignment of sets) {
    const eq = assignment.indexOf('=');
    if (eq <= 0) {
      issues.push({
        message: `--set ${assignment}: expected key=value`,
        hint: names.length ? `inputs: ${names.join(', ')}` : undefined,
      });
      continue;
    }
    const name = assignment.slice(0, eq).trim();
    const text = assignment.slice(eq + 1);
    const spec = specs[name];
    if (!spec) {
      issues.push({
        message: `--set ${name}: the recipe has no input "${name}"`,
        hint: names.length ? suggestionHint(name, names, 'inputs') : 'this recipe declares no inputs',
      });
      continue;
    }
    const v = coerceInput(spec, text);
    if (v.ok) values[name] = v.value;
    else issues.push({ name, message: `--set ${name}: input "${name}" ${v.message}` });
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.required && values[name] === undefined) {
      issues.push({
        name,
        missing: true,
        message: `input "${name}" is required`,
        hint: `pass --set ${name}=<${spec.type}>${spec.description ? ` (${spec.description})` : ''}`,
      });
    }
  }
  return { values, issues };
}
