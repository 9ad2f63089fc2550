// The texts of failed tool calls. The model reads them, so each says what went wrong, why, and
// how to fix it.
import type { z } from 'zod';
import { agentDefaults } from './defaults.js';

export function unknownToolText(name: string, available: readonly string[]): string {
  const list = available.length > 0 ? available.join(', ') : 'none';
  return `Tool "${name}" not found. Available tools: ${list}.`;
}

/**
 * `Invalid arguments for tool "x":` + one line per issue + how to fix + what was received.
 * `validated` is what zod saw (issue paths point into it); `received` is what the model sent.
 */
export function invalidArgumentsText(
  toolName: string,
  issues: readonly z.core.$ZodIssue[],
  validated: unknown,
  received: unknown,
  maxReceivedChars: number = agentDefaults.maxReceivedArgumentsChars,
): string {
  const lines = [`Invalid arguments for tool "${toolName}":`];
  for (const issue of issues)
    lines.push(`- ${formatPath(issue.path)}: ${describeIssue(issue, valueAt(validated, issue.path))}`);
  lines.push(
    '',
    `Call "${toolName}" again with arguments that match its parameter schema: fix the fields listed above and keep the rest.`,
    '',
    'Received arguments:',
    truncate(prettyJson(received), maxReceivedChars),
  );
  return lines.join('\n');
}

/** The text of a thrown value, passed through as is (no invented descriptions). */
export function thrownText(err: unknown): string {
  if (err instanceof Error) return err.message || String(err);
  if (typeof err === 'string') return err;
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') {
    return (err as { message: string }).message;
  }
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

function describeIssue(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected}, received ${describeValue(value)}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, received ${describeValue(value)}`;
    case 'unrecognized_keys':
      return `unexpected ${issue.keys.length === 1 ? 'key' : 'keys'} ${issue.keys.map((k) => `"${k}"`).join(', ')}; remove ${issue.keys.length === 1 ? 'it' : 'them'}`;
    default: {
      // zod messages read "Too small: expected string to have >=1 characters"; keep the "expected" part.
      const message = issue.message.replace(/^[A-Za-z ]+:\s*(?=expected)/, '');
      return `${message}, received ${describeValue(value)}`;
    }
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined (missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array of ${value.length} ${value.length === 1 ? 'item' : 'items'}`;
  switch (typeof value) {
    case 'string':
      return `string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return 'object';
    default:
      return typeof value;
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node;
}

function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (truncated, ${text.length - max} more characters)`;
}
