// A sandboxed stdio server installed in the temp folder (a CI clone in /tmp, an npx cache) starts:
// the sandbox shows its command's script and package folder read-only, though its /tmp is private.
// Hidden places stay hidden: a server inside the runs folder (or ~/.ssh) is not shown.
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { McpConnection } from '../../../src/tools/mcp/connection.js';
import { packageRootOf, serverReadOnlyPaths } from '../../../src/tools/mcp/server-files.js';
import { probeSandbox } from '../../../src/tools/sandbox.js';
import { stdioServer } from './helpers.js';

const BARE = fileURLToPath(new URL('../../fixtures/mcp/bare-server', import.meta.url));
const dirs: string[] = [];
const connections: McpConnection[] = [];
afterEach(async () => {
  for (const c of connections.splice(0)) await c.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The bare server copied into a fresh folder under the temp folder; returns its script. */
function installInTmp(): { root: string; script: string; work: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-installed-')));
  dirs.push(base);
  const root = join(base, 'pkg');
  cpSync(BARE, root, { recursive: true });
  const work = join(base, 'work');
  mkdirSync(work);
  return { root, script: join(root, 'bin', 'server.mjs'), work };
}

describe('the files of a sandboxed stdio server', () => {
  it('are its package folder (out of node_modules to the project), not a program on PATH, not flags', () => {
    const { root, script, work } = installInTmp();
    expect(packageRootOf(script)).toBe(root);
    const dep = join(root, 'node_modules', '@scope', 'dep');
    mkdirSync(join(dep, 'dist'), { recursive: true });
    writeFileSync(join(dep, 'package.json'), '{}');
    writeFileSync(join(dep, 'dist', 'index.js'), '');
    expect(packageRootOf(join(dep, 'dist', 'index.js'))).toBe(root);
    expect(serverReadOnlyPaths('node', ['--flag', script, 'https://x.test/'], work)).toEqual([root]);
    // relative to the server's cwd; the command itself when it names a file
    expect(serverReadOnlyPaths('../pkg/bin/server.mjs', [], work)).toEqual([root]);
    // nothing inside a hidden place
    expect(serverReadOnlyPaths('node', [script], work, process.env, [root])).toEqual([]);
  });

  it.skipIf(!probeSandbox().ok)(
    'a server installed under /tmp starts in the sandbox and its tool answers',
    async () => {
      const { script, work } = installInTmp();
      const c = new McpConnection(
        stdioServer('bare', { args: [script, 'tmp-installed'], sandbox: 'workspace', startupTimeoutMs: 10_000 }),
        { cwd: work, notify: () => undefined },
      );
      connections.push(c);
      await c.start();
      expect(c.tools.map((t) => t.name)).toEqual(['answer']);
      const r = await c.callTool('answer', {}, new AbortController().signal);
      expect(r.content).toEqual([{ type: 'text', text: 'answer from tmp-installed' }]);
    },
  );

  it.skipIf(!probeSandbox().ok)(
    'a server inside a hidden folder (the runs folder) is not shown to the sandbox',
    async () => {
      const { root, script, work } = installInTmp();
      const c = new McpConnection(
        stdioServer('bare', { args: [script], sandbox: 'workspace', startupTimeoutMs: 10_000 }),
        { cwd: work, hide: [root], notify: () => undefined },
      );
      connections.push(c);
      await expect(c.start()).rejects.toThrow(/could not be started|did not start/);
    },
  );
});
