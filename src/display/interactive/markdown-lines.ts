// The assistant's reply as terminal lines: markdown parsed by marked's lexer (already a dependency,
// used by the report) and laid out here for a terminal `width` cells wide. Prose is wrapped with
// terminal-text's wrapToWidth (display width: CJK and emoji take two cells), list items and
// quotes get a hanging indent, code blocks are kept verbatim (cut with "…", never wrapped).
// Styles come from styleText; without colour they vanish and only the structure stays (heading
// "#"s, bullets, code frame, the backticks around inline code).
//
// Streaming: the text is parsed again on every delta. Setext headings are off, so a line under a
// paragraph that starts "-" or "---" cannot turn the paragraph above into a heading for a moment;
// and closeDanglingMarkers (streaming only) closes a "**" or "`" the model has opened but not yet
// closed, so the last paragraph does not jump between literal markers and styled text.
import { Marked, type Token, type Tokens } from 'marked';
import { makePainter, truncateToWidth, wrapToWidth, displayWidth, type Painter } from '../terminal-text.js';

export interface MarkdownOptions {
  /** Cells per line. */
  width: number;
  color: boolean;
  /** The text is a prefix of a reply still arriving (see closeDanglingMarkers). */
  streaming?: boolean;
}

type Format = 'bold' | 'italic' | 'underline' | 'strikethrough' | 'dim' | 'cyan' | 'blue';

/** A run of text in one style. */
interface Span {
  text: string;
  formats: readonly Format[];
}

const markdown = new Marked({
  gfm: true,
  // A line break the model wrote stays a line break (as in the report): lines above never reflow
  // when the next one arrives.
  breaks: true,
  // Returning undefined makes the lexer go on to the paragraph rule: "Text\n---" is a paragraph and
  // a rule, and "Text\n-" (a list on its way) stays a paragraph instead of flashing up as a heading.
  tokenizer: { lheading: () => undefined },
});

const BULLETS = ['•', '◦', '▪'];

interface Context {
  painter: Painter;
  color: boolean;
  listDepth: number;
}

/** The reply as lines of at most `width` cells (colour codes take none). */
export function markdownLines(text: string, options: MarkdownOptions): string[] {
  const width = Math.max(1, Math.floor(options.width));
  const source = text.replace(/\r\n?/g, '\n');
  const tokens = markdown.lexer(options.streaming ? closeDanglingMarkers(source) : source);
  const ctx: Context = { painter: makePainter(options.color), color: options.color, listDepth: 0 };
  return blocks(tokens, width, ctx, true);
}

/** Lines of a sequence of blocks; `spaced`: a blank line between blocks. */
function blocks(tokens: readonly Token[], width: number, ctx: Context, spaced: boolean): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const lines = block(token, width, ctx);
    if (lines.length === 0) continue;
    if (spaced && out.length > 0) out.push('');
    out.push(...lines);
  }
  return out;
}

function block(token: Token, width: number, ctx: Context): string[] {
  const p = ctx.painter;
  switch (token.type) {
    case 'space':
    case 'def':
      return [];
    case 'paragraph':
    case 'text': {
      const t = token as Tokens.Paragraph | Tokens.Text;
      return paint(wrapSpans(t.tokens ? inline(t.tokens, [], ctx) : [{ text: t.text, formats: [] }], width), p);
    }
    case 'heading': {
      // The "#"s stay: a terminal has one font size, so they are what tells an h1 from an h3 (and
      // from a bold line), and without colour they are the only mark of a heading at all.
      const t = token as Tokens.Heading;
      const formats: Format[] = t.depth === 1 ? ['bold', 'underline'] : ['bold'];
      const marker = `${'#'.repeat(t.depth)} `;
      return hanging(marker, inline(t.tokens, formats, ctx), width, p, formats);
    }
    case 'code':
      return codeBlock(token as Tokens.Code, width, p);
    case 'blockquote': {
      const inner = blocks((token as Tokens.Blockquote).tokens, Math.max(1, width - 2), ctx, true);
      return inner.map((l) => `${p.paint('dim', '▎')} ${l}`.trimEnd());
    }
    case 'list':
      return list(token as Tokens.List, width, ctx);
    case 'hr':
      return [p.paint('dim', '─'.repeat(width))];
    case 'table':
      return table(token as Tokens.Table, width, ctx);
    case 'html':
      return paint(wrapSpans([{ text: (token as Tokens.HTML).text.replace(/\n+$/, ''), formats: [] }], width), p);
    default:
      return paint(
        wrapSpans([{ text: ('raw' in token ? String(token.raw) : '').replace(/\n+$/, ''), formats: [] }], width),
        p,
      );
  }
}

/**
 * A fenced block: verbatim in a frame, the language dim on its top line. Lines longer than the
 * frame are cut (a reflowed line of code would read as two). The bottom corner appears when the
 * closing fence has arrived, so an open fence while streaming shows as code still coming.
 */
function codeBlock(t: Tokens.Code, width: number, p: Painter): string[] {
  const lang = (t.lang ?? '').trim().split(/\s+/)[0] ?? '';
  const out = [truncateToWidth(`${p.paint('dim', '┌')}${lang ? ` ${p.paint('dim', lang)}` : ''}`, width)];
  const body = t.text === '' && !t.raw.includes('\n') ? [] : t.text.split('\n');
  for (const line of body)
    out.push(
      `${p.paint('dim', '│')} ${truncateToWidth(line.replace(/\t/g, '    '), Math.max(1, width - 2))}`.trimEnd(),
    );
  if (isClosedFence(t.raw)) out.push(p.paint('dim', '└'));
  return out;
}

function isClosedFence(raw: string): boolean {
  const lines = raw.replace(/\n+$/, '').split('\n');
  if (lines.length < 2) return false;
  const open = /^ {0,3}(`{3,}|~{3,})/.exec(lines[0]!);
  if (!open) return true; // an indented code block has no fence to wait for
  const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines.at(-1)!);
  return close !== null && close[1]![0] === open[1]![0] && close[1]!.length >= open[1]!.length;
}

// Items are always drawn tight: a blank line between two items makes a list loose, and drawing
// that would push apart items already on screen. Numbers are not padded to one width, so a tenth
// item arriving does not shift the nine above it.
function list(t: Tokens.List, width: number, ctx: Context): string[] {
  const start = typeof t.start === 'number' ? t.start : 1;
  const inner: Context = { ...ctx, listDepth: ctx.listDepth + 1 };
  const out: string[] = [];
  t.items.forEach((item, i) => {
    let marker = `${t.ordered ? `${start + i}.` : BULLETS[Math.min(ctx.listDepth, BULLETS.length - 1)]!} `;
    let children = item.tokens;
    if (item.task) {
      marker += item.checked ? '[x] ' : '[ ] ';
      children = children.filter((c) => c.type !== 'checkbox');
    }
    const indent = displayWidth(marker);
    const body = blocks(children, Math.max(1, width - indent), inner, false);
    if (body.length === 0) out.push(marker.trimEnd());
    for (const [j, line] of body.entries()) out.push(`${j === 0 ? marker : ' '.repeat(indent)}${line}`.trimEnd());
  });
  return out;
}

/**
 * A table as a grid when it fits; otherwise each row on its own (wrapped) line with the cells
 * joined by " │ ", which stays readable at any width.
 */
function table(t: Tokens.Table, width: number, ctx: Context): string[] {
  const p = ctx.painter;
  const header = t.header.map((c) => inline(c.tokens, ['bold'], ctx));
  const rows = t.rows.map((r) => r.map((c) => inline(c.tokens, [], ctx)));
  const plainWidth = (spans: Span[]) => displayWidth(spans.map((s) => s.text).join(''));
  const columns = header.map((h, i) => Math.max(plainWidth(h), ...rows.map((r) => (r[i] ? plainWidth(r[i]) : 0))));
  const total = columns.reduce((a, b) => a + b, 0) + 3 * (columns.length - 1);
  const multiLine = [header, ...rows].some((r) => r.some((c) => c.some((s) => s.text.includes('\n'))));
  const sep = p.paint('dim', ' │ ');
  if (total > width || multiLine) {
    return [header, ...rows].flatMap((r) => paint(wrapSpans(joinSpans(r, ' │ '), width), p));
  }
  const row = (cells: Span[][]) =>
    cells
      .map((c, i) => {
        const pad = ' '.repeat(columns[i]! - plainWidth(c));
        const text = paintLine(c, p);
        return t.align[i] === 'right'
          ? pad + text
          : t.align[i] === 'center'
            ? pad.slice(0, pad.length >> 1) + text + pad.slice(pad.length >> 1)
            : text + pad;
      })
      .join(sep)
      .trimEnd();
  const rule = p.paint('dim', columns.map((w) => '─'.repeat(w)).join('─┼─'));
  return [row(header), rule, ...rows.map(row)];
}

function joinSpans(cells: Span[][], separator: string): Span[] {
  return cells.flatMap((c, i) => (i === 0 ? c : [{ text: separator, formats: ['dim'] as Format[] }, ...c]));
}

/** Inline tokens as styled runs; `formats` are those of the enclosing element. */
function inline(tokens: readonly Token[], formats: readonly Format[], ctx: Context): Span[] {
  const out: Span[] = [];
  const add = (text: string, extra: readonly Format[] = []) => {
    if (text !== '') out.push({ text, formats: [...formats, ...extra] });
  };
  for (const token of tokens) {
    switch (token.type) {
      case 'text': {
        const t = token as Tokens.Text;
        if (t.tokens) out.push(...inline(t.tokens, formats, ctx));
        else add(t.text);
        break;
      }
      case 'strong':
        out.push(...inline((token as Tokens.Strong).tokens, [...formats, 'bold'], ctx));
        break;
      case 'em':
        out.push(...inline((token as Tokens.Em).tokens, [...formats, 'italic'], ctx));
        break;
      case 'del':
        out.push(...inline((token as Tokens.Del).tokens, [...formats, 'strikethrough'], ctx));
        break;
      case 'codespan': {
        // Without colour the backticks stay: they are the only sign that this is code.
        const code = (token as Tokens.Codespan).text;
        add(ctx.color ? code : `\`${code}\``, ['cyan']);
        break;
      }
      case 'br':
        add('\n');
        break;
      case 'link': {
        const t = token as Tokens.Link;
        const label = inline(t.tokens, [...formats, 'underline', 'blue'], ctx);
        const labelText = label.map((s) => s.text).join('');
        out.push(...label);
        // An autolink's text is its address; mailto: links show the address alone.
        if (t.href !== labelText && t.href !== `mailto:${labelText}` && t.href !== '') add(` (${t.href})`, ['dim']);
        break;
      }
      case 'image': {
        const t = token as Tokens.Image;
        add(`[image: ${t.text || t.href}]`);
        if (t.text) add(` (${t.href})`, ['dim']);
        break;
      }
      case 'escape':
      case 'html':
        add((token as Tokens.Escape | Tokens.Tag).text);
        break;
      case 'checkbox':
        add((token as Tokens.Checkbox).checked ? '[x] ' : '[ ] ');
        break;
      default:
        add('raw' in token ? String(token.raw) : '');
    }
  }
  return out;
}

/**
 * Runs broken into lines of at most `width` cells, by wrapToWidth on their plain text (so the
 * breaks are those of the rest of the display), then cut back into runs by position.
 */
function wrapSpans(spans: readonly Span[], width: number): Span[][] {
  const texts = spans.map((s) => s.text.replace(/\t/g, '  '));
  const plain = texts.join('');
  // The run each character belongs to, to cut a line back into runs.
  const owner: number[] = [];
  texts.forEach((t, i) => {
    for (let k = 0; k < t.length; k++) owner.push(i);
  });
  const out: Span[][] = [];
  let offset = 0;
  for (const hardLine of plain.split('\n')) {
    let cursor = 0;
    for (const line of wrapToWidth(hardLine, width)) {
      // wrapToWidth only drops blanks at a break: skip them to find where this line starts.
      while (cursor < hardLine.length && !hardLine.startsWith(line, cursor) && /\s/.test(hardLine[cursor]!)) cursor++;
      const runs: Span[] = [];
      // Blanks at the end of a line show nothing (and a styled one would).
      for (let i = offset + cursor; i < offset + cursor + line.trimEnd().length; i++) {
        const formats = spans[owner[i]!]!.formats;
        const last = runs.at(-1);
        if (last && last.formats === formats) last.text += plain[i];
        else runs.push({ text: plain[i]!, formats });
      }
      out.push(runs);
      cursor += line.length;
    }
    offset += hardLine.length + 1;
  }
  return out;
}

/** First line after `marker`, the next ones indented under the text (headings). */
function hanging(marker: string, spans: Span[], width: number, p: Painter, markerFormats: readonly Format[]): string[] {
  const indent = displayWidth(marker);
  return paint(wrapSpans(spans, Math.max(1, width - indent)), p).map(
    (l, i) => (i === 0 ? paintRun(marker, markerFormats, p) : ' '.repeat(indent)) + l,
  );
}

function paint(lines: Span[][], p: Painter): string[] {
  return lines.map((l) => paintLine(l, p));
}

function paintLine(line: readonly Span[], p: Painter): string {
  return line.map((s) => paintRun(s.text, s.formats, p)).join('');
}

function paintRun(text: string, formats: readonly Format[], p: Painter): string {
  return formats.length === 0 ? text : p.paint([...new Set(formats)], text);
}

/**
 * For a reply still streaming: closes what the model has opened in its last paragraph but not yet
 * closed, so the styled text shows at once instead of literal markers that vanish a moment later.
 * An open inline code span gets its closing backticks, an open "**" its closing "**" (a "*" the
 * closer has only half arrived of is taken as that closer); a "**" or "*" with nothing after it yet
 * is left out, and so is a last line of one or two backticks (a fence on its way). Inside an open
 * code fence nothing changes: the lexer already shows it as a code block until it closes.
 */
export function closeDanglingMarkers(text: string): string {
  const s = text.replace(/(^|\n)[ \t]*(`{1,2}|~{1,2})$/, '$1');
  const last = lastParagraph(s);
  if (last.inFence) return s;
  const whole = scanInline(s, last.start, s.length);
  if (whole.code > 0) return s + '`'.repeat(whole.code) + (whole.boldAtCode ? '**' : '');
  const tail = /(?<!\*)\*{1,2}$/.exec(s);
  if (tail) {
    const rest = s.slice(0, tail.index);
    // Half of the closer of an open "**", or an opener with nothing after it yet.
    if (scanInline(rest, last.start, rest.length).bold) return `${rest.trimEnd()}**`;
    if (rest === '' || /\s$/.test(rest)) return rest;
  }
  return whole.bold ? `${s.trimEnd()}**` : s;
}

/** Where the last paragraph starts (after the last blank line or closing fence), and whether the text ends inside a fence. */
function lastParagraph(s: string): { start: number; inFence: boolean } {
  let fence: { char: string; length: number } | undefined;
  let start = 0;
  let at = 0;
  for (const line of s.split('\n')) {
    const next = at + line.length + 1;
    if (!fence) {
      // Any indent: a fence inside a list item is indented by the item's marker.
      const open = /^\s*(`{3,}(?=[^`]*$)|~{3,})/.exec(line);
      if (open) fence = { char: open[1]![0]!, length: open[1]!.length };
      else if (line.trim() === '') start = next;
    } else {
      const close = /^\s*(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) {
        fence = undefined;
        start = next;
      }
    }
    at = next;
  }
  return { start: Math.min(start, s.length), inFence: fence !== undefined };
}

/**
 * "**" and code spans in s[from, to): whether a "**" is open at the end, the length of the
 * backtick run of a code span open at the end (0: none), and whether "**" was open where it began.
 */
function scanInline(s: string, from: number, to: number): { bold: boolean; code: number; boldAtCode: boolean } {
  let bold = false;
  let code = 0;
  let boldAtCode = false;
  for (let i = from; i < to; ) {
    const c = s[i]!;
    if (c === '\\' && code === 0) {
      i += 2;
      continue;
    }
    if (c !== '`' && c !== '*') {
      i++;
      continue;
    }
    let n = 1;
    while (s[i + n] === c) n++;
    if (c === '`') {
      if (code === 0) {
        code = n;
        boldAtCode = bold;
      } else if (code === n) code = 0;
    } else if (code === 0 && n === 2) {
      // Opens before a non-blank, closes after one (CommonMark's flanking rule, simplified).
      if (!bold && i + 2 < to && !/\s/.test(s[i + 2]!)) bold = true;
      else if (bold && i > 0 && !/\s/.test(s[i - 1]!)) bold = false;
    }
    i += n;
  }
  return { bold, code, boldAtCode };
}
