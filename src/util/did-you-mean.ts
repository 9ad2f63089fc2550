// "Did you mean" hints: the known name closest to a mistyped one by edit distance, or one a caller
// names as an alias (the recipe's keys as other tools spell them: recipe/suggest.ts). One copy for
// recipe problems, unknown CLI flags and unknown instance keys of a run.

/**
 * Edit distance counting an insertion, deletion, substitution or swap of two neighbouring
 * characters as one edit ("modle" -> "model" is 1), with an early exit past `limit`.
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (prevPrev[j - 2] ?? 0) + 1);
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    prevPrev = prev;
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * The closest candidate to `word`, if one is close enough to be a likely typo. `aliases` maps
 * names used elsewhere to ours; an alias wins when its target is a candidate.
 */
export function didYouMean(
  word: string,
  candidates: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  const alias = Object.hasOwn(aliases, word) ? aliases[word] : undefined;
  if (alias && candidates.includes(alias)) return alias;
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    // Allow about one edit per three characters: "colour"->"color" yes, "foo"->"env" no.
    const limit = Math.max(1, Math.floor(Math.max(word.length, c.length) / 3));
    const d = editDistance(lower, c.toLowerCase(), limit);
    if (d <= limit && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (best === undefined) {
    // A prefix or containment often means a truncated or decorated name (timeout_sec -> timeout).
    best = candidates.find(
      (c) =>
        c.length >= 3 && (lower.startsWith(c.toLowerCase()) || c.toLowerCase().startsWith(lower)) && lower.length >= 3,
    );
  }
  return best;
}

/** A hint line: "did you mean X?" when a candidate is close, else the list of valid names. */
export function suggestionHint(
  word: string,
  candidates: readonly string[],
  what: string,
  aliases: Readonly<Record<string, string>> = {},
): string {
  const best = didYouMean(word, candidates, aliases);
  if (best) return `did you mean "${best}"?`;
  if (candidates.length === 0) return `no ${what} defined`;
  const shown = candidates.slice(0, 12).join(', ');
  return `valid ${what}: ${shown}${candidates.length > 12 ? ', ...' : ''}`;
}
