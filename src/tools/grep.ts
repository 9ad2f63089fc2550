// grep: regex (or literal) search over a file or a tree, gitignore-aware, hidden files
// included, with match, line-length and byte limits that each say how to get more.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import type { AgentTool } from '../agent/types.js';
import { TOOL_DEFAULTS } from './defaults.js';
import { READ_NOFOLLOW } from './confined-path.js';
import { hiddenFilter, walkTree } from './file-walk.js';
import { compileGlob } from './glob.js';
import { errorMessage, statOrNotFound, textResult, throwIfAborted } from './tool-result.js';
import { truncateLine, type TruncationResult } from './truncate.js';
import { Workspace, isInside, type WorkspaceOptions } from './workspace.js';
import { listingResult } from './listing-result.js';

export const grepParameters = z.object({
  pattern: z.string().describe('Regular expression (JavaScript syntax) or, with literal=true, plain text'),
  path: z.string().optional().describe('File or folder to search (default: the working directory)'),
  glob: z
    .string()
    .optional()
    .describe("Only search files matching this glob, e.g. '*.ts' or 'src/**/*.ts' ('!' prefix excludes)"),
  ignoreCase: z.boolean().optional().describe('Case-insensitive search'),
  literal: z.boolean().optional().describe('Treat the pattern as plain text'),
  context: z.number().int().min(0).optional().describe('Lines of context before and after each match'),
  limit: z.number().int().min(1).optional().describe('Maximum number of matches (default 100)'),
});

export interface GrepToolDetails {
  truncation?: TruncationResult;
  matchLimitReached?: number;
  linesTruncated?: boolean;
}

export interface GrepToolOptions extends WorkspaceOptions {
  maxBytes?: number;
}

function buildRegex(pattern: string, literal: boolean, ignoreCase: boolean): RegExp {
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern;
  const flags = ignoreCase ? 'i' : '';
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags); // some everyday escapes are only legal without the u flag
    } catch (err) {
      throw new Error(
        `Invalid regular expression ${JSON.stringify(pattern)}: ${errorMessage(err)}. Fix it, or pass literal=true to search for the text as written.`,
      );
    }
  }
}

function fileFilter(glob: string | undefined): (rel: string) => boolean {
  if (!glob) return () => true;
  // A leading ! excludes ("!*.min.js"); "!(x)" is an extglob, not an exclusion.
  const exclude = glob.startsWith('!') && !glob.startsWith('!(');
  const pattern = exclude ? glob.slice(1) : glob;
  const re = compileGlob(pattern.replace(/^\.\//, ''));
  const byName = !pattern.includes('/');
  return (rel) => re.test(byName ? basename(rel) : rel) !== exclude;
}

export function createGrepTool(options: GrepToolOptions): AgentTool<typeof grepParameters, GrepToolDetails> {
  const workspace = new Workspace(options);
  const maxBytes = options.maxBytes ?? TOOL_DEFAULTS.maxBytes;
  const maxLineLength = TOOL_DEFAULTS.grepMaxLineLength;
  return {
    name: 'grep',
    label: 'Grep',
    description:
      `Search file contents for a regular expression (or literal text). Respects .gitignore, includes hidden files. ` +
      `Prints 'file:line: text' for matches and 'file-line- text' for context lines. Up to ${TOOL_DEFAULTS.grepLimit} matches by default; ` +
      `lines longer than ${maxLineLength} characters are cut.`,
    promptSnippet: 'Search file contents by regex (respects .gitignore)',
    parameters: grepParameters,
    argumentAliases: {
      query: 'pattern',
      regex: 'pattern',
      dir: 'path',
      include: 'glob',
      case_insensitive: 'ignoreCase',
    },
    async execute(_id, params, signal) {
      throwIfAborted(signal);
      const abs = workspace.resolve(params.path ?? '.', 'read');
      const info = await statOrNotFound(abs, params.path ?? '.');
      const regex = buildRegex(params.pattern, params.literal ?? false, params.ignoreCase ?? false);
      const limit = params.limit ?? TOOL_DEFAULTS.grepLimit;
      const context = params.context ?? 0;
      const accepts = fileFilter(params.glob);

      const out: string[] = [];
      let matches = 0;
      let limitReached = false;
      let linesTruncated = false;
      const cap = (line: string): string => {
        const r = truncateLine(line, maxLineLength);
        if (r.wasTruncated) linesTruncated = true;
        return r.text;
      };

      const searchFile = async (path: string, shown: string): Promise<void> => {
        let buf: Buffer;
        try {
          buf = await readFile(path, { flag: READ_NOFOLLOW });
        } catch {
          return; // unreadable files are skipped
        }
        if (buf.subarray(0, TOOL_DEFAULTS.binarySniffBytes).includes(0)) return; // binary
        // A UTF-8 byte order mark is not text: strip it so ^import matches line 1 (as ripgrep and read do).
        const text = buf.toString('utf8');
        const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split('\n');
        const hits: number[] = [];
        for (let i = 0; i < lines.length && matches < limit; i++) {
          const line = (lines[i] as string).replace(/\r$/, '');
          if (regex.test(line)) {
            hits.push(i);
            matches++;
          }
        }
        if (hits.length === 0) return;
        if (matches >= limit) limitReached = true;
        const isHit = new Set(hits);
        let printedUpTo = -1;
        for (const h of hits) {
          const from = Math.max(0, h - context, printedUpTo + 1);
          const to = Math.min(lines.length - 1, h + context);
          if (context > 0 && printedUpTo >= 0 && from > printedUpTo + 1) out.push('--');
          for (let i = from; i <= to; i++) {
            const text = cap((lines[i] as string).replace(/\r$/, ''));
            out.push(isHit.has(i) ? `${shown}:${i + 1}: ${text}` : `${shown}-${i + 1}- ${text}`);
          }
          printedUpTo = Math.max(printedUpTo, to);
        }
      };

      if (info.isDirectory()) {
        const inherit = isInside(workspace.root, abs) ? workspace.root : undefined;
        for await (const entry of walkTree(abs, {
          inheritIgnoreFrom: inherit,
          signal,
          exclude: hiddenFilter(workspace, abs),
        })) {
          if (entry.isDir || entry.isSymlink || !accepts(entry.rel)) continue;
          await searchFile(entry.openPath, entry.rel);
          if (matches >= limit) break;
        }
      } else {
        const entry = workspace.locate(params.path ?? '.', 'read');
        try {
          await searchFile(entry.path, basename(abs));
        } finally {
          entry.close();
        }
      }
      throwIfAborted(signal);
      if (out.length === 0) return textResult('No matches found');

      return listingResult<GrepToolDetails>(
        out,
        maxBytes,
        {
          hit: limitReached,
          text: `${limit} matches limit reached. Use limit=${limit * 2} for more, or refine pattern`,
          details: { matchLimitReached: limit },
        },
        [
          {
            hit: linesTruncated,
            text: `Some lines truncated to ${maxLineLength} chars. Use read tool to see full lines`,
            details: { linesTruncated: true },
          },
        ],
      );
    },
  };
}
