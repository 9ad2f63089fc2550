// Flag values yargs would misread without a word. On/off flags given a value: yargs reads
// `--dry-run=yes` as "off", so `orchestrate recipe.yaml --dry-run=yes` ran the recipe for real
// (model calls, spend) and `--json=1` printed text to a script that asked for JSON. Only `true`,
// `false` and, for `--json` where the command logs events, `full` are values such a flag takes.
// Number flags: `--budget-usd` with no value was dropped (the run went on with the recipe's budget)
// and `--concurrency abc` was reported as "got NaN"; both now name the flag and what was typed.
// Also: one-value flags given twice (givenOnce) and a recipe named `-` (noStdinRecipe).
import type { KnownFlags } from './unknown-flags.js';

/** What the parser knows of number flags (yargs' getOptions()), beside the KnownFlags. */
export interface KnownNumberFlags {
  number: readonly string[];
}

/** The first problem with a flag value as typed in `argv` (on/off given a value, number without one); else undefined. */
export function flagValueMessage(argv: readonly string[], known: KnownFlags & KnownNumberFlags): string | undefined {
  return booleanFlagValueMessage(argv, known) ?? numberFlagValueMessage(argv, known) ?? missingNameMessage(argv, known);
}

/**
 * Flags whose value names something (an instance, a task, a folder, a model) and never starts with
 * a dash. Without one yargs hands over '': `cancel <run> --instance` asked for instance "" and
 * `show <run> --instance` said '"" matches 4 instances'.
 */
const NAMING_FLAGS = [
  'instance',
  'task',
  'run-dir',
  'model',
  'provider',
  // not 'rebase': `publish <run> --rebase --dry-run` previews every changeset (its KEY is optional)
  'redis',
  'workdir',
  'recipe',
  'cwd',
  'session',
  'session-dir',
  'script',
];

/** A naming flag (NAMING_FLAGS) the command takes, typed last or right before another flag. */
export function missingNameMessage(argv: readonly string[], known: Pick<KnownFlags, 'key'>): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') break;
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : '';
    if (!NAMING_FLAGS.includes(name) || !(name in known.key)) continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('-'))
      return `--${name} needs a value\n  hint: write it as --${name} ${name === 'instance' ? 'KEY' : name === 'task' ? 'TASK' : 'VALUE'}`;
  }
  return undefined;
}

/** A number flag with no value after it, or a value that is not a number, as typed. */
export function numberFlagValueMessage(argv: readonly string[], known: KnownNumberFlags): string | undefined {
  const isNumber = (name: string): boolean => known.number.includes(name) || known.number.includes(camel(name));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') break;
    const m = /^--([^=]+)(=(.*))?$/s.exec(arg);
    if (!m || !isNumber(m[1] ?? '')) continue;
    const name = m[1] ?? '';
    const next = argv[i + 1];
    // A negative number is a value, not a flag (the command's own check says whether it is allowed).
    const value = m[2] !== undefined ? m[3] : next !== undefined && !/^-(?!\d|\.\d)/.test(next) ? next : undefined;
    if (value === undefined) return `--${name} needs a value\n  hint: write it as --${name} N`;
    if (value.trim() === '' || Number.isNaN(Number(value)))
      return `--${name} takes a number (got "${value}")\n  hint: write it as --${name} N, e.g. --${name} 2`;
  }
  return undefined;
}

const camel = (s: string): string => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The message for the first on/off flag given a value it does not take, as typed in `argv`; else undefined. */
export function booleanFlagValueMessage(argv: readonly string[], known: KnownFlags): string | undefined {
  const isBoolean = (name: string): boolean => known.boolean.includes(name) || known.boolean.includes(camel(name));
  for (const arg of argv) {
    if (arg === '--') break;
    const m = /^--([^=]+)=(.*)$/s.exec(arg);
    if (!m) continue;
    const [, name = '', value = ''] = m;
    const base = name.startsWith('no-') && !isBoolean(name) ? name.slice(3) : name;
    if (!isBoolean(base) || value === 'true' || value === 'false') continue;
    // `--json=full` is `--json` plus the message deltas of a run's events (main.ts spells it out).
    if (name === 'json' && value === 'full') {
      if (known.boolean.includes('full-events')) continue;
      return '--json=full (every run event, message deltas included) is for a recipe run and resume\n  hint: this command takes --json alone';
    }
    return `--${name} takes no value (got ${arg})\n  hint: write --${name} alone${name === base ? ` (or --no-${base} to turn it off)` : ''}`;
  }
  return undefined;
}

/**
 * A yargs check refusing `names` given more than once: yargs then hands over an array, which a
 * command reading one value misread (`cancel --instance a --instance b` cancelled the whole run).
 */
export function givenOnce(...names: string[]): (args: Record<string, unknown>) => true {
  return (args) => {
    for (const name of names)
      if (Array.isArray(args[name]))
        throw new Error(`--${name} was given more than once (${args[name].join(', ')}); give it once per command`);
    return true;
  };
}

/**
 * `-` (yargs hands it over as '') named the current folder: "this is a folder, not a recipe file,
 * e.g. /recipe.yaml". A recipe is read from a file, whose folder its agent files and script are in.
 */
export function noStdinRecipe(recipe: unknown): void {
  if (recipe === '' || recipe === '-')
    throw new Error(
      'a recipe is read from its file, not from stdin (-): give its path; its agent files and script are found beside it',
    );
}
