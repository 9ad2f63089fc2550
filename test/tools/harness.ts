// Shared test plumbing: temp folders and calling a tool the way the pipeline does
// (schema parse first, then execute with a live signal).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { AgentToolResult, AgentToolUpdate, AnyAgentTool } from '../../src/agent/types.js';

const made: string[] = [];

/** A fresh temp folder (real path, so symlinked /tmp setups compare equal), removed after the test. */
export function tempDir(prefix = 'tools-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

const mounts: string[] = [];

afterEach(() => {
  for (const dir of mounts.splice(0)) spawnSync('umount', ['-l', dir]);
  for (const dir of made.splice(0)) {
    if (existsSync(dir)) chmodSync(dir, 0o700); // a folder a test made read-only
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh tmpfs of `size` (e.g. '64k') mounted in a temp folder; undefined where mounting is not permitted. */
export function tmpfsFolder(size: string): string | undefined {
  const dir = join(tempDir('tmpfs-'), 'mnt');
  mkdirSync(dir);
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status !== 0) return undefined;
  mounts.push(dir);
  return dir;
}

/**
 * A folder to fill, then make read-only with the returned function. Root ignores permission
 * bits, so there it is a tmpfs remounted read-only; others get chmod 0555. Undefined when
 * neither can be had (root without the right to mount).
 */
export function folderMadeReadOnly(): { dir: string; makeReadOnly: () => void } | undefined {
  if (process.getuid?.() !== 0) {
    const dir = tempDir();
    return { dir, makeReadOnly: () => chmodSync(dir, 0o555) };
  }
  const dir = tmpfsFolder('1m');
  if (!dir) return undefined;
  return {
    dir,
    makeReadOnly: () => {
      if (spawnSync('mount', ['-o', 'remount,ro', dir]).status !== 0)
        throw new Error(`could not remount ${dir} read-only`);
    },
  };
}

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
