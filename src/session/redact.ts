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
import { jsonBytes } from './stringify-json.js';

export interface SecretValue {
  /** What the placeholder says: `[REDACTED:<name>]`. */
  name: string;
  value: string;
  /**
   * Known only where the run is conducted (this machine's provider keys, forge tokens, the
   * cluster secret): redacted here, never shipped with a task to another machine.
   */
  local?: boolean;
}

export interface Redactor {
  /** Replaces every secret in a text. */
  text(s: string): string;
  /** A copy of a JSON-like value with every string (and key) redacted; the input is not changed. */
  value<T>(v: T): T;
  /** True when `s` holds a secret (cheaper than comparing text(s) with s). */
  has(s: string): boolean;
  /**
   * value(v) and JSON.stringify(value(v)). When the JSON of `v` shows no trace of a secret (the
   * usual case) that is `v` itself and its JSON, found by searching the JSON bytes for each form
   * of each secret instead of walking every string: about 0.6 µs instead of 2.7 µs for a 1.6 KB
   * session entry.
   */
  serialize<T extends object>(v: T): { value: T; json: string };
  /**
   * The UTF-8 of serialize(v).json, without making the string (session lines). Usually a view
   * that the next serialization overwrites, as jsonBytes() in stringify-json.ts: copy it before then.
   */
  serializeBytes(v: object): Uint8Array;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A redactor for `secrets`, or undefined when none is long enough to redact. A value is also
 * matched in its JSON-escaped form (a secret with a quote inside, quoted again in a tool's JSON
 * output).
 */
export function createRedactor(
  secrets: readonly SecretValue[],
  minChars: number = SESSION_DEFAULTS.redactMinChars,
): Redactor | undefined {
  const forms = new Map<string, string>();
  // How the strings value() would change look once serialized: a string holding a form F shows
  // as JSON-escaped F. (Escaping maps each character on its own, so an F inside a string
  // becomes escaped F inside its JSON, whatever surrounds it.)
  const jsonForms = new Set<string>();
  let lookInJson = true;
  for (const s of secrets) {
    if (typeof s.value !== 'string' || s.value.length < minChars) continue;
    const placeholder = `[REDACTED:${s.name}]`;
    forms.set(s.value, placeholder);
    const escaped = jsonEscape(s.value);
    if (escaped !== s.value) forms.set(escaped, placeholder);
    jsonForms.add(escaped).add(jsonEscape(escaped));
    // A lone surrogate is escaped alone but not as half of a pair: no single form to look for.
    if (/[\ud800-\udfff]/.test(s.value)) lookInJson = false;
  }
  if (forms.size === 0) return undefined;
  // Longest first, so a secret that contains another one is replaced whole.
  const keys = [...forms.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(keys.map(escapeRegExp).join('|'), 'g');
  const probe = new RegExp(pattern.source);
  const text = (s: string): string => (probe.test(s) ? s.replace(pattern, (m) => forms.get(m) ?? m) : s);
  const value = <T>(v: T): T => deepMap(v, text) as T;
  const formBytes = [...jsonForms].map((f) => Buffer.from(f));
  /** What to write for `v` (v itself unless its JSON may hold a secret) and its JSON bytes. */
  const redactToBytes = <T extends object>(v: T): { value: T; bytes: Buffer } => {
    const bytes = jsonBytes(v);
    // A hit may also be a false alarm (a form spanning an escape such as \n): then the exact way.
    if (lookInJson && !formBytes.some((f) => bytes.includes(f))) return { value: v, bytes };
    const redacted = value(v);
    return { value: redacted, bytes: redacted === v ? bytes : jsonBytes(redacted) };
  };
  const serialize = <T extends object>(v: T): { value: T; json: string } => {
    const r = redactToBytes(v);
    return { value: r.value, json: r.bytes.toString('utf8') };
  };
  return { text, value, has: (s) => probe.test(s), serialize, serializeBytes: (v) => redactToBytes(v).bytes };
}

/** `s` as it appears inside a JSON string literal. */
function jsonEscape(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** Applies `fn` to every string of a JSON-like value (object keys too); shares what is unchanged. */
export function deepMap(v: unknown, fn: (s: string) => string, depth = 0): unknown {
  if (typeof v === 'string') return fn(v);
  if (v === null || typeof v !== 'object' || depth > 200) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const m = deepMap(v[i], fn, depth + 1);
      if (m !== v[i]) {
        out ??= v.slice();
        out[i] = m;
      }
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
