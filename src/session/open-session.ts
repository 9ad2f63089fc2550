// Opening a stored session: reads it (load-session.ts), repairs what must be repaired on disk
// (a missing or corrupt header, an old format version; each rewrite keeps a backup of the
// original), indexes the entries (session-tree.ts) and picks the leaf. Split out of
// session-store.ts, which keeps the appending side and the write rule.
import { basename } from 'node:path';
import { SESSION_DEFAULTS } from './defaults.js';
import { newSessionId } from './entry-ids.js';
import { loadSession } from './load-session.js';
import { SessionTree } from './session-tree.js';
import type { SessionStorage } from './storage.js';
import { stringifyJson } from './stringify-json.js';
import type { LeafLine, SessionEntry, SessionHeader } from './types.js';

/** What a new header records. */
export interface HeaderOptions {
  /** Working directory recorded in a new header (default: process.cwd()). */
  cwd?: string;
  /** Path of the session this one was branched from. */
  parentSession?: string;
}

/** A stored session, read and indexed, ready for a SessionStore. */
export interface OpenedSession {
  header: SessionHeader;
  tree: SessionTree;
  /** True when the header is in storage already (lines may be appended at once). */
  released: boolean;
  /** Problems found while opening (damage, recovery, migration); empty for a clean file. */
  warnings: string[];
}

/** A time stamp usable in a file name. */
export function fileTimestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

export function newHeader(options: HeaderOptions, id = newSessionId()): SessionHeader {
  const header: SessionHeader = {
    type: 'session',
    version: SESSION_DEFAULTS.formatVersion,
    id,
    timestamp: new Date().toISOString(),
    cwd: options.cwd ?? process.cwd(),
  };
  if (options.parentSession !== undefined) header.parentSession = options.parentSession;
  return header;
}

/** Whole-file text for a rewrite; a saved leaf move is carried over as the last line. */
function serializeSession(header: SessionHeader, entries: readonly SessionEntry[], leafTarget?: string | null): string {
  let text = `${JSON.stringify(header)}\n`;
  for (const e of entries) text += `${stringifyJson(e)}\n`;
  if (leafTarget !== undefined) {
    const line: LeafLine = { type: 'leaf', targetId: leafTarget, timestamp: new Date().toISOString() };
    text += `${JSON.stringify(line)}\n`;
  }
  return text;
}

/** Loads whatever `storage` holds, repairing what it must (header, old versions). Never fails on content. */
export function openStoredSession(storage: SessionStorage, options: HeaderOptions = {}): OpenedSession {
  const loaded = loadSession(storage);
  const warnings = loaded.warnings;
  const where = storage.path ?? 'memory session';
  let header = loaded.header;
  let released = loaded.exists && header !== undefined;
  const entries = loaded.entries;

  if (!loaded.exists || loaded.headerProblem === 'empty') {
    if (loaded.headerProblem === 'empty') warnings.push(`${where} was empty; a new session starts at the same path.`);
    header = newHeader(options);
    released = false;
  } else if (!header) {
    // Keep every entry that still parses, under a fresh header; the damaged original stays beside it.
    const backup = storage.backup(`.corrupt-${fileTimestamp()}.bak`);
    header = newHeader(options);
    storage.replaceAll(serializeSession(header, entries, loaded.leafTarget));
    released = true;
    warnings.push(
      `${where} had a ${loaded.headerProblem} header; rewrote it with a new header and the ${entries.length} entries that could be read` +
        (backup ? ` (original kept at ${basename(backup)}).` : '.'),
    );
  } else if (loaded.migration?.changed) {
    const from = loaded.migration.fromVersion;
    const backup = storage.backup(`.v${from}.bak`);
    storage.replaceAll(serializeSession(header, entries, loaded.leafTarget));
    warnings.push(
      `${where} was migrated from format v${from} to v${header.version}` +
        (backup ? ` (original kept at ${basename(backup)}).` : '.'),
    );
  }
  if (header.version > SESSION_DEFAULTS.formatVersion) {
    warnings.push(
      `${where} has format v${header.version}, newer than this program (v${SESSION_DEFAULTS.formatVersion}); unknown entries are kept but ignored.`,
    );
  }

  const tree = SessionTree.build(entries, warnings);
  const indexed = tree.entries;
  let leaf: string | null = indexed.length > 0 ? indexed[indexed.length - 1]!.id : null;
  if (loaded.leafTarget !== undefined) {
    if (loaded.leafTarget === null || tree.has(loaded.leafTarget)) leaf = loaded.leafTarget;
    else warnings.push(`${where}: the saved leaf ${loaded.leafTarget} is not in the session; using the last entry.`);
  }
  tree.setLeaf(leaf);
  return { header, tree, released, warnings };
}
