// The redactor: every occurrence of every secret is replaced by a placeholder naming it, in text
// and in every string of a JSON value (keys too), without touching the input; short values are
// left alone; and a session store with the hook never writes a secret, while its memory keeps it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/session/redact.js';
import { SessionStore } from '../../src/session/session-store.js';
import { seededInt } from '../helpers/seeded-random.js';
import { tempDir } from './message-builders.js';

describe('createRedactor', () => {
  const r = createRedactor([
    { name: 'KEY', value: 'sk-ant-123456' },
    { name: 'LONG', value: 'sk-ant-123456-and-more' },
    { name: 'QUOTED', value: 'pa"ss\\word' },
    { name: 'TINY', value: 'ab' },
  ])!;

  it('replaces every occurrence, the longest secret first', () => {
    expect(r.text('a sk-ant-123456 b sk-ant-123456-and-more c sk-ant-123456')).toBe(
      'a [REDACTED:KEY] b [REDACTED:LONG] c [REDACTED:KEY]',
    );
  });

  it('also finds a secret in its JSON-escaped form', () => {
    expect(r.text(JSON.stringify({ v: 'x pa"ss\\word y' }))).not.toContain('pa\\"ss');
    expect(r.text('raw pa"ss\\word')).toBe('raw [REDACTED:QUOTED]');
  });

  it('leaves values shorter than the minimum alone', () => {
    expect(r.text('ab cd ab')).toBe('ab cd ab');
  });

  it('redacts strings and keys deep in a value, returns a copy, keeps numbers and shares untouched parts', () => {
    const shared = { n: 1, list: ['plain'] };
    const input = { a: ['x sk-ant-123456'], 'sk-ant-123456': true, shared, n: 42 };
    const out = r.value(input);
    expect(out).toEqual({ a: ['x [REDACTED:KEY]'], '[REDACTED:KEY]': true, shared, n: 42 });
    expect(input.a[0]).toBe('x sk-ant-123456');
    expect(out.shared).toBe(shared);
  });

  it('serialize gives value() and its JSON; with no secret present, the input itself', () => {
    const clean = { text: 'nothing to hide\n"quoted" \\ back', list: [1, 'two'] };
    const out = r.serialize(clean);
    expect(out.value).toBe(clean);
    expect(out.json).toBe(JSON.stringify(clean));
    const dirty = { text: 'key sk-ant-123456 here', 'pa"ss\\word': ['x'] };
    const red = r.serialize(dirty);
    expect(red.value).toEqual(r.value(dirty));
    expect(red.json).toBe(JSON.stringify(r.value(dirty)));
    expect(red.json).not.toMatch(/sk-ant-123456|pa\\"ss/);
  });

  it('serialize and serializeBytes find a secret in every shape value() does: raw, JSON-escaped, inside keys, next to escapes', () => {
    // Random strings built from pieces of secrets, their escaped forms and characters JSON
    // escapes: serialize must always agree with JSON.stringify(value(v)).
    const secrets = [
      { name: 'KEY', value: 'sk-ant-123456' },
      { name: 'QUOTED', value: 'pa"ss\\word' },
      { name: 'NL', value: 'line\nbreak-secret' },
      { name: 'N', value: 'nfoo-secret' },
    ];
    const red = createRedactor(secrets)!;
    const pieces = [
      ...secrets.flatMap((s) => [s.value, JSON.stringify(s.value).slice(1, -1), s.value.slice(0, 5), s.value.slice(4)]),
      '\\',
      '"',
      '\n',
      'n',
      ' ',
      'x',
      '\u0001',
      'é',
    ];
    const rand = seededInt(5);
    const text = (): string => Array.from({ length: 1 + rand(6) }, () => pieces[rand(pieces.length)]!).join('');
    let redacted = 0;
    for (let i = 0; i < 3000; i++) {
      const v = { [text()]: text(), list: [text(), { deep: text() }], n: i };
      const expected = JSON.stringify(red.value(v));
      const out = red.serialize(v);
      expect(out.json).toBe(expected);
      expect(out.value).toEqual(red.value(v));
      expect(Buffer.from(red.serializeBytes(v)).toString('utf8')).toBe(expected);
      if (expected !== JSON.stringify(v)) redacted++;
    }
    expect(redacted).toBeGreaterThan(500);
    expect(redacted).toBeLessThan(3000);
  });

  it('a secret with a lone surrogate is still redacted (the JSON-text shortcut is not used for it)', () => {
    const red = createRedactor([{ name: 'ODD', value: 'abc\ud83d' }])!;
    const v = { t: 'x abc\ud83d\ude00 y' }; // the secret's last unit pairs with the next one
    expect(red.serialize(v).json).toBe(JSON.stringify(red.value(v)));
    expect(red.serialize(v).json).toContain('[REDACTED:ODD]');
    expect(Buffer.from(red.serializeBytes(v)).toString('utf8')).toBe(JSON.stringify(red.value(v)));
  });

  it('is undefined without a secret worth redacting', () => {
    expect(createRedactor([{ name: 'X', value: 'ab' }])).toBeUndefined();
    expect(createRedactor([])).toBeUndefined();
  });
});

describe('SessionStore redact hook', () => {
  it('writes placeholders to the file while the entries in memory keep the text', () => {
    const file = join(tempDir(), 's.jsonl');
    const redact = createRedactor([{ name: 'TOKEN', value: 'tok_live_abcdef' }])!;
    const store = SessionStore.create(file, { cwd: '/w', redact });
    store.appendMessage({ role: 'user', content: 'use tok_live_abcdef', timestamp: 1 });
    store.appendMessage({
      role: 'assistant',
      content: [{ type: 'text', text: 'ok tok_live_abcdef' }],
      api: 'a',
      provider: 'p',
      model: 'm',
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: 'stop',
      timestamp: 2,
    });
    store.persist();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('tok_live_abcdef');
    expect(text.match(/\[REDACTED:TOKEN\]/g)).toHaveLength(2);
    expect(JSON.stringify(store.buildContext().messages)).toContain('tok_live_abcdef');
    // A branch of the session inherits the redaction.
    const branch = store.createBranchedSession(store.leafId, join(tempDir(), 'b.jsonl'));
    branch.persist();
    expect(readFileSync(branch.path!, 'utf8')).not.toContain('tok_live_abcdef');
  });
});
