// Can runs be recorded in (or read from) a folder? Checked before a run starts or a run folder is
// looked up, so a runs folder that is a file, lies inside a file, or cannot be created or written
// (read-only mount, no permission) is a clear usage error naming the path, never a stack trace
// from the first mkdir or readdir deep inside the run store.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const HINT = 'pass --run-dir with a folder you can write (it is created when missing)';

/** What an fs error code means for the user. */
function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'EROFS':
      return 'the file system is read-only';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOSPC':
      return 'the disk is full';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

/** The path itself or its nearest existing ancestor, and whether that is a folder. */
function nearestExisting(path: string): { path: string; isDir: boolean } | undefined {
  for (let p = path; ; p = dirname(p)) {
    try {
      return { path: p, isDir: statSync(p).isDirectory() };
    } catch {
      if (dirname(p) === p) return undefined;
    }
  }
}

/** A problem with a file standing where the folder (or one of its parents) should be. */
function fileInTheWay(dir: string): string | undefined {
  const found = nearestExisting(dir);
  if (!found || found.isDir) return undefined;
  return found.path === dir ? `${dir} is a file, not a folder` : `${dir} cannot be a folder: ${found.path} is a file`;
}

/**
 * Why runs cannot be recorded in `dir` (created here when missing), or undefined when they can.
 * The message says what, where and how to fix it.
 */
export function runsDirWriteProblem(dir: string): string | undefined {
  return folderWriteProblem(dir, 'cannot record runs in', HINT);
}

/** Why the run folder `dir` of an existing run cannot be written (resume), or undefined. */
export function runFolderWriteProblem(dir: string): string | undefined {
  return folderWriteProblem(
    dir,
    'cannot continue the run in',
    'make the run folder writable, or copy the whole project folder somewhere writable and resume the copy',
  );
}

/**
 * Creates `abs` and its missing parents one level at a time. Not mkdirSync's recursive mode: under
 * /proc it never returns (Node retries what the kernel refuses there), and a server would spin.
 */
function makeFolders(abs: string): void {
  const base = nearestExisting(abs)?.path ?? resolve('/');
  let at = base;
  for (const part of relative(base, abs).split(sep).filter(Boolean)) {
    at = join(at, part);
    try {
      mkdirSync(at);
    } catch (err) {
      // Made meanwhile by another process: fine when it is a folder.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(at).isDirectory()) throw err;
    }
  }
}

function folderWriteProblem(dir: string, what: string, hint: string): string | undefined {
  const abs = resolve(dir);
  const inTheWay = fileInTheWay(abs);
  if (inTheWay) return `${what} ${abs}: ${inTheWay}.\n  hint: ${hint}`;
  try {
    makeFolders(abs);
  } catch (err) {
    return `${what} ${abs}: the folder cannot be created (${reasonOf(err)}).\n  hint: ${hint}`;
  }
  // Root writes through permission bits, so try a write rather than trust access().
  const probe = resolve(abs, `.write-check-${process.pid}-${randomBytes(3).toString('hex')}`);
  try {
    writeFileSync(probe, '');
  } catch (err) {
    return `${what} ${abs}: the folder cannot be written (${reasonOf(err)}).\n  hint: ${hint}`;
  } finally {
    rmSync(probe, { force: true });
  }
  return undefined;
}

/**
 * Why runs cannot be looked up in `dir`, or undefined when they can (a folder that does not
 * exist yet simply holds no runs).
 */
export function runsDirReadProblem(dir: string): string | undefined {
  const abs = resolve(dir);
  const inTheWay = fileInTheWay(abs);
  if (inTheWay)
    return `cannot look for runs in ${abs}: ${inTheWay}.\n  hint: pass --run-dir with the folder that holds the run folders (default .orchestrate/runs)`;
  const found = nearestExisting(abs);
  if (found?.path !== abs) return undefined;
  try {
    readdirSync(abs);
  } catch (err) {
    return `cannot look for runs in ${abs}: the folder cannot be read (${reasonOf(err)}).\n  hint: pass --run-dir with a folder you can read`;
  }
  return undefined;
}
