// Format migrations, applied in sequence to the raw objects of an old file:
//   v1 -> v2: entries get ids, parentId chains them in file order, and a compaction's
//             firstKeptEntryIndex becomes firstKeptEntryId. pi's v1 index counts the lines of
//             the file, so the header is index 0 and the first entry is index 1;
//   v2 -> v3: message role "hookMessage" becomes "custom".
// Each step only touches what its version lacks, so running them on a current file changes nothing.
import { newEntryId } from './entry-ids.js';
import { SESSION_DEFAULTS } from './defaults.js';

type Raw = Record<string, unknown>;

export interface MigrationResult {
  fromVersion: number;
  toVersion: number;
  /** True when any object changed (the file must be rewritten). */
  changed: boolean;
}

function migrateV1toV2(entries: Raw[]): boolean {
  const taken = new Set<string>();
  for (const e of entries) if (typeof e.id === 'string') taken.add(e.id);
  let changed = false;
  let prev: string | null = null;
  for (const e of entries) {
    if (typeof e.id !== 'string') {
      e.id = newEntryId(taken);
      taken.add(e.id as string);
      changed = true;
    }
    if (!('parentId' in e)) {
      e.parentId = prev;
      changed = true;
    }
    prev = e.id as string;
  }
  for (const e of entries) {
    if (e.type === 'compaction' && typeof e.firstKeptEntryIndex === 'number') {
      // `entries` has no header: file line i is entries[i - 1]. Index 0 (the header) keeps all.
      const kept = entries[Math.max(0, e.firstKeptEntryIndex - 1)];
      // An index past the end means "kept nothing": point at the compaction itself.
      e.firstKeptEntryId = kept ? kept.id : e.id;
      delete e.firstKeptEntryIndex;
      changed = true;
    }
  }
  return changed;
}

function migrateV2toV3(entries: Raw[]): boolean {
  let changed = false;
  for (const e of entries) {
    const m = e.message as Raw | undefined;
    if (e.type === 'message' && m && m.role === 'hookMessage') {
      m.role = 'custom';
      changed = true;
    }
  }
  return changed;
}

/** Migrates `entries` (header excluded) in place from `version` to the current version. */
export function migrateEntries(entries: Raw[], version: number): MigrationResult {
  const target = SESSION_DEFAULTS.formatVersion;
  let changed = false;
  if (version < 2) changed = migrateV1toV2(entries) || changed;
  if (version < 3) changed = migrateV2toV3(entries) || changed;
  return { fromVersion: version, toVersion: Math.max(version, target), changed: changed || version < target };
}
