import { describe, expect, it } from 'vitest';
import { countNewlines, formatSize, truncateHead, truncateLine, truncateTail } from '../../src/tools/truncate.js';

const lines = (n: number, f: (i: number) => string = (i) => `line ${i}`): string =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join('\n');

/** The kept text must encode and decode back to itself: no split character, no U+FFFD. */
function expectCleanUtf8(text: string): void {
  expect(text).not.toContain('\uFFFD');
  expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
  expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)).toBe(false);
}

describe('truncateHead', () => {
  it('returns the input unchanged when both limits hold', () => {
    const r = truncateHead('a\nb\nc');
    expect(r).toMatchObject({
      content: 'a\nb\nc',
      truncated: false,
      truncatedBy: null,
      totalLines: 3,
      outputLines: 3,
      totalBytes: 5,
    });
  });

  it('counts a trailing newline as a final empty line', () => {
    expect(truncateHead('a\nb\n').totalLines).toBe(3);
    expect(truncateTail('a\nb\n').totalLines).toBe(3);
    expect(truncateHead('').totalLines).toBe(1);
  });

  it('stops at the line limit and reports truncatedBy lines', () => {
    const r = truncateHead(lines(10), { maxLines: 4 });
    expect(r.content).toBe('line 1\nline 2\nline 3\nline 4');
    expect(r).toMatchObject({ truncated: true, truncatedBy: 'lines', totalLines: 10, outputLines: 4 });
    expect(r.outputBytes).toBe(Buffer.byteLength(r.content));
  });

  it('stops before the line that would pass the byte limit and never emits a partial line', () => {
    const r = truncateHead('aaaa\nbbbb\ncccc', { maxBytes: 12 });
    expect(r.content).toBe('aaaa\nbbbb');
    expect(r).toMatchObject({ truncatedBy: 'bytes', outputLines: 2, outputBytes: 9 });
  });

  it('reports a first line over the byte limit with empty content', () => {
    const r = truncateHead(`${'x'.repeat(100)}\nshort`, { maxBytes: 50 });
    expect(r).toMatchObject({ content: '', firstLineExceedsLimit: true, truncatedBy: 'bytes', outputLines: 0 });
  });

  it('counts multibyte characters in bytes and keeps whole lines at the byte boundary', () => {
    // Each line is 3 CJK chars (9 bytes); with the newline 10 bytes per line.
    const text = lines(5, () => '漢字文');
    const r = truncateHead(text, { maxBytes: 28 });
    expect(r.content).toBe('漢字文\n漢字文');
    expect(r.outputBytes).toBe(19);
    expectCleanUtf8(r.content);
  });

  it('gives the same result for a Buffer as for the string', () => {
    const text = lines(50, (i) => `行${i} 😀 ${'é'.repeat(i % 7)}`);
    for (const opts of [{ maxLines: 7 }, { maxBytes: 300 }, { maxBytes: 5 }]) {
      expect(truncateHead(Buffer.from(text), opts)).toEqual(truncateHead(text, opts));
      expect(truncateTail(Buffer.from(text), opts)).toEqual(truncateTail(text, opts));
    }
  });
});

describe('truncateTail', () => {
  it('keeps the last lines within the line limit', () => {
    const r = truncateTail(lines(10), { maxLines: 3 });
    expect(r.content).toBe('line 8\nline 9\nline 10');
    expect(r).toMatchObject({ truncatedBy: 'lines', totalLines: 10, outputLines: 3 });
  });

  it('keeps the trailing empty line of output that ends with a newline', () => {
    const r = truncateTail(`${lines(10)}\n`, { maxLines: 2 });
    expect(r.content).toBe('line 10\n');
    expect(r.totalLines).toBe(11);
  });

  it('keeps the last bytes of a single huge last line on a character boundary', () => {
    // 4-byte emoji: a 10-byte budget cannot hold 3 of them; a byte cut would split one.
    const text = `first\n${'😀'.repeat(20)}`;
    const r = truncateTail(text, { maxBytes: 10 });
    expect(r.lastLinePartial).toBe(true);
    expect(r.content).toBe('😀😀');
    expect(r.outputBytes).toBe(8);
    const fromBytes = truncateTail(Buffer.from(text), { maxBytes: 10 });
    expect(fromBytes.content).toBe('😀😀');
    expectCleanUtf8(fromBytes.content);
  });

  it('cuts a huge CJK last line at every possible byte budget without splitting a character', () => {
    const text = 'ab漢字テスト😀中文🎉'.repeat(40);
    for (let maxBytes = 1; maxBytes <= 40; maxBytes++) {
      for (const input of [text, Buffer.from(text)]) {
        const r = truncateTail(input, { maxBytes });
        expectCleanUtf8(r.content);
        expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(maxBytes);
        expect(Buffer.byteLength(r.content)).toBeGreaterThan(maxBytes - 4);
        expect(text.endsWith(r.content)).toBe(true);
      }
    }
  });

  it('keeps whole multibyte lines at the byte boundary from the bottom', () => {
    const text = ['😀😀', '中文中', 'ab', '🎉x'].join('\n');
    // last line 5 bytes, +1+2 = 8, +1+9 = 18
    const r = truncateTail(text, { maxBytes: 17 });
    expect(r.content).toBe('ab\n🎉x');
    expect(r).toMatchObject({ outputLines: 2, truncatedBy: 'bytes', totalLines: 4 });
  });
});

describe('CJK and emoji at every head boundary', () => {
  it('never produces replacement characters or split pairs', () => {
    const text = lines(
      30,
      (i) =>
        Array.from('😀中文ab🎉テ')
          .slice(0, 1 + (i % 7))
          .join('') + '字'.repeat(i % 5),
    );
    for (let maxBytes = 1; maxBytes <= 200; maxBytes += 3) {
      for (const input of [text, Buffer.from(text)]) {
        const h = truncateHead(input, { maxBytes });
        const t = truncateTail(input, { maxBytes });
        expectCleanUtf8(h.content);
        expectCleanUtf8(t.content);
        expect(text.startsWith(h.content)).toBe(true);
        expect(text.endsWith(t.content)).toBe(true);
        expect(Buffer.byteLength(h.content)).toBeLessThanOrEqual(maxBytes);
        expect(Buffer.byteLength(t.content)).toBeLessThanOrEqual(maxBytes);
      }
    }
  });
});

describe('helpers', () => {
  it('formatSize prints B, KB with one decimal, MB', () => {
    expect(formatSize(512)).toBe('512B');
    expect(formatSize(51200)).toBe('50.0KB');
    expect(formatSize(1536 * 1024)).toBe('1.5MB');
  });

  it('truncateLine caps at 500 chars with a marker and keeps surrogate pairs whole', () => {
    expect(truncateLine('short')).toEqual({ text: 'short', wasTruncated: false });
    const r = truncateLine('x'.repeat(600));
    expect(r.text).toBe(`${'x'.repeat(500)}... [truncated]`);
    const e = truncateLine(`${'x'.repeat(499)}😀tail`);
    expectCleanUtf8(e.text);
  });

  it('countNewlines counts every newline byte', () => {
    expect(countNewlines(Buffer.from('a\nb\n\nc'))).toBe(3);
    expect(countNewlines(new Uint8Array([10, 65, 10]))).toBe(2);
  });
});
