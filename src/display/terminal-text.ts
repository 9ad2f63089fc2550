// Text for terminals: colour through node's own styleText (so we hand-write no colour escapes),
// the decision whether to colour at all (NO_COLOR, --no-color, not a TTY), and width-aware
// cutting so a row never wraps.
import { styleText } from 'node:util';

type StyleFormat = Parameters<typeof styleText>[0];

export interface Painter {
  readonly enabled: boolean;
  paint(format: StyleFormat, text: string): string;
}

/** Colour only for a TTY, and never when NO_COLOR is set to something non-empty or --no-color was given. */
export function shouldUseColor(opts: { isTTY: boolean; noColorFlag?: boolean; env?: NodeJS.ProcessEnv }): boolean {
  const env = opts.env ?? process.env;
  if (opts.noColorFlag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return opts.isTTY;
}

export function makePainter(enabled: boolean): Painter {
  return {
    enabled,
    // validateStream:false: we already decided (styleText would otherwise look at process.stdout,
    // which is not the stream we draw on).
    paint: (format, text) => (enabled && text !== '' ? styleText(format, text, { validateStream: false }) : text),
  };
}

// SGR sequences are all styleText produces; other CSI sequences are matched so they never count as width.
const ANSI_RE = /\x1b\[[0-9;?]*[A-Za-z]/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI_RE, '');
}

/** Terminal cells of one code point: 0 for combining marks and controls, 2 for East Asian wide / emoji. */
function cellWidth(cp: number): number {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if ((cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Cells a string takes on screen (colour codes excluded). */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of stripAnsi(s)) w += cellWidth(ch.codePointAt(0)!);
  return w;
}

/**
 * Cuts `s` to at most `width` cells, ending in "…" when cut. Colour codes are kept (they take no
 * cells) and a reset is appended when the cut may have left a style open.
 */
export function truncateToWidth(s: string, width: number): string {
  if (width <= 0) return '';
  if (displayWidth(s) <= width) return s;
  let out = '';
  let used = 0;
  let styled = false;
  let i = 0;
  while (i < s.length) {
    ANSI_RE.lastIndex = i;
    const m = s[i] === '\x1b' ? ANSI_RE.exec(s) : null;
    if (m && m.index === i) {
      out += m[0];
      styled = true;
      i += m[0].length;
      continue;
    }
    const ch = String.fromCodePoint(s.codePointAt(i)!);
    const w = cellWidth(ch.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
    i += ch.length;
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

/** Cuts free text to `max` characters with a visible marker. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}

/** A bar of `cells` cells filled to `fraction` (0..1). */
export function bar(fraction: number, cells: number): string {
  const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * cells);
  return '█'.repeat(full) + '░'.repeat(cells - full);
}
