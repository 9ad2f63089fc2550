// On/off flags given a value. yargs reads `--dry-run=yes` as "off" without a word, so
// `orchestrate recipe.yaml --dry-run=yes` ran the recipe for real (model calls, spend) and
// `--json=1` printed text to a script that asked for JSON. Only `true`, `false` and, for `--json`
// where the command logs events, `full` are values such a flag takes; anything else is refused.
import type { KnownFlags } from './unknown-flags.js';

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
