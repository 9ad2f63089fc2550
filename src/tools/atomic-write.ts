// Replacing a file so that a kill -9, a crash or a power loss leaves either the whole old or the
// whole new content, never a mix or an empty file. The steps: write a temp file in the target's
// folder (same file system, so the rename cannot turn into a copy), fsync it, rename it over the
// target (atomic on POSIX), fsync the folder (so the rename itself is on disk).
//
// What the target keeps: its mode, and its owner and group where we may set them (as root). A
// symlink stays a symlink: its final target is replaced. A new file gets 0666 minus the umask,
// as fs.writeFile gives it. While being written the temp file is 0600, so nobody reads content
// that is meant to end up in a private file.
//
// Leftovers: a kill between creating the temp file and the rename leaves
// `.<name>.orchestrate-<pid>-<random>.tmp` beside the target. No later write trips on it (each
// temp file gets a fresh random name, opened exclusively), and the next replacement of the same
// file removes those whose process is gone, or that nobody touched for an hour (pid reuse).
// A failure that we see (disk full, read-only folder) removes its temp file at once.
//
// One module for the whole project: the write and edit tools, and the run folder's plan.md,
// result.json, patches and report.html. Sync and async forms do the same steps. The file tools
// use replaceEntry, which follows no link (their folder is held open by confined-path.ts).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { shellQuote } from './tool-result.js';

export interface ReplaceFileOptions {
  /**
   * Refuse (HardLinkedFileError) to replace a file that has more than one hard link: another
   * link may lead outside the workspace, and the rename would split the links anyway.
   */
  refuseHardLinks?: boolean;
}

/** replaceFile's options for a caller that may change its mind while the data is being synced. */
export interface ReplaceFileIfOptions extends ReplaceFileOptions {
  /**
   * Asked right before the rename, which then happens in the same turn (synchronously), so no
   * other code of this process runs between the answer and the rename: false leaves the file
   * as it is and removes the temp file.
   */
  stillWanted: () => boolean;
}

/** Thrown when `refuseHardLinks` is set and the target has other hard links. */
export class HardLinkedFileError extends Error {
  constructor(
    readonly path: string,
    readonly links: number,
  ) {
    super(hardLinkRefusal(path, links));
    this.name = 'HardLinkedFileError';
  }
}

/** Marks temp files as ours (their names end in `.tmp`, which most ignore lists already skip). */
const TEMP_MARK = 'orchestrate';
/** A leftover whose pid is running (maybe reused) is still removed after this long untouched. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/** What the model or user is told when a file with several hard links would be changed. */
export function hardLinkRefusal(name: string, links: number): string {
  const q = shellQuote(name);
  const copy = shellQuote(`${name}.copy`);
  return (
    `Refused to change ${name}: it has ${links} hard links, and another link may be a file outside the workspace ` +
    '(a hard link shares its content with every other link; replacing the file would also split them). ' +
    `To change it, first give it a separate copy (for example with bash: cp ${q} ${copy} && mv ${copy} ${q}), ` +
    'which leaves the other links untouched, or write the result to a new file.'
  );
}

/** A tool's error for a failed replacement: what failed, that the file is unchanged, and why. */
export function replaceFailure(name: string, err: unknown): Error {
  if (err instanceof HardLinkedFileError) return new Error(hardLinkRefusal(name, err.links));
  const reason = err instanceof Error ? err.message : String(err);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EISDIR') return new Error(`Could not write ${name}: it is a folder. Give the path of a file.`);
  const hint =
    code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC' || code === 'EDQUOT'
      ? ' Files are replaced through a temporary file in the same folder, so the folder must be writable and have room for the whole file.'
      : '';
  return new Error(`Could not write ${name}: ${reason}. The file is unchanged.${hint}`);
}

/** Atomically and durably replaces (or creates) `path` with `data`. The parent folder must exist. */
export async function replaceFile(
  path: string,
  data: string | Uint8Array,
  options: ReplaceFileOptions = {},
): Promise<void> {
  await replaceFileIf(path, data, { ...options, stillWanted: () => true });
}

/**
 * replaceFile, with the write and fsync off the event loop and a last check before the rename:
 * false when `stillWanted()` said no (the file is untouched), true when it was replaced.
 */
export async function replaceFileIf(
  path: string,
  data: string | Uint8Array,
  options: ReplaceFileIfOptions,
): Promise<boolean> {
  const plan = planReplacement(path, options);
  const handle = await open(plan.temp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(data);
      if (plan.owner) await handle.chown(plan.owner.uid, plan.owner.gid).catch(ignoreNotPermitted);
      await handle.chmod(plan.mode); // after chown, which may clear set-id bits
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (!options.stillWanted()) {
      await rm(plan.temp, { force: true });
      return false;
    }
    renameSync(plan.temp, plan.target);
  } catch (err) {
    await rm(plan.temp, { force: true }).catch(() => undefined); // the first error is the one to report
    throw err;
  }
  await syncFolderAsync(plan.folder);
  return true;
}

/** The synchronous form of replaceFile, for callers that must not yield (the run store). */
export function replaceFileSync(path: string, data: string | Uint8Array, options: ReplaceFileOptions = {}): void {
  const plan = planReplacement(path, options);
  const fd = openSync(plan.temp, 'wx', 0o600);
  try {
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
      if (plan.owner) {
        try {
          fchownSync(fd, plan.owner.uid, plan.owner.gid);
        } catch (err) {
          ignoreNotPermitted(err);
        }
      }
      fchmodSync(fd, plan.mode);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(plan.temp, plan.target);
  } catch (err) {
    try {
      rmSync(plan.temp, { force: true });
    } catch {
      // the first error is the one to report
    }
    throw err;
  }
  syncFolder(plan.folder);
}

/** True for the temp files this module names (a leftover of a killed write, or one in flight). */
export function isReplacementTemp(fileName: string): boolean {
  return TEMP_NAME.test(fileName);
}

const TEMP_NAME = new RegExp(`^\\..+\\.${TEMP_MARK}-(\\d+)-[0-9a-f]+\\.tmp$`);

interface Replacement {
  target: string;
  folder: string;
  temp: string;
  mode: number;
  owner?: { uid: number; gid: number };
}

/**
 * Atomically replaces (or creates) entry `name` of `folder` without following any link: the
 * folder is typically reached through an open descriptor (confined-path.ts) and the caller has
 * already followed the links it allows. A symlink swapped in at `name` meanwhile is replaced by
 * the new file, never written through.
 */
export async function replaceEntry(
  folder: string,
  name: string,
  data: string | Uint8Array,
  options: ReplaceFileOptions = {},
): Promise<void> {
  const plan = planIn(folder, name, options, false);
  const handle = await open(plan.temp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(data);
      if (plan.owner) await handle.chown(plan.owner.uid, plan.owner.gid).catch(ignoreNotPermitted);
      await handle.chmod(plan.mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(plan.temp, plan.target);
  } catch (err) {
    await rm(plan.temp, { force: true }).catch(() => undefined);
    throw err;
  }
  await syncFolderAsync(plan.folder);
}

function planReplacement(path: string, options: ReplaceFileOptions): Replacement {
  const target = finalTarget(path);
  return planIn(dirname(target), basename(target), options, true);
}

function planIn(folder: string, name: string, options: ReplaceFileOptions, follow: boolean): Replacement {
  const target = join(folder, name);
  const existing = existingFile(target, options, follow);
  removeLeftovers(folder, name);
  const temp = join(folder, `.${name}.${TEMP_MARK}-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const plan: Replacement = {
    target,
    folder,
    temp,
    mode: existing ? existing.mode & 0o7777 : 0o666 & ~process.umask(),
  };
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (existing && uid !== undefined && (existing.uid !== uid || existing.gid !== gid))
    plan.owner = { uid: existing.uid, gid: existing.gid };
  return plan;
}

/** Where writing `path` lands: symlinks followed to their final target, which may not exist yet. */
function finalTarget(path: string, hops = 0): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  let link: Stats;
  try {
    link = lstatSync(abs);
  } catch (err) {
    if (isMissing(err)) return abs; // a new file
    throw err;
  }
  if (!link.isSymbolicLink() || hops >= 40) return abs; // let open() report ELOOP
  // A dangling link: writing through it creates its target. Relative targets count from the
  // link's real folder, as the kernel reads them.
  return finalTarget(resolve(realpathSync(dirname(abs)), readlinkSync(abs)), hops + 1);
}

function existingFile(target: string, options: ReplaceFileOptions, follow: boolean): Stats | undefined {
  let st: Stats;
  try {
    st = follow ? statSync(target) : lstatSync(target);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  if (!follow && st.isSymbolicLink()) return undefined; // swapped in after the walk: replaced, not followed
  if (!st.isFile()) {
    throw Object.assign(
      new Error(
        `${target} is ${st.isDirectory() ? 'a folder' : 'not a regular file'}; only regular files can be written`,
      ),
      {
        code: st.isDirectory() ? 'EISDIR' : 'EINVAL',
      },
    );
  }
  if (options.refuseHardLinks && st.nlink > 1) throw new HardLinkedFileError(target, st.nlink);
  return st;
}

/** Removes the temp files of earlier writes of `name` that were killed before their rename. */
function removeLeftovers(folder: string, name: string): void {
  const prefix = `.${name}.${TEMP_MARK}-`;
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return; // open() will report what is wrong with the folder
  }
  for (const entry of entries) {
    if (!entry.startsWith(prefix)) continue;
    const match = TEMP_NAME.exec(entry);
    if (!match) continue;
    const file = join(folder, entry);
    try {
      if (processRunning(Number(match[1])) && Date.now() - lstatSync(file).mtimeMs < STALE_TEMP_MS) continue;
      rmSync(file, { force: true });
    } catch {
      // gone already, or not ours to remove: it never blocks this write
    }
  }
}

function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, belongs to someone else
  }
}

/** fsync of the folder makes the rename durable; where folders cannot be synced we go without. */
function syncFolder(folder: string): void {
  let fd: number;
  try {
    fd = openSync(folder, 'r');
  } catch {
    return; // Windows cannot open a folder
  }
  try {
    fsyncSync(fd);
  } catch {
    // some file systems refuse fsync on folders (EINVAL); the rename has still happened
  } finally {
    closeSync(fd);
  }
}

/** syncFolder without blocking the event loop (the async forms: a folder's fsync can take milliseconds). */
async function syncFolderAsync(folder: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(folder, 'r');
  } catch {
    return; // Windows cannot open a folder
  }
  try {
    await handle.sync();
  } catch {
    // some file systems refuse fsync on folders (EINVAL); the rename has still happened
  } finally {
    await handle.close();
  }
}

function ignoreNotPermitted(err: unknown): void {
  // Only root may give a file away; otherwise the replaced file becomes ours, as with any editor.
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'EPERM' && code !== 'EINVAL') throw err;
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}
