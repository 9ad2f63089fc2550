import { describe, expect, it } from 'vitest';
import { StreamRedactor } from '../../src/tools/stream-redactor.js';

const SECRETS = [
  { name: 'TOKEN', value: 'tok_live_7f3a9c1e' },
  { name: 'KEY', value: 'sk-ant-api03-abcdefgh' },
  { name: 'INNER', value: 'api03-abcd' }, // inside KEY: KEY wins where both match
];
const TEXT =
  'start tok_live_7f3a9c1e middle sk-ant-api03-abcdefgh and api03-abcd, tok_live_7f3a9c1etok_live_7f3a9c1e end tok_live';
const EXPECTED =
  'start [REDACTED:TOKEN] middle [REDACTED:KEY] and [REDACTED:INNER], [REDACTED:TOKEN][REDACTED:TOKEN] end tok_live';

function through(r: StreamRedactor, pieces: string[]): string {
  return pieces.map((p) => r.push(p)).join('') + r.end();
}

describe('StreamRedactor (secrets out of a streamed temp file)', () => {
  it('redacts a secret however the stream splits it: every single cut point, and one character at a time', () => {
    for (let i = 0; i <= TEXT.length; i++) {
      expect(through(StreamRedactor.create(SECRETS)!, [TEXT.slice(0, i), TEXT.slice(i)]), `cut at ${i}`).toBe(EXPECTED);
    }
    expect(through(StreamRedactor.create(SECRETS)!, [...TEXT])).toBe(EXPECTED);
  });

  it('never writes part of a secret ahead: what is out so far holds no prefix of one', () => {
    const r = StreamRedactor.create(SECRETS)!;
    const first = 'a long line of output, then the value: tok_live_7f3';
    const out = r.push(first);
    expect(first.startsWith(out)).toBe(true);
    expect(out).not.toContain('tok');
    expect(out + r.push('a9c1e done') + r.end()).toBe('a long line of output, then the value: [REDACTED:TOKEN] done');
  });

  it('holds back at most the longest secret less one character', () => {
    const r = StreamRedactor.create(SECRETS)!;
    expect(r.push('x'.repeat(100))).toBe('x'.repeat(100 - ('sk-ant-api03-abcdefgh'.length - 1)));
  });

  it('is not made for values too short to be secrets', () => {
    expect(StreamRedactor.create([{ name: 'A', value: 'abc' }])).toBeUndefined(); // under 4 characters, as in the session layer
    expect(StreamRedactor.create(undefined)).toBeUndefined();
  });
});
