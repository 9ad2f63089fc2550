// find: files and folders whose name (or, for patterns with a '/', whose path) matches a glob;
// gitignore-aware, hidden files included.
import { basename } from 'node:path';
import { z } from 'zod';
import type { AgentTool } from '../agent/types.js';
import { TOOL_DEFAULTS } from './defaults.js';
import { hiddenFilter, walkTree } from './file-walk.js';
import { compileGlob } from './glob.js';
import { statOrNotFound, textResult, throwIfAborted } from './tool-result.js';
import type { TruncationResult } from './truncate.js';
import { Workspace, isInside, type WorkspaceOptions } from './workspace.js';
import { listingResult } from './listing-result.js';

export const findParameters = z.object({
  pattern: z
    .string()
    .describe("Glob for file names, e.g. '*.ts'; with a '/', matched against the path, e.g. 'src/**/*.test.ts'"),
  path: z.string().optional().describe('Folder to search (default: the working directory)'),
  limit: z.number().int().min(1).optional().describe('Maximum number of results (default 1000)'),
});

export interface FindToolDetails {
  truncation?: TruncationResult;
  resultLimitReached?: number;
}

export interface FindToolOptions extends WorkspaceOptions {
  maxBytes?: number;
}

export function createFindTool(options: FindToolOptions): AgentTool<typeof findParameters, FindToolDetails> {
  const workspace = new Workspace(options);
  const maxBytes = options.maxBytes ?? TOOL_DEFAULTS.maxBytes;
  return {
    name: 'find',
    label: 'Find',
    description:
      `Find files and folders by glob (*, **, ?, [..], {a,b}). Respects .gitignore, includes hidden files; ` +
      `paths are relative to the searched folder, folders end in '/'. Up to ${TOOL_DEFAULTS.findLimit} results by default.`,
    promptSnippet: 'Find files by glob pattern (respects .gitignore)',
    parameters: findParameters,
    argumentAliases: { glob: 'pattern', name: 'pattern', dir: 'path' },
    async execute(_id, params, signal) {
      throwIfAborted(signal);
      const abs = workspace.resolve(params.path ?? '.', 'read');
      const info = await statOrNotFound(abs, params.path ?? '.');
      if (!info.isDirectory())
        throw new Error(`Not a directory: ${params.path}. find searches folders; use read for a file.`);
      const limit = params.limit ?? TOOL_DEFAULTS.findLimit;
      const pattern = params.pattern.replace(/^\.\//, '');
      const re = compileGlob(pattern);
      const byName = !pattern.includes('/');

      const results: string[] = [];
      let limitReached = false;
      const inherit = isInside(workspace.root, abs) ? workspace.root : undefined;
      for await (const entry of walkTree(abs, {
        inheritIgnoreFrom: inherit,
        signal,
        exclude: hiddenFilter(workspace, abs),
      })) {
        if (!re.test(byName ? basename(entry.rel) : entry.rel)) continue;
        if (results.length >= limit) {
          limitReached = true;
          break;
        }
        results.push(entry.isDir ? `${entry.rel}/` : entry.rel);
      }
      if (results.length === 0) return textResult('No files found matching pattern');

      return listingResult<FindToolDetails>(results, maxBytes, {
        hit: limitReached,
        text: `${limit} results limit reached. Use limit=${limit * 2} for more, or refine pattern`,
        details: { resultLimitReached: limit },
      });
    },
  };
}
