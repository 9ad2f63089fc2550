// Locating edit targets: exact first, then in a normalized space that forgives what models
// commonly get wrong (trailing whitespace, smart quotes, dashes, special spaces, compatibility
// forms, CRLF). Every normalized character remembers the original span it came from, so a
// fuzzy match is mapped back and the edit is spliced at the original coordinates.

/** Normalized text plus, for each of its UTF-16 units, the original [start, end) it came from. */
export interface NormalizedText {
  text: string;
  starts: number[];
  ends: number[];
}

const COMBINING_MARK = /\p{M}/u;

/** Quote, dash and space variants mapped to ASCII (applied after NFKC). */
function mapChar(ch: string): string {
  const c = ch.charCodeAt(0);
  if (c >= 0x2018 && c <= 0x201b) return "'";
  if (c >= 0x201c && c <= 0x201f) return '"';
  if ((c >= 0x2010 && c <= 0x2015) || c === 0x2212) return '-';
  if (c === 0x00a0 || (c >= 0x2002 && c <= 0x200a) || c === 0x202f || c === 0x205f || c === 0x3000) return ' ';
  return ch;
}

function isHorizontalSpace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\v' || ch === '\f';
}

/** Normalizes for matching and records the original span of every output unit. */
export function normalizeForMatch(original: string): NormalizedText {
  const out: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  // Whitespace is held back until we know it is not at the end of a line.
  let held: { ch: string; start: number; end: number }[] = [];
  const emit = (ch: string, start: number, end: number): void => {
    if (isHorizontalSpace(ch)) {
      held.push({ ch, start, end });
      return;
    }
    if (ch === '\n') held = [];
    else if (held.length > 0) {
      for (const h of held) {
        out.push(h.ch);
        starts.push(h.start);
        ends.push(h.end);
      }
      held = [];
    }
    out.push(ch);
    starts.push(start);
    ends.push(end);
  };

  const n = original.length;
  for (let i = 0; i < n; ) {
    const code = original.charCodeAt(i);
    if (code === 13 && original.charCodeAt(i + 1) === 10) {
      emit('\n', i, i + 2); // CRLF counts as one newline covering both characters
      i += 2;
      continue;
    }
    // ASCII maps to itself unless a combining mark follows (marks start at U+0300).
    if (code < 0x80 && !(original.charCodeAt(i + 1) >= 0x300)) {
      emit(original[i] ?? '', i, i + 1);
      i++;
      continue;
    }
    // A base character with its combining marks normalizes as one unit.
    let j = i + (code >= 0xd800 && code <= 0xdbff && i + 1 < n ? 2 : 1);
    while (j < n) {
      const next = original.codePointAt(j) ?? 0;
      const ch = String.fromCodePoint(next);
      if (!COMBINING_MARK.test(ch)) break;
      j += ch.length;
    }
    const normalized = original.slice(i, j).normalize('NFKC');
    for (const unit of normalized) {
      const mapped = mapChar(unit);
      for (let k = 0; k < mapped.length; k++) emit(mapped[k] ?? '', i, j);
    }
    i = j;
  }
  return { text: out.join(''), starts, ends };
}

/** The normalized form of a search string (no position map needed). */
export function normalizeText(text: string): string {
  return normalizeForMatch(text).text;
}

/** Every start index of `needle` in `haystack`, overlapping occurrences included. */
export function findAll(haystack: string, needle: string): number[] {
  const found: number[] = [];
  if (needle === '') return found;
  for (let p = haystack.indexOf(needle); p !== -1; p = haystack.indexOf(needle, p + 1)) found.push(p);
  return found;
}

export type MatchResult =
  | { kind: 'unique'; start: number; end: number; fuzzy: boolean }
  | { kind: 'ambiguous'; starts: number[]; fuzzy: boolean }
  | { kind: 'none' };

/**
 * Finds `oldText` in `content` (original coordinates). An exact unique hit wins even when the
 * normalized space holds look-alikes; duplicates at the first level that finds any are ambiguous.
 */
export function locate(content: string, oldText: string, normalized: () => NormalizedText): MatchResult {
  const candidates = [oldText];
  // In a CRLF file the model usually sends LF; try the same text with the file's line endings.
  if (content.includes('\r\n')) {
    const crlf = oldText.replace(/\r?\n/g, '\r\n');
    if (crlf !== oldText) candidates.push(crlf);
  }
  for (const candidate of candidates) {
    const hits = findAll(content, candidate);
    if (hits.length === 1)
      return { kind: 'unique', start: hits[0] ?? 0, end: (hits[0] ?? 0) + candidate.length, fuzzy: false };
    if (hits.length > 1) return { kind: 'ambiguous', starts: hits, fuzzy: false };
  }
  const needle = normalizeText(oldText);
  if (needle === '') return { kind: 'none' };
  const norm = normalized();
  const hits = findAll(norm.text, needle);
  if (hits.length === 0) return { kind: 'none' };
  if (hits.length > 1) return { kind: 'ambiguous', starts: hits.map((h) => norm.starts[h] ?? 0), fuzzy: true };
  const h = hits[0] ?? 0;
  return { kind: 'unique', start: norm.starts[h] ?? 0, end: norm.ends[h + needle.length - 1] ?? 0, fuzzy: true };
}

/** 1-based line numbers of the given offsets (sorted input not required). */
export function lineNumbersAt(content: string, offsets: number[]): number[] {
  const order = offsets.map((o, i) => ({ o, i })).sort((a, b) => a.o - b.o);
  const result = new Array<number>(offsets.length);
  let line = 1;
  let pos = 0;
  for (const { o, i } of order) {
    for (let nl = content.indexOf('\n', pos); nl !== -1 && nl < o; nl = content.indexOf('\n', nl + 1)) {
      line++;
      pos = nl + 1;
    }
    result[i] = line;
  }
  return result;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice similarity of two strings over character bigrams (0..1). */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const ga = bigrams(a);
  const gb = bigrams(b);
  let shared = 0;
  for (const [g, n] of ga) shared += Math.min(n, gb.get(g) ?? 0);
  return (2 * shared) / (a.length - 1 + (b.length - 1));
}

/** The file line most similar to the first non-blank line of `oldText`, if reasonably close. */
export function closestLine(
  content: string,
  oldText: string,
  maxLines: number,
): { line: number; text: string } | undefined {
  const target = oldText
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim();
  if (!target) return undefined;
  const lines = content.split('\n', maxLines + 1);
  if (lines.length > maxLines) return undefined;
  let best: { line: number; text: string; score: number } | undefined;
  lines.forEach((raw, i) => {
    const text = raw.replace(/\r$/, '');
    const score = similarity(text.trim(), target);
    if (score >= 0.5 && (!best || score > best.score)) best = { line: i + 1, text, score };
  });
  return best ? { line: best.line, text: best.text } : undefined;
}
