// The markdown renderer of the interactive mode's replies (pure: lines for a width, with or
// without colour, whole or streamed), and the app drawing a rendered reply.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeDanglingMarkers, markdownLines } from '../../../src/display/interactive/markdown-lines.js';
import { InteractiveController } from '../../../src/display/interactive/run-interactive.js';
import { displayWidth, stripAnsi } from '../../../src/display/terminal-text.js';
import { createAgentSession } from '../../../src/runtime/index.js';
import { mountApp } from './helpers/app-driver.js';
import { QUIET_SESSION } from './helpers/quiet-session.js';

const plain = (text: string, width = 80) => markdownLines(text, { width, color: false });
const coloured = (text: string, width = 80) => markdownLines(text, { width, color: true });
const ESC = '\x1b';
const BOLD = `${ESC}[1m`;

const DOC = [
  '# Release notes',
  '',
  'This release makes the **interactive mode** render *markdown*, with `inline code`, a [link](https://example.com/docs) and _underscored_ emphasis. The paragraph is long enough to wrap at eighty columns.',
  'A line break the model wrote stays.',
  '',
  '## Changes',
  '',
  '- a bullet item whose text is long enough to wrap onto a second line, which is indented under the text',
  '- second item',
  '  - nested item with **bold**',
  '- [x] a finished task',
  '',
  '1. first step',
  '2. second step that is also long enough to wrap onto the next line so the hanging indent shows',
  '',
  '> A quote that is long enough to wrap around at eighty columns, and it keeps its marker on every line.',
  '',
  '---',
  '',
  '```ts',
  'function add(a: number, b: number): number {',
  '    return a + b; // this comment makes the line longer than eighty columns, so it is cut, not wrapped',
  '}',
  '```',
  '',
  '| name | size |',
  '|------|-----:|',
  '| a.ts | 12 |',
  '| bb.ts | 3456 |',
  '',
  'The end.',
].join('\n');

describe('markdownLines', () => {
  it('without colour (NO_COLOR) has no escape codes and keeps the structure readable', () => {
    const lines = plain(DOC);
    expect(lines.join('\n')).not.toContain(ESC);
    expect(lines[0]).toBe('# Release notes');
    expect(lines).toContain('## Changes');
    // Emphasis markers go, inline code keeps its backticks, a link shows its address.
    const paragraph = lines.slice(2, 6).join(' ');
    expect(paragraph).toContain(
      'makes the interactive mode render markdown, with `inline code`, a link (https://example.com/docs) and underscored emphasis.',
    );
    expect(paragraph).not.toContain('**');
    expect(lines).toContain('A line break the model wrote stays.');
    expect(lines).toContain('• second item');
    expect(lines).toContain('  ◦ nested item with bold');
    expect(lines).toContain('• [x] a finished task');
    expect(lines).toContain('1. first step');
    expect(lines).toContain('─'.repeat(80));
    const code = lines.indexOf('┌ ts');
    expect(lines.slice(code, code + 5)).toEqual([
      '┌ ts',
      '│ function add(a: number, b: number): number {',
      expect.stringMatching(/^│ {5}return a \+ b; .*…$/),
      '│ }',
      '└',
    ]);
    expect(lines).toContain('name  │ size');
    expect(lines).toContain('a.ts  │   12');
    expect(lines).toContain('bb.ts │ 3456');
    expect(lines.at(-1)).toBe('The end.');
  });

  it('with colour the same text is styled: bold, italic, code, dim language tag; stripped, it is the plain layout', () => {
    const lines = coloured(DOC);
    const all = lines.join('\n');
    expect(all).toContain(`${BOLD}interactive mode`);
    expect(all).toContain(`${ESC}[3mmarkdown`); // italic
    expect(all).toContain(`${ESC}[36minline code`); // cyan, without backticks
    expect(all).toContain(`${ESC}[2mts`); // the language tag is dim
    expect(lines[0]).toContain(BOLD);
    // Apart from the backticks that stand in for the code colour, the layout is the same.
    const withoutCode = DOC.replace('with `inline code`, ', 'with inline code, ');
    expect(coloured(withoutCode).map(stripAnsi)).toEqual(plain(withoutCode));
  });

  it('fits 80 columns: prose wraps at spaces, list items and quotes with a hanging indent, code is cut not wrapped', () => {
    for (const lines of [plain(DOC), coloured(DOC)]) {
      for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(80);
    }
    const lines = plain(DOC);
    const bullet = lines.findIndex((l) => l.startsWith('• a bullet item'));
    expect(lines[bullet + 1]).toMatch(/^ {2}\S/);
    expect(`${lines[bullet]} ${lines[bullet + 1]!.trim()}`).toBe(
      '• a bullet item whose text is long enough to wrap onto a second line, which is indented under the text',
    );
    const step = lines.findIndex((l) => l.startsWith('2. second step'));
    expect(lines[step + 1]).toMatch(/^ {3}\S/);
    const quote = lines.filter((l) => l.startsWith('▎'));
    expect(quote.length).toBe(2);
    expect(quote.map((l) => l.slice(2)).join(' ')).toBe(
      'A quote that is long enough to wrap around at eighty columns, and it keeps its marker on every line.',
    );
    // A narrower terminal rewraps prose but never a code line: one line per source line, cut.
    const narrow = plain('```\nconst aLongIdentifierName = someFunction(withArguments, andMore);\n  indented\n```', 30);
    expect(narrow).toEqual(['┌', '│ const aLongIdentifierName =…', '│   indented', '└']);
  });

  it('measures CJK and emoji by display width: two cells each, never split inside one', () => {
    const cjk = '中文'.repeat(30); // 60 characters, 120 cells
    expect(plain(cjk)).toEqual(['中文'.repeat(20), '中文'.repeat(10)]);
    const family = '👨‍👩‍👧';
    const lines = plain(`${'word '.repeat(15)}${family.repeat(10)}`, 40);
    for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(40);
    expect(lines.join('').split(family).length - 1).toBe(10);
    // A list item's text has 40 - 2 cells: 19 wide characters a line, under the bullet's indent.
    const han = '漢字'.repeat(25);
    expect(plain(`- ${han}`, 40)).toEqual([`• ${han.slice(0, 19)}`, `  ${han.slice(19, 38)}`, `  ${han.slice(38)}`]);
  });

  it('a table too wide for the terminal becomes one wrapped line per row', () => {
    const lines = plain('| a | b |\n|---|---|\n| short | a cell with a lot of text in it |', 20);
    expect(lines).toEqual(['a │ b', 'short │ a cell with', 'a lot of text in it']);
  });

  // Constructs whose meaning changes as later lines arrive: a list after a paragraph, a list that
  // turns loose and reaches two-digit numbers, a "---" under a paragraph, a fence inside a list.
  const TRICKY = [
    'Steps:',
    '- one',
    '- two',
    '',
    '- three, after a blank line',
    '',
    ...Array.from({ length: 11 }, (_, i) => `${i + 1}. step ${i + 1}`),
    '',
    'A paragraph',
    '---',
    'Text with **bold `code` inside** and `a ** b`.',
    '',
    '1. item with code:',
    '   ```sh',
    '   ls -la',
    '   ```',
    '2. after',
  ].join('\n');

  it('streaming: every prefix renders within the width; what is above the last block never changes; the end equals the whole', () => {
    for (const doc of [DOC, TRICKY]) {
      const whole = plain(doc);
      for (let i = 0; i <= doc.length; i++) {
        const prefix = doc.slice(0, i);
        const lines = markdownLines(prefix, { width: 80, color: false, streaming: true });
        for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(80);
        // Blocks are separated by one blank line; everything before the last one is final.
        const settled = lines.slice(0, lines.lastIndexOf(''));
        expect(settled, `prefix of ${i} characters`).toEqual(whole.slice(0, settled.length));
        expect(() => markdownLines(prefix, { width: 80, color: true, streaming: true })).not.toThrow();
      }
      expect(markdownLines(doc, { width: 80, color: false, streaming: true })).toEqual(whole);
      expect(markdownLines(doc, { width: 80, color: true, streaming: true })).toEqual(coloured(doc));
    }
    expect(plain(TRICKY).slice(0, 4)).toEqual(['Steps:', '', '• one', '• two']);
    expect(plain(TRICKY)).toContain('10. step 10');
    expect(plain(TRICKY)).toContain('A paragraph');
    expect(plain(TRICKY)).toContain('─'.repeat(80));
    expect(plain(TRICKY).slice(-5)).toEqual(['1. item with code:', '   ┌ sh', '   │ ls -la', '   └', '2. after']);
  });

  it('streaming: an open fence is a code block until it closes; open ** and ` are shown closed', () => {
    const open = markdownLines('Here:\n\n```ts\nconst x = 1;\n', { width: 80, color: false, streaming: true });
    expect(open).toEqual(['Here:', '', '┌ ts', '│ const x = 1;']);
    // Two of the closing fence's three backticks are not drawn as a code line.
    expect(markdownLines('```ts\nconst x = 1;\n``', { width: 80, color: false, streaming: true })).toEqual([
      '┌ ts',
      '│ const x = 1;',
    ]);
    expect(markdownLines('```ts\nconst x = 1;\n```', { width: 80, color: false, streaming: true })).toEqual([
      '┌ ts',
      '│ const x = 1;',
      '└',
    ]);
    // An unclosed ** is bold already, and the first half of its closer changes nothing.
    const half = markdownLines('Say **hello wor', { width: 80, color: true, streaming: true })[0]!;
    expect(half).toBe(`Say ${BOLD}hello wor${ESC}[22m`);
    expect(markdownLines('Say **hello world*', { width: 80, color: true, streaming: true })[0]).toBe(
      `Say ${BOLD}hello world${ESC}[22m`,
    );
    expect(markdownLines('Say **hello world**', { width: 80, color: true, streaming: true })[0]).toBe(
      `Say ${BOLD}hello world${ESC}[22m`,
    );
    expect(markdownLines('Run `npm te', { width: 80, color: false, streaming: true })).toEqual(['Run `npm te`']);
    expect(markdownLines('Say **', { width: 80, color: false, streaming: true })).toEqual(['Say']);
    // Whole (not streaming), an unclosed marker is literal text, as CommonMark has it.
    expect(plain('Say **hello')).toEqual(['Say **hello']);
  });

  it('closeDanglingMarkers leaves finished text, italics and code fences alone', () => {
    for (const done of [
      '**a** and `b`',
      'an *italic*',
      '2 * 3 = 6',
      '```\n**not bold\n',
      'a\n\n```js\nx `y\n```\n\ntext',
    ]) {
      expect(closeDanglingMarkers(done)).toBe(done);
    }
    expect(closeDanglingMarkers('**bold `code')).toBe('**bold `code`**');
    expect(closeDanglingMarkers('done.\n\n**next ')).toBe('done.\n\n**next**');
  });

  it('links: [text](url) as "text (url)", a bare address once; images as their description', () => {
    expect(plain('See [the docs](https://x.dev/a) or https://x.dev/b or <mailto:me@x.dev>.')).toEqual([
      'See the docs (https://x.dev/a) or https://x.dev/b or mailto:me@x.dev.',
    ]);
    expect(plain('![a chart](chart.png)')).toEqual(['[image: a chart] (chart.png)']);
  });
});

describe('the app draws a markdown reply', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('a scripted reply with a heading, a list and a code block is drawn rendered, the prompt as typed', async () => {
    const reply = '## Plan\n\n- **read** the file\n- then `edit` it\n\n```sh\nnpm test\n```';
    const session = await createAgentSession({
      cwd: mkdtempSync(join(tmpdir(), 'markdown-app-')),
      inMemory: true,
      provider: 'scripted',
      script: [{ text: reply }],
      tools: [],
      ...QUIET_SESSION,
    });
    const controller = new InteractiveController(session, { onExit: () => undefined });
    const { app, frame, until } = mountApp(controller, session, cleanups);
    app.stdin.write('**plan** it');
    await until((f) => f.includes('> **plan** it'), 'the prompt in the editor');
    app.stdin.write('\r');
    await until((f) => f.includes('└') && /\/help\s*$/.test(f.trimEnd()), 'the rendered reply');
    const lines = frame().split('\n');
    const at = lines.indexOf('## Plan');
    expect(lines.slice(at, at + 8)).toEqual([
      '## Plan',
      '',
      '• read the file',
      '• then `edit` it',
      '',
      '┌ sh',
      '│ npm test',
      '└',
    ]);
    expect(frame()).toContain('› **plan** it'); // the user's prompt is not rendered
    expect(frame()).not.toContain('```');
  });
});
