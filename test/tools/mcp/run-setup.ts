// A recipe run with two MCP servers (a sandboxed one from mcp_servers:, an unconfined one inline
// in a Claude Code agent file), and a way to find the servers' processes by a marker argument.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STDIO_FIXTURE } from './helpers.js';

export const dirs: string[] = [];
export function removeDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Processes whose command line contains `marker` (the servers of one test). */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? allFiles(p) : [p];
  });
}

export interface Setup {
  dir: string;
  marker: string;
  pidFile: string;
}

export function setup(script: string, opts: { scope?: 'run' | 'agent'; items?: number } = {}): Setup {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-run-'));
  dirs.push(dir);
  const marker = `mcp-marker-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const pidFile = join(dir, 'plain.pids');
  mkdirSync(join(dir, 'home'));
  writeFileSync(
    join(dir, 'recipe.yaml'),
    [
      'name: mcp-run',
      'provider: scripted',
      'script: script.yaml',
      'concurrency: 1',
      'mcp_servers:',
      '  alpha:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(STDIO_FIXTURE)}, alpha, ${marker}]`,
      '    env: { GREETING: "${MCP_TEST_GREETING:-hello}" }',
      'agents:',
      '  helper:',
      '    system_file: helper.md',
      'tasks:',
      '  - id: t',
      '    agent: helper',
      `    for_each: [${Array.from({ length: opts.items ?? 1 }, (_, i) => i + 1).join(', ')}]`,
      '    prompt: "item ${{ item }}"',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'helper.md'),
    [
      '---',
      'name: helper',
      'description: uses two MCP servers',
      'tools: Read, mcp__alpha__echo, mcp__alpha__env, mcp__alpha__slow, mcp__plain__*',
      'mcpServers:',
      '  - alpha',
      '  - plain:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(STDIO_FIXTURE)}, plain, ${marker}]`,
      '      sandbox: none',
      `      scope: ${opts.scope ?? 'agent'}`,
      `      env: { MCP_FIXTURE_PID_FILE: ${JSON.stringify(pidFile)} }`,
      '---',
      'You help.',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'script.yaml'), script);
  return { dir, marker, pidFile };
}

export const CALLS = `turns:
  - tools:
      - { name: mcp__alpha__echo, args: { text: hi } }
      - { name: mcp__alpha__env, args: { name: GREETING } }
      - { name: mcp__plain__echo, args: { text: there } }
  - text: done
`;

export const env = (dir: string) => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  ORCHESTRATE_HOME: join(dir, 'home'),
});
