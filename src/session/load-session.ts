// Reads a stored session into header + entries, tolerating damage: a torn last line, malformed
// lines anywhere, a missing or corrupt header and old format versions. Every problem becomes a
// warning; opening never fails because of the content of a file.
import { migrateEntries, type MigrationResult } from './migrate.js';
import type { SessionStorage } from './storage.js';
import type { SessionEntry, SessionHeader } from './types.js';

export type HeaderProblem = 'empty' | 'missing' | 'corrupt';

export interface LoadedSession {
  exists: boolean;
  header: SessionHeader | undefined;
  /** Why there is no usable header (an existing file only). */
  headerProblem?: HeaderProblem;
  entries: SessionEntry[];
  /** Target of a leaf line that came after the last entry; undefined when none did. */
  leafTarget?: string | null;
  migration?: MigrationResult;
  warnings: string[];
}

type Raw = Record<string, unknown>;

function isHeader(o: Raw): boolean {
  return o.type === 'session' && typeof o.id === 'string';
}

function describe(line: string): string {
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}

export function loadSession(storage: SessionStorage): LoadedSession {
  const warnings: string[] = [];
  const raws: Raw[] = [];
  let header: SessionHeader | undefined;
  let headerProblem: HeaderProblem | undefined;
  let seenFirst = false;
  let leaf: { targetId: string | null; afterEntries: number } | undefined;
  const where = storage.path ?? 'memory session';

  const summary = storage.readLines((line, lineNo, terminated) => {
    if (line.length === 0 || (line.length < 3 && line.trim().length === 0)) return;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      if (!terminated) {
        warnings.push(
          `${where}: line ${lineNo} is incomplete (the writing process was probably killed mid-append); it was skipped and every earlier entry kept.`,
        );
      } else {
        warnings.push(`${where}: line ${lineNo} is not valid JSON (${describe(line)}); skipped.`);
      }
      if (!seenFirst) headerProblem = 'corrupt';
      seenFirst = true;
      return;
    }
    if (!o || typeof o !== 'object' || Array.isArray(o) || typeof (o as Raw).type !== 'string') {
      warnings.push(`${where}: line ${lineNo} is not a session entry (no "type"); skipped.`);
      if (!seenFirst) headerProblem = 'corrupt';
      seenFirst = true;
      return;
    }
    const r = o as Raw;
    if (!seenFirst) {
      seenFirst = true;
      if (isHeader(r)) {
        header = r as unknown as SessionHeader;
        return;
      }
      headerProblem = 'missing';
    }
    if (r.type === 'session') {
      warnings.push(`${where}: line ${lineNo} is a second session header; skipped.`);
      return;
    }
    if (r.type === 'leaf') {
      const t = r.targetId;
      if (t === null || typeof t === 'string') leaf = { targetId: t, afterEntries: raws.length };
      return;
    }
    raws.push(r);
  });

  if (summary.exists && !seenFirst) headerProblem = 'empty';
  const version = header && typeof header.version === 'number' ? header.version : 1;
  let migration: MigrationResult | undefined;
  if (version < 3 || !header) {
    migration = migrateEntries(raws, version);
    if (header) header.version = migration.toVersion;
  }

  const entries: SessionEntry[] = [];
  for (const r of raws) {
    if (typeof r.id !== 'string' || (r.parentId !== null && typeof r.parentId !== 'string')) {
      warnings.push(`${where}: an entry of type "${String(r.type)}" has no valid id/parentId; skipped.`);
      continue;
    }
    entries.push(r as unknown as SessionEntry);
  }

  const result: LoadedSession = { exists: summary.exists, header, entries, warnings };
  if (headerProblem) result.headerProblem = headerProblem;
  if (migration) result.migration = migration;
  if (leaf && leaf.afterEntries === raws.length) result.leafTarget = leaf.targetId;
  return result;
}
