// How long something took, as every view and message shows it: short, and with the same number
// of characters for neighbouring values (1m04s, not 1m4s) so columns of durations stay aligned.

/** 850 -> "850ms", 1234 -> "1.2s", 64000 -> "1m04s", 3720000 -> "1h02m"; "?" for a negative or non-finite value. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${(ms / 1_000).toFixed(1)}s`;
  const totalS = Math.floor(ms / 1_000);
  if (totalS < 60) return `${totalS}s`;
  const m = Math.floor(totalS / 60);
  const s = totalS % 60;
  if (m < 60) return `${m}m${String(s).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  return `${h}h${String(m % 60).padStart(2, '0')}m`;
}
