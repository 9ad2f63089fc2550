// edit: one or more text replacements located against the original file (exact first, then
// fuzzy), spliced at original coordinates so untouched bytes stay untouched (CRLF, BOM and
// all). Results carry a unified diff in details.
import { open, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import type { AgentTool, AgentToolResult } from '../agent/types.js';
import { hardLinkRefusal, replaceEntry, replaceFailure } from './atomic-write.js';
import { READ_NOFOLLOW, type ConfinedEntry } from './confined-path.js';
import { TOOL_DEFAULTS } from './defaults.js';
import { unifiedDiff } from './diff.js';
import { closestLine, lineNumbersAt, locate, normalizeForMatch, type NormalizedText } from './fuzzy-match.js';
import { errorMessage, FILE_PATH_ALIASES, textResult, throwIfAborted } from './tool-result.js';
import { Workspace, type WorkspaceOptions } from './workspace.js';
import { isRecord } from '../util/unknown-value.js';

const editItem = z.object({
  oldText: z.string().describe('Text to find; must match the file exactly and be unique in it'),
  newText: z.string().describe('Replacement text'),
});

/** Accepts the single-pair form models often send ({oldText, newText} or old_string/new_string). */
function liftSinglePair(input: unknown): unknown {
  if (!isRecord(input) || input.edits !== undefined) return input;
  const oldText = input.oldText ?? input.old_text ?? input.old_string ?? input.oldString;
  const newText = input.newText ?? input.new_text ?? input.new_string ?? input.newString;
  if (oldText === undefined && newText === undefined) return input;
  const rest = Object.fromEntries(
    Object.entries(input).filter(
      ([k]) =>
        !['oldText', 'old_text', 'old_string', 'oldString', 'newText', 'new_text', 'new_string', 'newString'].includes(
          k,
        ),
    ),
  );
  return { ...rest, edits: [{ oldText, newText }] };
}

export const editParameters = z.preprocess(
  liftSinglePair,
  z.object({
    path: z.string().describe('Path of the file to edit'),
    edits: z.array(editItem).min(1).describe('Replacements, each located in the original file; they must not overlap'),
  }),
);

export interface EditToolDetails {
  /** Unified diff of the change. */
  diff: string;
  /** 1-based line of the first change in the new file. */
  firstChangedLine: number | undefined;
  /** Which edits needed fuzzy matching (1-based). */
  fuzzyEdits?: number[];
}

export type EditToolOptions = WorkspaceOptions;

const BOM = '\uFEFF';

function label(index: number, total: number): string {
  return total === 1 ? 'the edit' : `edit ${index + 1} of ${total}`;
}

export function createEditTool(options: EditToolOptions): AgentTool<typeof editParameters, EditToolDetails> {
  const workspace = new Workspace(options);

  return {
    name: 'edit',
    label: 'Edit',
    description:
      'Edit a file by replacing text. Each oldText must match the file exactly (including whitespace and indentation) ' +
      'and occur once; include surrounding lines to make it unique. Several non-overlapping edits may be given at once; ' +
      'they are all located in the original file. The file is replaced as a whole (an interrupted edit leaves the old content); ' +
      'a file with more than one hard link is refused.',
    promptSnippet: 'Make precise text replacements in files (oldText must match exactly)',
    parameters: editParameters,
    argumentAliases: FILE_PATH_ALIASES,
    async execute(_id, params, signal) {
      throwIfAborted(signal);
      const path = params.path;
      // The folder stays open from the read to the replacement: a folder swapped for a symlink
      // meanwhile (a parallel bash call) cannot redirect the write (confined-path.ts).
      let entry: ConfinedEntry;
      try {
        entry = workspace.locate(path, 'write');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT')
          throw new Error(`File not found: ${path} (${errorMessage(err)}). Use write to create a new file.`);
        throw err;
      }
      try {
        return await editEntry(entry, path, params.edits, signal);
      } finally {
        entry.close();
      }
    },
  };
}

async function editEntry(
  entry: ConfinedEntry,
  path: string,
  edits: readonly { oldText: string; newText: string }[],
  signal: AbortSignal | undefined,
): Promise<AgentToolResult<EditToolDetails>> {
  let handle: FileHandle;
  let raw: Buffer;
  try {
    handle = await open(entry.path, READ_NOFOLLOW);
  } catch (err) {
    throw new Error(`File not found: ${path} (${errorMessage(err)}). Use write to create a new file.`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`File not found: ${path} (not a regular file). Use write to create a new file.`);
    // Refused before any work; replaceEntry checks again at the moment it writes.
    if (st.nlink > 1) throw new Error(hardLinkRefusal(path, st.nlink));
    raw = await handle.readFile();
  } finally {
    await handle.close();
  }
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw); // keep the BOM to restore it
  } catch {
    throw new Error(`${path} is not valid UTF-8 text, so it cannot be edited safely. Use bash for binary files.`);
  }
  const hasBom = decoded.startsWith(BOM);
  const content = hasBom ? decoded.slice(1) : decoded;
  const crlf = /^[^\n]*\r\n/.test(content);

  let normalized: NormalizedText | undefined;
  const getNormalized = (): NormalizedText => (normalized ??= normalizeForMatch(content));
  const total = edits.length;
  const spans: { start: number; end: number; newText: string; index: number }[] = [];
  const fuzzyEdits: number[] = [];

  edits.forEach((edit, index) => {
    if (edit.oldText === '') {
      throw new Error(
        `oldText of ${label(index, total)} is empty. To replace a whole file use write; to insert text, put a nearby line in oldText and repeat it in newText.`,
      );
    }
    if (edit.oldText === edit.newText) {
      throw new Error(
        `oldText and newText of ${label(index, total)} are identical, so nothing would change in ${path}. Give the text as it should read afterwards.`,
      );
    }
    const match = locate(content, edit.oldText, getNormalized);
    if (match.kind === 'none') {
      const near = closestLine(content, edit.oldText, TOOL_DEFAULTS.editHintMaxLines);
      const hint = near ? ` The most similar line is ${near.line}: ${JSON.stringify(near.text)}.` : '';
      throw new Error(
        `Could not find the oldText of ${label(index, total)} in ${path}. It must match the file exactly, including whitespace, indentation and line breaks ` +
          `(differences in trailing spaces, quotes, dashes and line endings are tolerated). Read the file again and copy the text from it.${hint}`,
      );
    }
    if (match.kind === 'ambiguous') {
      const lines = lineNumbersAt(content, match.starts);
      const shown = lines.slice(0, 20).join(', ') + (lines.length > 20 ? ', ...' : '');
      const how = match.fuzzy ? ' (after normalizing whitespace, quotes and line endings)' : '';
      throw new Error(
        `Found ${match.starts.length} occurrences of the oldText of ${label(index, total)} in ${path}${how} at lines ${shown}. ` +
          'The text must be unique: include more surrounding lines so it matches only one place.',
      );
    }
    if (match.fuzzy) fuzzyEdits.push(index + 1);
    // Inserted text follows the file's line endings; everything else stays as it was.
    const newText = crlf ? edit.newText.replace(/\r?\n/g, '\r\n') : edit.newText;
    spans.push({ start: match.start, end: match.end, newText, index });
  });

  spans.sort((x, y) => x.start - y.start);
  for (let i = 1; i < spans.length; i++) {
    const prev = spans[i - 1];
    const cur = spans[i];
    if (prev && cur && cur.start < prev.end) {
      throw new Error(
        `Edits ${prev.index + 1} and ${cur.index + 1} overlap in ${path}; each edit must change a separate region of the original file. Merge them into one edit.`,
      );
    }
  }

  let updated = '';
  let pos = 0;
  for (const span of spans) {
    updated += content.slice(pos, span.start) + span.newText;
    pos = span.end;
  }
  updated += content.slice(pos);
  if (updated === content) {
    throw new Error(
      `No changes made to ${path}: the replacement produced identical content. Check that newText differs from the file's text.`,
    );
  }

  throwIfAborted(signal);
  try {
    await replaceEntry(entry.dir, entry.name, (hasBom ? BOM : '') + updated, { refuseHardLinks: true });
  } catch (err) {
    throw replaceFailure(path, err);
  }
  const { diff, firstChangedLine } = unifiedDiff(content, updated, { path });
  const what = total === 1 ? 'Successfully replaced text in' : `Successfully applied ${total} edits to`;
  const details: EditToolDetails = { diff, firstChangedLine };
  if (fuzzyEdits.length > 0) details.fuzzyEdits = fuzzyEdits;
  return textResult(`${what} ${path}.`, details);
}
