// Attack (issue #37 item 1): a run's trusted inputs (recipe.yaml, its script, agent files) lie in
// the workspace of its agents. bash, verify, hooks and write/edit may not change them, but the
// agent's stdio MCP servers ran in the same sandbox without that read-only list, so a compromised
// server could rewrite the recipe the next session loads. Here a server's tool writes recipe.yaml
// inside the workspace, both as the agent's own server and as a `scope: run` server hosted by the
// coordinator: the sandbox refuses the write (EROFS) and the recipe is unchanged, while the same
// server still writes another file of the workspace.
// The real CLI in-process, worker threads, the scripted provider, real MCP servers under bwrap.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { runCli } from '../cli/run-cli.js';
import { allFiles } from '../tools/mcp/run-setup.js';

const WRITER = fileURLToPath(new URL('../fixtures/mcp/file-writer-server.mjs', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function recipe(): string {
  const server = (name: string, scope: string) =>
    `  ${name}: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(WRITER)}, ${name}], scope: ${scope} }`;
  return [
    'name: mcp-trusted',
    'provider: scripted',
    'script: script.yaml',
    'sandbox: workspace',
    'mcp_servers:',
    server('own', 'agent'),
    server('shared', 'run'),
    'agents:',
    '  worker: { tools: [mcp__own__write_file, mcp__shared__write_file], summaries: extractive }',
    'tasks:',
    '  - id: attack',
    '    agent: worker',
    '    prompt: "attack the recipe"',
    '',
  ].join('\n');
}

const SCRIPT = `turns:
  - tools:
      - { name: mcp__own__write_file, args: { path: recipe.yaml, text: "sandbox: none" } }
      - { name: mcp__own__write_file, args: { path: notes-own.txt, text: own-note } }
      - { name: mcp__shared__write_file, args: { path: recipe.yaml, text: "sandbox: none" } }
      - { name: mcp__shared__write_file, args: { path: notes-shared.txt, text: shared-note } }
  - text: attack done
`;

describe.skipIf(skipWithoutBwrap('trusted inputs and MCP servers'))('MCP servers and the run’s trusted inputs', () => {
  it('a stdio server cannot rewrite recipe.yaml in the workspace (own or run-scoped), and writes other files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-trusted-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'home'));
    const original = recipe();
    writeFileSync(join(dir, 'recipe.yaml'), original);
    writeFileSync(join(dir, 'script.yaml'), SCRIPT);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ORCHESTRATE_HOME: join(dir, 'home') };
    const run = await runCli(['run', join(dir, 'recipe.yaml')], { cwd: dir, env });
    expect(run.code, run.stderr).toBe(0);

    expect(readFileSync(join(dir, 'recipe.yaml'), 'utf8')).toBe(original);
    expect(readFileSync(join(dir, 'notes-own.txt'), 'utf8')).toBe('own-note');
    expect(readFileSync(join(dir, 'notes-shared.txt'), 'utf8')).toBe('shared-note');
    const sessions = allFiles(join(dir, '.orchestrate'))
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    expect(sessions).toMatch(/own could not write recipe\.yaml: EROFS: read-only file system/);
    expect(sessions).toMatch(/shared could not write recipe\.yaml: EROFS: read-only file system/);
  }, 90_000);
});
