// Paths no file system can hold, found while validating: a NUL byte (the kernel's end of a path,
// so Node refuses it and the run failed only after creating its folder), a path longer than
// PATH_MAX or a folder name longer than NAME_MAX. Checked in cwd: (tasks and defaults), writes:
// globs, input defaults and literal for_each items (they become paths through ${{ }} and name
// instance folders), so `orchestrate validate` and a run report them with file:line:col before
// any run folder exists.
import type { PendingProblem } from './problems.js';
import { isRecord } from '../util/unknown-value.js';

type Path = (string | number)[];

const PATH_MAX = 4095;
const NAME_MAX = 255;

/** Why `value` cannot be (part of) a path, or undefined; `offset` points at the culprit. */
export function impossiblePath(value: string, isPath: boolean): { why: string; offset: number } | undefined {
  const nul = value.indexOf('\0');
  if (nul >= 0) return { why: 'contains a NUL byte (\\0), which no file name can hold', offset: nul };
  if (!isPath) return undefined;
  if (Buffer.byteLength(value) > PATH_MAX)
    return { why: `is ${Buffer.byteLength(value)} bytes long, more than a path can be (${PATH_MAX})`, offset: 0 };
  let at = 0;
  for (const part of value.split('/')) {
    if (Buffer.byteLength(part) > NAME_MAX)
      return {
        why: `has a folder or file name of ${Buffer.byteLength(part)} bytes, more than a name can be (${NAME_MAX})`,
        offset: at,
      };
    at += part.length + 1;
  }
  return undefined;
}

export function checkImpossiblePaths(raw: Record<string, unknown>): PendingProblem[] {
  const out: PendingProblem[] = [];
  const check = (value: unknown, path: Path, what: string, isPath: boolean): void => {
    if (typeof value !== 'string') return;
    const bad = impossiblePath(value, isPath);
    if (!bad) return;
    out.push({
      code: 'bad_path',
      path,
      offset: bad.offset,
      message: `${what} ${bad.why}`,
      hint: 'write the path as plain text without control characters (a "\\0" in a double-quoted YAML string is a NUL byte)',
    });
  };
  if (isRecord(raw.defaults)) check(raw.defaults.cwd, ['defaults', 'cwd'], 'defaults.cwd', true);
  if (isRecord(raw.inputs)) {
    for (const [name, def] of Object.entries(raw.inputs)) {
      if (!isRecord(def)) continue;
      const path: Path = ['inputs', name, 'default'];
      if (Array.isArray(def.default))
        for (const [i, v] of def.default.entries()) check(v, [...path, i], `the default of input "${name}"`, false);
      else check(def.default, path, `the default of input "${name}"`, false);
    }
  }
  if (Array.isArray(raw.tasks)) {
    raw.tasks.forEach((t, index) => {
      if (!isRecord(t)) return;
      const who = typeof t.id === 'string' ? `task "${t.id}"` : `tasks[${index}]`;
      check(t.cwd, ['tasks', index, 'cwd'], `${who} cwd`, true);
      if (Array.isArray(t.writes))
        for (const [i, w] of t.writes.entries()) check(w, ['tasks', index, 'writes', i], `${who} writes[${i}]`, false);
      if (Array.isArray(t.for_each))
        for (const [i, item] of t.for_each.entries())
          check(item, ['tasks', index, 'for_each', i], `${who} for_each item ${i + 1}`, false);
    });
  }
  return out;
}
