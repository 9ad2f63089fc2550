// The MCP SDK takes a second or more to import: the CLI and a session without MCP servers must
// not load it (a resolve hook in a fresh process records every module it would load).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HOOK = `data:text/javascript,${encodeURIComponent(
  "export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.includes('@modelcontextprotocol/sdk')) process.stderr.write('SDK ' + r.url + '\\n'); return r; }",
)}`;

describe('the MCP SDK is loaded lazily', () => {
  it('importing the CLI and creating a session without MCP servers loads none of it', () => {
    const script = [
      `import { register } from 'node:module';`,
      `register(${JSON.stringify(HOOK)});`,
      `await import('./src/cli/main.ts');`,
      `const { createAgentSession } = await import('./src/runtime/create-agent-session.ts');`,
      `const s = await createAgentSession({ inMemory: true, provider: 'scripted', script: [{ text: 'hi' }], notify: () => {} });`,
      `await s.dispose();`,
      `process.stderr.write('DONE\\n');`,
    ].join('\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).toContain('DONE');
    expect(r.stderr.split('\n').filter((l) => l.startsWith('SDK '))).toEqual([]);
  }, 60_000);
});
