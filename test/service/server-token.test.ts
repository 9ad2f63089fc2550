// The token of a local server (the web view's): the environment wins; without it one is made from
// crypto-random bytes and kept private (0600) in the orchestrate home, reused on the next start; a
// token file others may read is made private; a file that cannot be written is a reason naming it.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverToken, type TokenPlace } from '../../src/service/server-token.js';

const PLACE: TokenPlace = { envVar: 'ORCHESTRATE_WEB_TOKEN', fileName: 'web-token', what: 'web view' };
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const home = () => {
  const d = mkdtempSync(join(tmpdir(), 'server-token-'));
  dirs.push(d);
  return join(d, 'home');
};

describe('serverToken', () => {
  it('makes a token once, private, and keeps it across starts', () => {
    const h = home();
    const first = serverToken({ ORCHESTRATE_HOME: h }, PLACE);
    if (!first.ok) throw new Error(first.message);
    expect(first.token.origin).toBe('new');
    expect(first.token.token).toMatch(/^[\w-]{43}$/);
    const file = join(h, 'web-token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${first.token.token}\n`);
    const again = serverToken({ ORCHESTRATE_HOME: h }, PLACE);
    expect(again).toEqual({ ok: true, token: { token: first.token.token, origin: 'file', file } });
  });

  it('the environment wins; one too short is refused with the fix', () => {
    const h = home();
    expect(serverToken({ ORCHESTRATE_HOME: h, ORCHESTRATE_WEB_TOKEN: 'a-long-enough-token-1234' }, PLACE)).toEqual({
      ok: true,
      token: { token: 'a-long-enough-token-1234', origin: 'env' },
    });
    const short = serverToken({ ORCHESTRATE_HOME: h, ORCHESTRATE_WEB_TOKEN: 'short' }, PLACE);
    expect(short).toMatchObject({
      ok: false,
      message: expect.stringMatching(/ORCHESTRATE_WEB_TOKEN must be at least 16/),
    });
  });

  it('makes a readable token file private, and replaces an unusable one', () => {
    const h = home();
    mkdirSync(h, { recursive: true });
    const file = join(h, 'web-token');
    writeFileSync(file, 'kept-token-0123456789\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(serverToken({ ORCHESTRATE_HOME: h }, PLACE)).toMatchObject({ ok: true, token: { origin: 'file' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'two words\n');
    const made = serverToken({ ORCHESTRATE_HOME: h }, PLACE);
    expect(made).toMatchObject({ ok: true, token: { origin: 'new' } });
  });

  it('a home it cannot write is a reason that names the file and the way out', () => {
    const h = home();
    mkdirSync(h, { recursive: true });
    writeFileSync(join(h, 'blocker'), 'a file');
    const r = serverToken({ ORCHESTRATE_HOME: join(h, 'blocker') }, PLACE);
    expect(r).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        /cannot (read|write) the web view token file .*blocker\/web-token.*set ORCHESTRATE_WEB_TOKEN instead/,
      ),
    });
  });
});
