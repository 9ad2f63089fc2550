// Unknown flags with a "did you mean". yargs' strict mode names an unknown flag, but not the flag
// that was meant, and a mistyped flag can also eat the next word as its value ("--dryrun
// recipe.yaml" then reads as a missing recipe). Reading argv ourselves finds the real mistake.
import { didYouMean } from '../recipe/suggest.js';

/** What the parser knows of the command that failed (yargs' getOptions(), the parts used here). */
export interface KnownFlags {
  /** Every declared option and positional name. */
  key: Record<string, unknown>;
  alias: Record<string, readonly string[]>;
  boolean: readonly string[];
}

const camel = (s: string): string => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The flags on the command line (before `--`) that the command does not declare, as typed (without dashes). */
export function unknownFlags(argv: readonly string[], known: KnownFlags): string[] {
  const names = new Set<string>();
  for (const [k, aliases] of Object.entries(known.alias)) for (const a of [k, ...aliases]) names.add(a);
  for (const k of Object.keys(known.key)) names.add(k);
  const isKnown = (name: string): boolean =>
    names.has(name) || names.has(camel(name)) || (name.startsWith('no-') && names.has(name.slice(3)));
  const unknown: string[] = [];
  for (const arg of argv) {
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-' || /^-\d/.test(arg)) continue; // a value, stdin, a negative number
    const name = arg.replace(/^--?/, '').split('=')[0] ?? '';
    // Short flags may be bundled (-hc): each letter is a flag.
    const parts = arg.startsWith('--') || name.length <= 1 ? [name] : [...name];
    for (const p of parts) if (p !== '' && !isKnown(p) && !unknown.includes(p)) unknown.push(p);
  }
  return unknown;
}

/** The long flag closest to `name`, as it would be typed ("--dry-run"), or undefined. */
export function suggestFlag(name: string, known: KnownFlags): string | undefined {
  const long = Object.keys(known.key).filter((k) => k.length > 1 && !/[A-Z]/.test(k));
  const candidates = [...long, ...known.boolean.filter((k) => long.includes(k)).map((k) => `no-${k}`)];
  const guess = didYouMean(name, candidates);
  return guess === undefined ? undefined : `--${guess}`;
}

/** "Unknown argument: x" plus a hint for each flag a suggestion exists for; undefined when every flag is known. */
export function unknownFlagsMessage(argv: readonly string[], known: KnownFlags): string | undefined {
  const unknown = unknownFlags(argv, known);
  if (unknown.length === 0) return undefined;
  const lines = [`Unknown argument${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`];
  for (const name of unknown) {
    const guess = suggestFlag(name, known);
    if (guess) lines.push(`  hint: did you mean ${guess}? (not --${name})`);
  }
  return lines.join('\n');
}
