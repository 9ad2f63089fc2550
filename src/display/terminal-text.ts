// Text for terminals: colour through node's own styleText (so we hand-write no colour escapes),
// the decision whether to colour at all (--no-color, FORCE_COLOR, NO_COLOR, not a TTY), and
// width-aware cutting so a row never wraps. Widths come from string-width (emoji, ZWJ sequences,
// skin tones, East Asian wide); cuts fall between graphemes (Intl.Segmenter).
import { styleText } from 'node:util';
import stringWidth from 'string-width';
import stripAnsi from 'strip-ansi';

type StyleFormat = Parameters<typeof styleText>[0];

export interface Painter {
  readonly enabled: boolean;
  paint(format: StyleFormat, text: string): string;
}

/**
 * Whether to colour: --no-color wins, then FORCE_COLOR (0/false = never, anything else = always,
 * as node and most CLIs read it), then NO_COLOR (non-empty = never), then whether it is a TTY.
 */
export function shouldUseColor(opts: { isTTY: boolean; noColorFlag?: boolean; env?: NodeJS.ProcessEnv }): boolean {
  const env = opts.env ?? process.env;
  if (opts.noColorFlag) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return !['0', 'false'].includes(force.trim().toLowerCase());
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return opts.isTTY;
}

/**
 * How `run` shows progress: the live view draws on stderr, so it needs only stderr to be a
 * terminal (stdout may go to a file: the summary is written there without colour).
 */
export function runDisplayChoice(opts: {
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  noColorFlag?: boolean;
  env?: NodeJS.ProcessEnv;
}): { live: boolean; color: boolean; summaryColor: boolean } {
  const live = opts.stderrIsTTY;
  return {
    live,
    color: shouldUseColor({ isTTY: live, noColorFlag: opts.noColorFlag, env: opts.env }),
    summaryColor: shouldUseColor({ isTTY: opts.stdoutIsTTY, noColorFlag: opts.noColorFlag, env: opts.env }),
  };
}

export function makePainter(enabled: boolean): Painter {
  return {
    enabled,
    // validateStream:false: we already decided (styleText would otherwise look at process.stdout,
    // which is not the stream we draw on).
    paint: (format, text) => (enabled && text !== '' ? styleText(format, text, { validateStream: false }) : text),
  };
}

export { stripAnsi };

// An escape sequence at the start of a string (what strip-ansi removes), kept whole when cutting.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) and BEL (\x07) are what ANSI sequences are made of
const ANSI_HERE = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/y;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Cells a string takes on screen (colour codes excluded; emoji, ZWJ sequences, CJK = 2). */
export function displayWidth(s: string): number {
  return stringWidth(s);
}

/** The string split into escape sequences and user-perceived characters, each with its cells. */
function* cells(s: string): Generator<{ text: string; width: number; ansi: boolean }> {
  let plain = '';
  const flush = function* () {
    for (const { segment } of graphemes.segment(plain))
      yield { text: segment, width: stringWidth(segment), ansi: false };
    plain = '';
  };
  for (let i = 0; i < s.length; ) {
    ANSI_HERE.lastIndex = i;
    const m = s[i] === '\x1b' ? ANSI_HERE.exec(s) : null;
    if (m) {
      yield* flush();
      yield { text: m[0], width: 0, ansi: true };
      i += m[0].length;
    } else {
      plain += s[i];
      i++;
    }
  }
  yield* flush();
}

/**
 * Cuts `s` to at most `width` cells, ending in "…" when cut, never inside a character (emoji,
 * skin tones, flags and combining marks stay whole). Colour codes are kept (they take no cells)
 * and a reset is appended when the cut may have left a style open.
 */
export function truncateToWidth(s: string, width: number): string {
  if (width <= 0) return '';
  if (stringWidth(s) <= width) return s;
  let out = '';
  let used = 0;
  let styled = false;
  for (const c of cells(s)) {
    if (c.ansi) {
      out += c.text;
      styled = true;
      continue;
    }
    if (used + c.width > width - 1) break;
    out += c.text;
    used += c.width;
  }
  return `${out}…${styled ? '\x1b[0m' : ''}`;
}

/** Pads (or cuts) to exactly `width` cells. */
export function fitToWidth(s: string, width: number): string {
  const cut = truncateToWidth(s, width);
  return cut + ' '.repeat(Math.max(0, width - displayWidth(cut)));
}

/** Right-aligns within `width` cells (cuts when longer). */
export function padStartToWidth(s: string, width: number): string {
  const cut = truncateToWidth(s, width);
  return ' '.repeat(Math.max(0, width - displayWidth(cut))) + cut;
}

/** One line of free text: newlines and tabs become spaces, runs of blanks collapse. */
export function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Cuts free text to `max` user-perceived characters with a visible marker (never inside one). */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s; // UTF-16 length bounds the count of characters
  const parts = [...graphemes.segment(s)];
  if (parts.length <= max) return s;
  return `${parts
    .slice(0, Math.max(0, max - 1))
    .map((p) => p.segment)
    .join('')}…`;
}

/** A bar of `cells` cells filled to `fraction` (0..1). */
export function bar(fraction: number, cells: number): string {
  const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * cells);
  return '█'.repeat(full) + '░'.repeat(cells - full);
}

/**
 * Plain text (no colour codes) broken into lines of at most `width` cells: at spaces when a
 * word fits, else mid-word; never inside a character. Tabs count as two spaces.
 */
export function wrapToWidth(text: string, width: number): string[] {
  const w = Math.max(1, width);
  const out: string[] = [];
  for (const raw of text.replace(/\t/g, '  ').split('\n')) {
    let line = '';
    let used = 0;
    let lastSpace = -1; // index in `line` just after the last space
    for (const { segment } of graphemes.segment(raw)) {
      const cw = stringWidth(segment);
      if (used + cw > w) {
        if (lastSpace > 0 && segment !== ' ') {
          out.push(line.slice(0, lastSpace).trimEnd());
          line = line.slice(lastSpace);
        } else {
          out.push(line.trimEnd());
          line = '';
        }
        used = stringWidth(line);
        lastSpace = -1;
        if (segment === ' ' && line === '') continue;
      }
      line += segment;
      used += cw;
      if (segment === ' ') lastSpace = line.length;
    }
    out.push(line);
  }
  return out;
}
