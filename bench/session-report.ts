// The session bench's report: one table per session size (ours, the reference, the naive floor
// and their ratios) and one line per goal of issue #32 with now/goal as a ratio.

export type Sample = Record<string, number> & { peakRssMB: number };
export type Results = Record<string, Sample | { error: string }>;

const fmt = (v: number | undefined, digits = 1): string =>
  v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits);

export function getter(results: Results): (name: string) => Sample | undefined {
  return (name) => {
    const r = results[name];
    return r && !('error' in r) ? r : undefined;
  };
}

export function printSize(_size: number, results: Results): void {
  for (const [name, r] of Object.entries(results)) if ('error' in r) console.log(`  ${name}: FAILED ${r.error}`);
  const get = getter(results);
  const base = get('baseline')?.peakRssMB ?? 0;
  console.log(`baseline process (node + tsx, nothing loaded): peak RSS ${fmt(base, 0)} MB`);
  console.log(
    `write primitive, 1-2 KB lines: fd kept open + writeSync ${fmt(get('raw-writeSync')?.usPerEntry, 2)} µs/line, appendFileSync ${fmt(get('raw-appendFileSync')?.usPerEntry, 2)} µs/line`,
  );
  const rows: string[][] = [['phase', 'ours', 'reference', 'floor', 'ref/ours', 'ours/floor']];
  const row = (
    label: string,
    o: number | undefined,
    r: number | undefined,
    f: number | undefined,
    digits = 1,
  ): void => {
    rows.push([
      label,
      fmt(o, digits),
      fmt(r, digits),
      fmt(f, digits),
      o && r ? `${(r / o).toFixed(2)}x` : '-',
      o && f ? `${(o / f).toFixed(2)}x` : '-',
    ]);
  };
  const plain = get('append-plain')?.usPerEntry;
  row(
    'append µs/entry (floor: a plain store)',
    get('append-ours')?.usPerEntry,
    get('append-ref')?.usPerEntry,
    plain,
    2,
  );
  row(
    '  durable on return µs/entry',
    get('append-ours-immediate')?.usPerEntry,
    get('append-ref')?.usPerEntry,
    plain,
    2,
  );
  row(
    '  with the secret redactor µs/entry',
    get('append-ours-redact')?.usPerEntry,
    get('append-ref')?.usPerEntry,
    plain,
    2,
  );
  row('  no write (lines dropped) µs/entry', get('append-ours-nowrite')?.usPerEntry, undefined, undefined, 2);
  row('  JSON.stringify + keep, no store', get('stringify-keep')?.usPerEntry, undefined, undefined, 2);
  row('open + rebuild ms', get('open-ours')?.totalMs, get('open-ref')?.totalMs, get('open-floor')?.totalMs);
  row(
    '  of which rebuild ms',
    get('open-ours')?.rebuildMs,
    get('open-ref')?.rebuildMs,
    get('open-floor')?.rebuildMs,
    2,
  );
  row(
    'open + rebuild peak RSS MB',
    get('open-ours')?.peakRssMB,
    get('open-ref')?.peakRssMB,
    get('open-floor')?.peakRssMB,
    0,
  );
  row(
    'open + rebuild, compacted ms',
    get('open-ours-compacted')?.totalMs,
    get('open-ref-compacted')?.totalMs,
    undefined,
  );
  row(
    '  compacted peak RSS MB',
    get('open-ours-compacted')?.peakRssMB,
    get('open-ref-compacted')?.peakRssMB,
    undefined,
    0,
  );
  row(
    'rewind + 3 + rebuild, cold ms',
    get('fork-ours')?.firstMs,
    get('fork-ref')?.firstMs,
    get('fork-floor')?.firstMs,
    3,
  );
  row(
    'rewind + 3 + rebuild, median ms',
    get('fork-ours')?.medianMs,
    get('fork-ref')?.medianMs,
    get('fork-floor')?.medianMs,
    3,
  );
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
  const check = ['open-ours', 'open-ref', 'open-floor', 'open-ours-compacted', 'open-ref-compacted'].map(
    (n) => get(n)?.messages ?? '-',
  );
  console.log(`context sizes (ours/ref/floor plain, ours/ref compacted): ${check.join(' / ')} messages`);
}

/**
 * One line per goal of issue #32's session rows: now, goal, now/goal (<= 1 is met), and the
 * reference and the floor from the same run.
 */
export function printGoals(all: Map<number, Results>): void {
  console.log('\ngoals (issue #32), now/goal <= 1.00 is met; pi and the floor from this run:');
  const line = (label: string, now: number | undefined, goal: number, unit: string, ref?: string): void => {
    const ratio = now === undefined ? undefined : now / goal;
    const verdict = ratio === undefined ? 'n/a ' : ratio <= 1 ? 'met ' : 'MISS';
    console.log(
      `  ${verdict} ${label}: now ${fmt(now, 3)} ${unit}, goal ${fmt(goal, goal < 10 ? 2 : 1)} ${unit}, now/goal ${fmt(ratio, 2)}${ref ? `; ${ref}` : ''}`,
    );
  };
  for (const [size, results] of all) {
    const get = getter(results);
    const k = `${size / 1000}k`;
    const o = get('open-ours');
    const r = get('open-ref');
    const f = get('open-floor');
    // Speed-up goal: ours <= ref / 5, expressed as ours / (ref / 5).
    if (o && r)
      line(
        `open + rebuild at ${k}, ms (goal: 1/5 of pi's)`,
        o.totalMs,
        r.totalMs! / 5,
        'ms',
        `pi ${fmt(r.totalMs)} ms (${(r.totalMs! / o.totalMs!).toFixed(2)}x), floor ${fmt(f?.totalMs)} ms`,
      );
    if (o && r && size <= 10_000)
      line(
        `open + rebuild peak RSS at ${k}, MB (goal: half of pi's)`,
        o.peakRssMB,
        r.peakRssMB / 2,
        'MB',
        `pi ${fmt(r.peakRssMB, 0)} MB (ours ${((o.peakRssMB / r.peakRssMB) * 100).toFixed(0)} %), floor ${fmt(f?.peakRssMB, 0)} MB`,
      );
    const fo = get('fork-ours');
    const fr = get('fork-ref');
    const ff = get('fork-floor');
    line(
      `rewind + append 3 + rebuild, cold, at ${k}`,
      fo?.firstMs,
      1,
      'ms',
      `pi ${fmt(fr?.firstMs, 3)} ms, floor ${fmt(ff?.firstMs, 3)} ms; process CPU time (every thread, GC helpers too) ours ${fmt(fo?.firstCpuMs, 3)} ms, pi ${fmt(fr?.firstCpuMs, 3)} ms; warm median ours ${fmt(fo?.medianMs, 3)} ms`,
    );
    if (size >= 100_000)
      line(
        `append at ${k}, µs/entry`,
        get('append-ours')?.usPerEntry,
        10,
        'µs',
        `pi ${fmt(get('append-ref')?.usPerEntry, 2)} µs, floor (a plain store) ${fmt(get('append-plain')?.usPerEntry, 2)} µs`,
      );
  }
}
