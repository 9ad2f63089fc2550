// The MCP server's token goes through the service's one way of choosing a server token
// (service/server-token.ts) but keeps its own place: ORCHESTRATE_MCP_TOKEN and
// <ORCHESTRATE_HOME>/mcp-token, never the web view's variable or file. A token set in the
// environment is taken as given (as before the two were one), a file token is made once, kept
// private and reused, and a file that cannot be read is an error naming it.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverToken, tokenFilePath } from '../../src/mcp/http-token.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function home(): string {
  const d = mkdtempSync(join(tmpdir(), 'mcp-token-'));
  dirs.push(d);
  return join(d, 'orchestrate-home');
}

describe('the MCP server token', () => {
  it('is made once in <ORCHESTRATE_HOME>/mcp-token, mode 0600, and reused', () => {
    const h = home();
    const env = { ORCHESTRATE_HOME: h, ORCHESTRATE_WEB_TOKEN: 'the-web-views-token-000' };
    const first = serverToken(env);
    expect(first.origin).toBe('new');
    expect(first.file).toBe(join(h, 'mcp-token'));
    expect(tokenFilePath(env)).toBe(join(h, 'mcp-token'));
    expect(first.token).not.toBe('the-web-views-token-000');
    expect(readFileSync(first.file!, 'utf8').trim()).toBe(first.token);
    expect(statSync(first.file!).mode & 0o777).toBe(0o600);
    const again = serverToken(env);
    expect(again).toEqual({ token: first.token, origin: 'file', file: first.file });
  });

  it('takes ORCHESTRATE_MCP_TOKEN as given, a short one too, and writes no file', () => {
    const h = home();
    expect(serverToken({ ORCHESTRATE_HOME: h, ORCHESTRATE_MCP_TOKEN: 'short' })).toEqual({
      token: 'short',
      origin: 'env',
    });
    expect(() => statSync(join(h, 'mcp-token'))).toThrow();
  });

  it('makes a token file others may read private', () => {
    const h = home();
    mkdirSync(h, { recursive: true });
    writeFileSync(join(h, 'mcp-token'), 'kept-token-0123456789abcdef\n', { mode: 0o644 });
    chmodSync(join(h, 'mcp-token'), 0o644);
    expect(serverToken({ ORCHESTRATE_HOME: h }).token).toBe('kept-token-0123456789abcdef');
    expect(statSync(join(h, 'mcp-token')).mode & 0o777).toBe(0o600);
  });

  it('names the file it cannot read and the variable that avoids it', () => {
    const h = home();
    // A folder where the file should be: reading it fails with EISDIR whoever runs the test.
    mkdirSync(join(h, 'mcp-token'), { recursive: true });
    expect(() => serverToken({ ORCHESTRATE_HOME: h })).toThrow(
      new RegExp(`cannot read the MCP token file ${join(h, 'mcp-token')}.*ORCHESTRATE_MCP_TOKEN`),
    );
  });
});
