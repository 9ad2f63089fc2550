// write: create or overwrite a file, creating parent folders as needed.
import { z } from 'zod';
import type { AgentTool } from '../agent/types.js';
import { replaceEntry, replaceFailure } from './atomic-write.js';
import { FILE_PATH_ALIASES, textResult, throwIfAborted } from './tool-result.js';
import { Workspace, type WorkspaceOptions } from './workspace.js';

export const writeParameters = z.object({
  path: z.string().describe('Path of the file to write (created with its parent folders if missing)'),
  content: z.string().describe('The complete new content of the file'),
});

export type WriteToolOptions = WorkspaceOptions;

export function createWriteTool(options: WriteToolOptions): AgentTool<typeof writeParameters> {
  const workspace = new Workspace(options);
  return {
    name: 'write',
    label: 'Write',
    description:
      'Write a file: creates it (and missing parent folders) or replaces its whole content. ' +
      'Use it for new files and complete rewrites; use edit for changes to an existing file. ' +
      'The file is replaced as a whole (an interrupted write leaves the old content); a file with more than one hard link is refused.',
    promptSnippet: 'Create or overwrite files',
    parameters: writeParameters,
    argumentAliases: { ...FILE_PATH_ALIASES, text: 'content' },
    async execute(_id, params, signal) {
      throwIfAborted(signal);
      // The folder is walked and held open race-free (confined-path.ts), missing folders made on the way.
      const entry = workspace.locate(params.path, 'write', { createParents: true });
      try {
        throwIfAborted(signal);
        if (entry.name === '') throw Object.assign(new Error('it is a folder'), { code: 'EISDIR' });
        await replaceEntry(entry.dir, entry.name, params.content, { refuseHardLinks: true });
      } catch (err) {
        throw replaceFailure(params.path, err);
      } finally {
        entry.close();
      }
      return textResult(`Successfully wrote ${Buffer.byteLength(params.content, 'utf8')} bytes to ${params.path}`);
    },
  };
}
