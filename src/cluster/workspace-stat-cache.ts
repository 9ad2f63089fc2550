// A worker's checkpoints without a git process when nothing changed: the stat of every file of an
// unpacked workspace is kept with the patch computed for it, and the next workspaceDiff walks the
// folder in this process; when every file has the same stat as then (and none is new or gone), the
// patch is the same one, exactly.
//
// Exactness follows git's own stat cache: a file's stat (size, mode, inode, mtime and ctime in ns)
// changes with every write, chmod, rename or replacement. The one hole is a change made in the same
// tick of the file system's clock as the walk that recorded the stat ("racy" in git's words): so
// the walk first stamps a marker file, and a file whose mtime or ctime is not older than that stamp
// is recorded with a hash of its content, compared again the next time.
//
// What is walked: every file and symlink of the workspace but run state (`.orchestrate` at any
// depth), and the workspace repository's own `.git` without its objects and logs (its index, refs,
// config and info/exclude decide what a diff holds). A folder that cannot be walked gives no
// snapshot: the caller then runs git as before.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';

export interface FileStat {
  mode: number;
  size: bigint;
  ino: bigint;
  dev: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** For a file changed in the walk's clock tick: a hash of its content (or link target). */
  hash?: string;
}

export interface WorkspaceSnapshot {
  files: Map<string, FileStat>;
}

/** The marker whose ctime is the file system's "now" before a walk; inside the workspace's .git, never walked. */
const CLOCK_MARKER = 'orchestrate-clock';
/** Under the top-level .git: what never decides a diff (and grows with every git command). */
const GIT_SKIPPED = new Set(['objects', 'logs', CLOCK_MARKER]);
/** Run state, never diffed (workspace-patch.ts ALWAYS_EXCLUDED). */
const STATE_NAME = '.orchestrate';

function contentHash(path: string, st: BigIntStats): string {
  const bytes = st.isSymbolicLink() ? Buffer.from(readlinkSync(path)) : readFileSync(path);
  return createHash('sha1').update(bytes).digest('hex');
}

/**
 * Walks `dir` and returns its snapshot, and whether it holds exactly what `previous` recorded
 * (same paths, same stats, same content for the files that were racy then). Undefined when the
 * folder cannot be walked or has no .git to stamp the clock in.
 */
export function snapshotWorkspace(
  dir: string,
  previous?: WorkspaceSnapshot,
): { snapshot: WorkspaceSnapshot; same: boolean } | undefined {
  let stamp: bigint;
  try {
    const marker = join(dir, '.git', CLOCK_MARKER);
    writeFileSync(marker, 'x');
    const m = lstatSync(marker, { bigint: true });
    // biome-ignore lint/complexity/useMathMinMax: bigint nanoseconds; Math.min takes numbers
    stamp = m.ctimeNs < m.mtimeNs ? m.ctimeNs : m.mtimeNs;
  } catch {
    return undefined;
  }
  const files = new Map<string, FileStat>();
  let same = previous !== undefined;
  const visit = (rel: string, abs: string, st: BigIntStats): void => {
    const racy = st.mtimeNs >= stamp || st.ctimeNs >= stamp;
    const was = previous?.files.get(rel);
    const stat: FileStat = {
      mode: Number(st.mode),
      size: st.size,
      ino: st.ino,
      dev: st.dev,
      mtimeNs: st.mtimeNs,
      ctimeNs: st.ctimeNs,
    };
    if (racy) stat.hash = contentHash(abs, st);
    if (same) {
      if (
        was === undefined ||
        was.mode !== stat.mode ||
        was.size !== stat.size ||
        was.ino !== stat.ino ||
        was.dev !== stat.dev ||
        was.mtimeNs !== stat.mtimeNs ||
        was.ctimeNs !== stat.ctimeNs
      )
        same = false;
      else if (was.hash !== undefined && was.hash !== (stat.hash ?? contentHash(abs, st))) same = false;
    }
    files.set(rel, stat);
  };
  const walk = (rel: string, abs: string, top: boolean): void => {
    for (const d of readdirSync(abs, { withFileTypes: true })) {
      const name = d.name;
      if (name === STATE_NAME) continue;
      const r = rel ? `${rel}/${name}` : name;
      const a = join(abs, name);
      if (top && name === '.git') {
        walkGit(r, a);
        continue;
      }
      const st = lstatSync(a, { bigint: true });
      if (st.isDirectory()) walk(r, a, false);
      else visit(r, a, st);
    }
  };
  const walkGit = (rel: string, abs: string): void => {
    const st = lstatSync(abs, { bigint: true });
    if (!st.isDirectory()) return void visit(rel, abs, st);
    for (const d of readdirSync(abs, { withFileTypes: true })) {
      if (rel === '.git' && GIT_SKIPPED.has(d.name)) continue;
      walkGit(`${rel}/${d.name}`, join(abs, d.name));
    }
  };
  try {
    walk('', dir, true);
  } catch {
    return undefined;
  }
  if (same && previous && previous.files.size !== files.size) same = false;
  return { snapshot: { files }, same };
}
