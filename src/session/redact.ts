// Redaction of secret values from what is persisted or printed: session files, run logs,
// result files, reports and terminal output. A redactor is built from named values (an API key,
// the environment variables a recipe lists under `secrets:`) and replaces every occurrence with
// `[REDACTED:<name>]`. It works on text and, for JSON, on every string of a value before it is
// serialized (replacing inside serialized JSON could break an escape sequence).
//
// Limits: values shorter than SESSION_DEFAULTS.redactMinChars are not redacted (a 2-character
// "secret" would garble every text); a secret transformed before it is written (base64, split
// across two strings, hashed) is not recognized.
import { SESSION_DEFAULTS } from './defaults.js';

export interface SecretValue {
  /** What the placeholder says: `[REDACTED:<name>]`. */
  name: string;
  value: string;
}

export interface Redactor {
  /** Replaces every secret in a text. */
  text(s: string): string;
  /** A copy of a JSON-like value with every string (and key) redacted; the input is not changed. */
  value<T>(v: T): T;
  /** True when `s` holds a secret (cheaper than comparing text(s) with s). */
  has(s: string): boolean;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A redactor for `secrets`, or undefined when none is long enough to redact. A value is also
 * matched in its JSON-escaped form (a secret with a quote inside, quoted again in a tool's JSON
 * output).
 */
export function createRedactor(secrets: readonly SecretValue[], minChars: number = SESSION_DEFAULTS.redactMinChars): Redactor | undefined {
  const forms = new Map<string, string>();
  for (const s of secrets) {
    if (typeof s.value !== 'string' || s.value.length < minChars) continue;
    const placeholder = `[REDACTED:${s.name}]`;
    forms.set(s.value, placeholder);
    const escaped = JSON.stringify(s.value).slice(1, -1);
    if (escaped !== s.value) forms.set(escaped, placeholder);
  }
  if (forms.size === 0) return undefined;
  // Longest first, so a secret that contains another one is replaced whole.
  const keys = [...forms.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(keys.map(escapeRegExp).join('|'), 'g');
  const probe = new RegExp(pattern.source);
  const text = (s: string): string => (probe.test(s) ? s.replace(pattern, (m) => forms.get(m) ?? m) : s);
  const value = <T>(v: T): T => deepMap(v, text) as T;
  return { text, value, has: (s) => probe.test(s) };
}

/** Applies `fn` to every string of a JSON-like value (object keys too); shares what is unchanged. */
export function deepMap(v: unknown, fn: (s: string) => string, depth = 0): unknown {
  if (typeof v === 'string') return fn(v);
  if (v === null || typeof v !== 'object' || depth > 200) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const m = deepMap(v[i], fn, depth + 1);
      if (m !== v[i]) (out ??= v.slice())[i] = m;
    }
    return out ?? v;
  }
  let out: Record<string, unknown> | undefined;
  const entries = Object.entries(v as Record<string, unknown>);
  for (const [k, x] of entries) {
    const mk = fn(k);
    const mx = deepMap(x, fn, depth + 1);
    if (mk !== k || mx !== x) {
      out ??= { ...(v as Record<string, unknown>) };
      if (mk !== k) delete out[k];
      out[mk] = mx;
    }
  }
  return out ?? v;
}
