// How numbers read in every view: tokens with thousands separators, dollars with enough digits to
// show a cheap call, durations that stay short, wall-clock times of events.
export { formatDuration } from '../util/format-duration.js';

/** 1234 -> "1,234" (fixed en-US grouping so output does not depend on the machine's locale). */
export function formatTokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Cents for amounts of a dollar or more; four decimals below, where single calls live. */
export function formatCost(usd: number): string {
  if (!Number.isFinite(usd)) return '$?';
  if (Math.abs(usd) >= 1) return `$${usd.toFixed(2)}`;
  return `$${usd.toFixed(4)}`;
}

/** Local wall-clock time "HH:MM:SS" of an epoch-ms timestamp. */
export function formatClock(ts: number): string {
  const d = new Date(ts);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Local date and time "YYYY-MM-DD HH:MM" for tables of runs. */
export function formatDateTime(ts: number): string {
  const d = new Date(ts);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** "1 turn" / "3 turns". */
export function plural(n: number, word: string, pluralWord = `${word}s`): string {
  return `${formatTokens(n)} ${n === 1 ? word : pluralWord}`;
}

/** An error as shown after its class: "timeout: timeout: ran too long" reads "timeout: ran too long". */
export function withoutClassPrefix(failure: string | undefined, error: string): string {
  if (failure && error.toLowerCase().startsWith(`${failure.toLowerCase()}:`))
    return error.slice(failure.length + 1).trimStart();
  return error;
}
