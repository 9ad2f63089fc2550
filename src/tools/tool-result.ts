// Small pieces every tool uses to build results and honour aborts.
import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { AgentToolResult } from '../agent/types.js';

/** A result with one text block and optional details (details never reach the model). */
export function textResult<TDetails>(text: string, details?: TDetails): AgentToolResult<TDetails> {
  return details === undefined ? { content: [{ type: 'text', text }] } : { content: [{ type: 'text', text }], details };
}

/** What models call a file tool's `path` (Claude Code's file_path among them): read, edit and write take each. */
export const FILE_PATH_ALIASES: Readonly<Record<string, string>> = {
  file_path: 'path',
  filePath: 'path',
  file: 'path',
};

/** Throws the standard abort error when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('Operation aborted');
}

/** Quotes a value for a POSIX shell command line shown to the model. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The message of anything thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** stat of a resolved path, or the tools' "Path not found" error naming what the model wrote. */
export async function statOrNotFound(abs: string, asWritten: string): Promise<Stats> {
  try {
    return await stat(abs);
  } catch {
    throw new Error(`Path not found: ${asWritten} (${abs})`);
  }
}
