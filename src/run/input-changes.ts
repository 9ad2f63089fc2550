// What changed in a run's trusted inputs since they were captured (run-inputs.ts): each file that
// was modified, deleted, or created where the capture found none, with a short diff, so a resume
// can name what it is not using (an agent that rewrote recipe.yaml to `sandbox: none` is named).
// The diff goes to the terminal and run.jsonl, and a settings file may hold a token the run does
// not know as a secret: the value of every key named like a credential is masked.
import { readFileSync } from 'node:fs';
import { type CapturedInput, capturedInputs, type InputsManifest } from './run-inputs.js';
import { liveInputFiles } from '../util/input-files.js';
import { unifiedDiff } from '../tools/diff.js';
import { looksLikeCredential } from './secrets.js';

export interface InputChange {
  /** The original file (absolute). */
  file: string;
  change: 'modified' | 'created' | 'deleted';
  /** A few changed lines (unified diff without its header); absent for binary files. */
  diff?: string;
}

/** Changed lines shown per file: enough to see what was changed, short enough for a terminal. */
const DIFF_LINES = 12;

function isText(b: Buffer): boolean {
  return !b.includes(0);
}

// `KEY: value`, `"KEY": "value"`, `KEY=value`: the key, then the value to its end.
const KEY_VALUE = /^([+-]\s*["']?)([\w.-]+)(["']?\s*[:=]\s*)(.+)$/;

/** A diff line with the value of a credential-named key masked. */
export function maskCredential(line: string): string {
  const m = KEY_VALUE.exec(line);
  if (!m || !looksLikeCredential(m[2]!)) return line;
  return `${m[1]}${m[2]}${m[3]}[masked]`;
}

/** The changed lines between two texts, at most DIFF_LINES of them, credentials masked. */
export function shortDiff(before: string, after: string): string {
  const lines = unifiedDiff(before, after, { context: 0 })
    .diff.split('\n')
    .filter((l) => !l.startsWith('--- ') && !l.startsWith('+++ ') && !l.startsWith('@@') && l !== '')
    .map(maskCredential);
  if (lines.length <= DIFF_LINES) return lines.join('\n');
  return [...lines.slice(0, DIFF_LINES), `… ${lines.length - DIFF_LINES} more changed lines`].join('\n');
}

function changeOf(f: CapturedInput): InputChange | undefined {
  const now = liveInputFiles.read(f.path);
  if (!f.copy) return now === undefined ? undefined : { file: f.path, change: 'created', ...textDiff(undefined, now) };
  if (now === undefined) return { file: f.path, change: 'deleted' };
  const then = readFileSync(f.copy);
  if (then.equals(now)) return undefined;
  return { file: f.path, change: 'modified', ...textDiff(then, now) };
}

function textDiff(then: Buffer | undefined, now: Buffer): { diff?: string } {
  if (!isText(now) || (then && !isText(then))) return {};
  return { diff: shortDiff(then?.toString('utf8') ?? '', now.toString('utf8')) };
}

/** The captured inputs that differ from the files as they are now. */
export function changedInputs(runDir: string, manifest: InputsManifest): InputChange[] {
  return capturedInputs(runDir, manifest).flatMap((f) => changeOf(f) ?? []);
}

/** The changes as lines for a terminal, each file named by `shown` (e.g. relative to the working folder). */
export function describeInputChanges(changes: readonly InputChange[], shown: (file: string) => string): string {
  return changes
    .map((c) => {
      const head = `  ${shown(c.file)}: ${c.change}`;
      return c.diff ? `${head}\n${c.diff.replace(/^/gm, '      ')}` : head;
    })
    .join('\n');
}
