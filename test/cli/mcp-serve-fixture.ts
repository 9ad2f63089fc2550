// A project for the `orchestrate mcp serve` tests: recipes on the scripted model whose agents wait
// in a bash call for a release file the test creates, and `mcp serve` started in that folder and
// connected to the real MCP SDK client over stdio. Everything a test starts is stopped by cleanup().
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

export const CLIENT_NAME = 'mcp-serve-test';

export type ToolResult = CallToolResult & { structuredContent?: Record<string, unknown> };

export interface Served {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  /** Errors the client saw on the wire (a stray line on the server's stdout would be one). */
  wireErrors: Error[];
}

export const textOf = (r: ToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

const wait = (f: string) => JSON.stringify(`while [ ! -f '${f}' ]; do sleep 0.05; done; echo released`);

/** Agents whose prompt names one of these wait for release-<name> in the project folder. */
const HELD = ['slow', 'hold', 'crash'] as const;

export class McpProject {
  readonly dir = mkdtempSync(join(tmpdir(), 'orch-mcp-serve-'));
  private readonly servers: Served[] = [];
  /** Run processes to kill at cleanup (they are detached: nothing else would stop them). */
  readonly pids: number[] = [];

  constructor() {
    const task = (id: string, extra = '') =>
      `  - id: ${id}\n    agent: w\n    prompt: "${id.toUpperCase()} task"\n${extra}`;
    const recipe = (name: string, tasks: string, head = '') =>
      `name: ${name}\nprovider: scripted\nscript: script.yaml\n${head}agents:\n  w: { tools: [bash] }\ntasks:\n${tasks}`;
    // slow waits; quick answers; after needs slow (and runs although slow is cancelled).
    this.write(
      'recipe.yaml',
      recipe(
        'mcp-serve',
        task('slow', '    on_failure: continue\n') + task('quick') + task('after', '    needs: [slow]\n'),
        'concurrency: 3\n',
      ),
    );
    this.write('hold.yaml', recipe('mcp-hold', task('hold')));
    this.write('crash.yaml', recipe('mcp-crash', task('crash')));
    const held = HELD.map(
      (n) =>
        `  - match: "${n.toUpperCase()}"\n    turns:\n      - tools: [{ name: bash, args: { command: ${wait(this.release(n))} } }]\n      - text: "${n} finished"\n`,
    );
    const quick = ['quick', 'after'].map(
      (n) => `  - match: "${n.toUpperCase()}"\n    turns:\n      - text: "${n} finished"\n`,
    );
    this.write('script.yaml', `conversations:\n${[...held, ...quick].join('')}`);
    this.write('broken.yaml', 'name: broken\ntasks:\n  - id: a\n    prompt: x\n    needs: [nope]\n');
  }

  write(name: string, text: string): void {
    writeFileSync(join(this.dir, name), text);
  }

  release(name: (typeof HELD)[number]): string {
    return join(this.dir, `release-${name}`);
  }

  runDirOf(runId: string): string {
    return join(this.dir, '.orchestrate', 'runs', runId);
  }

  /** `orchestrate mcp serve` in the project folder, connected to an SDK client. */
  async serve(extra: string[] = []): Promise<Served> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...CLI_NODE_ARGS, 'mcp', 'serve', ...extra],
      cwd: this.dir,
      env: { ...getDefaultEnvironment(), NO_COLOR: '1' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const client = new Client({ name: CLIENT_NAME, version: '1.0.0' });
    const wireErrors: Error[] = [];
    client.onerror = (e) => wireErrors.push(e);
    // A cold start of the CLI under tsx on a loaded 2-core machine takes seconds.
    await client.connect(transport, { timeout: 120_000 });
    const served = { client, transport, stderr: () => stderr, wireErrors };
    this.servers.push(served);
    return served;
  }

  async cleanup(): Promise<void> {
    for (const name of HELD) writeFileSync(this.release(name), 'x');
    for (const s of this.servers) await s.client.close().catch(() => undefined);
    for (const pid of this.pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // ended already
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A tool call with a long timeout (cold starts on a loaded machine), or the options given. */
export async function call(
  s: Served,
  name: string,
  args: Record<string, unknown>,
  opts: { timeout?: number; resetTimeoutOnProgress?: boolean; onprogress?: (p: Progress) => void } = {},
): Promise<ToolResult> {
  return (await s.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...opts })) as ToolResult;
}
