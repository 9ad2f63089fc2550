import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OutputCapture } from '../../src/tools/output-capture.js';
import { tempDir } from './harness.js';

describe('OutputCapture', () => {
  it('keeps everything in memory and writes no file while the output fits', async () => {
    const cap = new OutputCapture({ tempDir: tempDir() });
    cap.push(Buffer.from('a\nb\n'));
    const snap = cap.snapshot();
    expect(snap).toMatchObject({ text: 'a\nb', totalLines: 2, totalBytes: 4 });
    expect(snap.truncation).toBeUndefined();
    expect(await cap.close()).toBeUndefined();
    expect(cap.fullOutputPath).toBeUndefined();
  });

  it('starts the temp file at the first byte even when one huge chunk arrives after small ones', async () => {
    const cap = new OutputCapture({ tempDir: tempDir(), maxBytes: 100, rollingBytes: 200 });
    const parts = [
      Buffer.from('first line\n'),
      Buffer.from('second\n'),
      Buffer.from(`${'x'.repeat(1000)}\n`),
      Buffer.from('last'),
    ];
    for (const p of parts) cap.push(p);
    const snap = cap.snapshot();
    expect(await cap.close()).toBeUndefined();
    expect(readFileSync(snap.fullOutputPath as string, 'utf8')).toBe(Buffer.concat(parts).toString('utf8'));
    expect(snap).toMatchObject({ totalLines: 4, totalBytes: Buffer.concat(parts).length, text: 'last' });
  });

  it('bounds memory: the retained window stays near the rolling size however much is pushed', () => {
    const cap = new OutputCapture({ tempDir: tempDir(), maxBytes: 1000, rollingBytes: 4000 });
    const line = Buffer.from(`${'y'.repeat(99)}\n`);
    for (let i = 0; i < 10_000; i++) cap.push(line);
    // Reach into the private window size through the snapshot's truncation of it.
    const snap = cap.snapshot();
    expect(snap.totalLines).toBe(10_000);
    expect(snap.truncation?.outputLines).toBe(10);
    expect((cap as unknown as { retained: number }).retained).toBeLessThanOrEqual(4100);
  });

  it('measures the last line of the full output for the partial-line notice', async () => {
    const cap = new OutputCapture({ tempDir: tempDir(), maxBytes: 10 });
    cap.push(Buffer.from('ab\n'));
    cap.push(Buffer.from('c'.repeat(30)));
    cap.push(Buffer.from('d'.repeat(30)));
    const snap = cap.snapshot();
    expect(snap.lastLineBytes).toBe(60);
    expect(snap.truncation?.lastLinePartial).toBe(true);
    expect(snap.text).toBe('d'.repeat(10));
    await cap.close();
    expect(existsSync(snap.fullOutputPath as string)).toBe(true);
  });

  it('does not count a final newline as an extra line', () => {
    const cap = new OutputCapture({ tempDir: tempDir(), maxLines: 3 });
    cap.push(Buffer.from('1\n2\n3\n'));
    expect(cap.snapshot()).toMatchObject({ totalLines: 3, text: '1\n2\n3' });
    expect(cap.fullOutputPath).toBeUndefined();
  });
});
