// Shared test plumbing: temp folders and calling a tool the way the pipeline does
// (schema parse first, then execute with a live signal).
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type AgentToolResult, type AgentToolUpdate, type AnyAgentTool } from '../../src/agent/types.js';

const made: string[] = [];

/** A fresh temp folder (real path, so symlinked /tmp setups compare equal), removed after the test. */
export function tempDir(prefix = 'tools-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export async function runTool(
  tool: AnyAgentTool,
  args: unknown,
  options: { signal?: AbortSignal; onUpdate?: AgentToolUpdate } = {},
): Promise<AgentToolResult> {
  const params: unknown = tool.parameters.parse(args);
  return tool.execute('call-1', params, options.signal ?? new AbortController().signal, options.onUpdate ?? (() => {}));
}

/** The text of a result's first text block. */
export function textOf(result: AgentToolResult): string {
  const block = result.content.find((c) => c.type === 'text');
  return block && block.type === 'text' ? block.text : '';
}

/** Runs the tool and returns the error message it throws (fails the test if it succeeds). */
export async function errorOf(tool: AnyAgentTool, args: unknown, options?: { signal?: AbortSignal }): Promise<string> {
  try {
    const r = await runTool(tool, args, options);
    throw new Error(`expected an error, got: ${textOf(r)}`);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('expected an error')) throw err;
    return err instanceof Error ? err.message : String(err);
  }
}
