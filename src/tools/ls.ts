// ls: one folder's entries, dotfiles included, sorted, folders marked with a trailing slash.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { AgentTool, AgentToolResult } from '../agent/types.js';
import { openConfinedDir, withShownPath, type ConfinedEntry } from './confined-path.js';
import { TOOL_DEFAULTS } from './defaults.js';
import { errorMessage, textResult, throwIfAborted } from './tool-result.js';
import type { TruncationResult } from './truncate.js';
import { Workspace, type WorkspaceOptions } from './workspace.js';
import { listingResult } from './listing-result.js';

export const lsParameters = z.object({
  path: z.string().optional().describe('Folder to list (default: the working directory)'),
  limit: z.number().int().min(1).optional().describe('Maximum number of entries (default 500)'),
});

export interface LsToolDetails {
  truncation?: TruncationResult;
  entryLimitReached?: number;
}

export interface LsToolOptions extends WorkspaceOptions {
  maxBytes?: number;
}

export function createLsTool(options: LsToolOptions): AgentTool<typeof lsParameters, LsToolDetails> {
  const workspace = new Workspace(options);
  const maxBytes = options.maxBytes ?? TOOL_DEFAULTS.maxBytes;
  return {
    name: 'ls',
    label: 'List',
    description: `List a folder's entries (hidden ones included), sorted, folders ending in '/'. Up to ${TOOL_DEFAULTS.lsLimit} entries by default.`,
    promptSnippet: 'List folder contents',
    parameters: lsParameters,
    argumentAliases: { dir: 'path', directory: 'path' },
    async execute(_id, params, signal) {
      throwIfAborted(signal);
      const shown = params.path ?? '.';
      const abs = workspace.resolve(shown, 'read');
      const limit = params.limit ?? TOOL_DEFAULTS.lsLimit;
      // Located and opened race-free (confined-path.ts): the folder listed is the folder checked.
      let entry: ConfinedEntry;
      try {
        entry = workspace.locate(shown, 'read');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`Path not found: ${abs}`);
        throw err;
      }
      let folder: { path: string; close(): void };
      try {
        folder = openConfinedDir(entry);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTDIR') throw new Error(`Not a directory: ${abs}. Use read to see a file.`);
        if (code === 'ENOENT') throw new Error(`Path not found: ${abs}`);
        throw new Error(`Cannot read directory: ${errorMessage(withShownPath(err, shown))}`);
      } finally {
        entry.close();
      }
      try {
        return await listFolder(folder.path);
      } finally {
        folder.close();
      }

      async function listFolder(dir: string): Promise<AgentToolResult<LsToolDetails>> {
        const info = await stat(dir);
        if (!info.isDirectory()) throw new Error(`Not a directory: ${abs}. Use read to see a file.`);
        let names: string[];
        try {
          names = await readdir(dir);
        } catch (err) {
          throw new Error(`Cannot read directory: ${errorMessage(withShownPath(err, shown))}`);
        }
        names.sort((a, b) => {
          const x = a.toLowerCase();
          const y = b.toLowerCase();
          return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
        });
        const entries: string[] = [];
        for (const name of names) {
          if (entries.length >= limit) break;
          try {
            const s = await stat(join(dir, name));
            entries.push(s.isDirectory() ? `${name}/` : name);
          } catch {
            // a dangling link or a file removed meanwhile: skipped
          }
        }
        throwIfAborted(signal);
        if (entries.length === 0) return textResult('(empty directory)');

        return listingResult<LsToolDetails>(entries, maxBytes, {
          hit: names.length > limit && entries.length >= limit,
          text: `${limit} entries limit reached (${names.length} in total). Use limit=${limit * 2} for more`,
          details: { entryLimitReached: limit },
        });
      }
    },
  };
}
