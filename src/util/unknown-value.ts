// Narrowing a value whose shape is not known yet (parsed YAML or JSON, a message from another
// process, a tool's arguments) before reading its fields.

/** A plain object with string keys: not null, not an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value when it is a string, else undefined. */
export function stringOf(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
