// read: a file's head (lines and bytes limited) with a notice saying exactly where to continue,
// images as image content, binary files refused.
import { open, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import type { AgentTool, AgentToolResult } from '../agent/types.js';
import { READ_NOFOLLOW, withShownPath } from './confined-path.js';
import { TOOL_DEFAULTS } from './defaults.js';
import { IMAGE_SNIFF_BYTES, detectImageMime } from './image-sniff.js';
import { errorMessage, FILE_PATH_ALIASES, shellQuote, textResult, throwIfAborted } from './tool-result.js';
import { countNewlines, formatSize, truncateHead, type TruncationResult } from './truncate.js';
import { isValidUtf8Prefix } from './utf8.js';
import { Workspace, type WorkspaceOptions } from './workspace.js';

export const readParameters = z.object({
  path: z.string().describe('Path of the file to read (relative to the working directory, or absolute)'),
  offset: z.number().int().min(1).optional().describe('Line number to start from (1-based)'),
  limit: z.number().int().min(1).optional().describe('Maximum number of lines to return'),
});

export interface ReadToolDetails {
  truncation?: TruncationResult;
}

export interface ReadToolOptions extends WorkspaceOptions {
  maxLines?: number;
  maxBytes?: number;
  imageMaxBytes?: number;
}

/** Byte offset where 1-based line `line` starts, scanning newlines from `from`. */
function lineStartByte(buf: Buffer, line: number, from = 0): number {
  let pos = from;
  for (let i = 1; i < line; i++) {
    const nl = buf.indexOf(10, pos);
    if (nl === -1) return buf.length;
    pos = nl + 1;
  }
  return pos;
}

async function sniff(handle: FileHandle, bytes: number): Promise<Buffer> {
  const buf = Buffer.alloc(bytes);
  const { bytesRead } = await handle.read(buf, 0, bytes, 0);
  return buf.subarray(0, bytesRead);
}

/** The whole file from its start (readFile on a handle continues from the current position). */
async function readAll(handle: FileHandle, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const buf = Buffer.alloc(Math.max(64 * 1024, size - pos + 1));
    const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    chunks.push(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
  return Buffer.concat(chunks);
}

export function createReadTool(options: ReadToolOptions): AgentTool<typeof readParameters, ReadToolDetails> {
  const workspace = new Workspace(options);
  const maxLines = options.maxLines ?? TOOL_DEFAULTS.maxLines;
  const maxBytes = options.maxBytes ?? TOOL_DEFAULTS.maxBytes;
  const imageMaxBytes = options.imageMaxBytes ?? TOOL_DEFAULTS.imageMaxBytes;

  return {
    name: 'read',
    label: 'Read',
    description:
      `Read a file. Text output is limited to ${maxLines} lines or ${formatSize(maxBytes)}, whichever comes first; ` +
      'a notice then gives the offset to continue from. Use offset and limit for large files. ' +
      'PNG, JPEG, GIF and WebP images are returned as images.',
    promptSnippet: 'Read file contents (text, or images as attachments)',
    parameters: readParameters,
    argumentAliases: FILE_PATH_ALIASES,
    async execute(_id, params, signal) {
      throwIfAborted(signal);
      // Located and opened race-free (confined-path.ts); everything below reads through the handle.
      let handle: FileHandle;
      const abs = workspace.resolve(params.path, 'read');
      try {
        const entry = workspace.locate(params.path, 'read');
        try {
          handle = await open(entry.path, READ_NOFOLLOW).catch((err: unknown) =>
            Promise.reject(withShownPath(err, abs)),
          );
        } finally {
          entry.close();
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES')
          throw new Error(`${errorMessage(err)} (path "${params.path}"). Check the name with ls or find.`);
        throw err;
      }
      try {
        return await readOpened(handle);
      } finally {
        await handle.close();
      }

      async function readOpened(handle: FileHandle): Promise<AgentToolResult<ReadToolDetails>> {
        const info = await handle.stat();
        if (info.isDirectory()) throw new Error(`"${params.path}" is a directory, not a file. Use ls to list it.`);

        const head = await sniff(handle, Math.max(IMAGE_SNIFF_BYTES, TOOL_DEFAULTS.binarySniffBytes));
        const mime = detectImageMime(head);
        if (mime) {
          if (info.size > imageMaxBytes) {
            throw new Error(
              `Image "${params.path}" is ${formatSize(info.size)}, above the ${formatSize(imageMaxBytes)} limit for images, and no resizer is available. ` +
                `Make a smaller copy first (for example with bash: convert, sips or ffmpeg) and read that.`,
            );
          }
          const data = await readAll(handle, info.size);
          throwIfAborted(signal);
          return {
            content: [
              { type: 'text', text: `Read image file [${mime}]` },
              { type: 'image', data: data.toString('base64'), mimeType: mime },
            ],
          };
        }
        if (head.includes(0) || !isValidUtf8Prefix(head)) {
          throw new Error(
            `"${params.path}" looks like a binary file (NUL bytes or invalid UTF-8 in its first ${formatSize(TOOL_DEFAULTS.binarySniffBytes)}), so it is not shown as text. ` +
              `Inspect it with bash instead (for example: file, xxd | head, strings).`,
          );
        }

        let buf = await readAll(handle, info.size);
        throwIfAborted(signal);
        if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
        // A final newline ends the last line rather than starting an empty one.
        if (buf[buf.length - 1] === 10) buf = buf.subarray(0, buf.length - 1);
        const totalLines = info.size === 0 ? 0 : countNewlines(buf) + 1;
        const startLine = params.offset ?? 1;
        if (totalLines === 0) {
          if (startLine > 1) throw new Error(`Offset ${startLine} is beyond the end of the file (0 lines)`);
          return textResult('(empty file)');
        }
        if (startLine > totalLines)
          throw new Error(`Offset ${startLine} is beyond the end of the file (${totalLines} lines)`);

        const startByte = lineStartByte(buf, startLine);
        const selectedLines = Math.min(params.limit ?? Infinity, totalLines - startLine + 1);
        const lastShown = startLine + selectedLines - 1;
        // With more lines after the selection, it ends just before the newline that starts them.
        const endByte = lastShown < totalLines ? lineStartByte(buf, selectedLines + 1, startByte) - 1 : buf.length;
        const selection = buf.subarray(startByte, endByte);
        const truncation = truncateHead(selection, { maxLines, maxBytes });

        if (truncation.firstLineExceedsLimit) {
          const nl = buf.indexOf(10, startByte);
          const lineBytes = (nl === -1 ? buf.length : nl) - startByte;
          const text =
            `[Line ${startLine} is ${formatSize(lineBytes)}, exceeds the ${formatSize(maxBytes)} limit. ` +
            `Use bash: sed -n '${startLine}p' ${shellQuote(params.path)} | head -c ${maxBytes}]`;
          return textResult(text, { truncation });
        }
        if (truncation.truncated) {
          const endLine = startLine + truncation.outputLines - 1;
          const limitNote = truncation.truncatedBy === 'bytes' ? ` (${formatSize(maxBytes)} limit)` : '';
          const text = `${truncation.content}\n\n[Showing lines ${startLine}-${endLine} of ${totalLines}${limitNote}. Use offset=${endLine + 1} to continue.]`;
          return textResult(text, { truncation });
        }
        if (lastShown < totalLines) {
          const text = `${truncation.content}\n\n[${totalLines - lastShown} more lines in file. Use offset=${lastShown + 1} to continue.]`;
          return textResult(text);
        }
        return textResult(truncation.content);
      }
    },
  };
}
