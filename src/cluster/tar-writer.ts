// A folder archived in this process: the tar archive (POSIX ustar, with pax records for long or
// non-ASCII names) that `tar -c` made in a child process before, without the child. A fan-out
// packs one workspace per instance, and a process start from the coordinator (a large process)
// costs more CPU than archiving a small folder does. The worker still extracts with GNU tar
// (workspace-transfer.ts), which reads this format as it reads its own.
//
// What is archived, as `tar -c` did: folders (empty ones too), regular files with their mode
// bits and bytes, symbolic links with their target. Sockets, fifos and devices are left out (a
// workspace patch cannot carry them either). Owners are not recorded (the worker extracts as
// itself).
import { lstatSync, readdirSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';

const BLOCK = 512;

/** Why archiving stopped early: the archive passed `stopAfterBytes` (`bytes` is how far it got). */
export interface TarResult {
  data: Buffer;
  bytes: number;
  stopped: boolean;
}

/** Whether `name` (one path component) matches the glob `pattern` (`*`, `?`, `[...]`, `\` escapes), as tar's --exclude does. */
export function globMatches(pattern: string, name: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i]!);
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += escapeRe(c);
  }
  return new RegExp(`^${re}$`, 's').test(name);
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

class TarBuilder {
  private readonly parts: Buffer[] = [];
  bytes = 0;
  stopped = false;

  constructor(private readonly stopAfterBytes: number) {}

  private push(b: Buffer): void {
    this.parts.push(b);
    this.bytes += b.length;
    if (this.bytes > this.stopAfterBytes) this.stopped = true;
  }

  /** One entry: `rel` relative to the archive's root ('/'-separated), from its lstat. */
  add(rel: string, abs: string, st: Stats): void {
    if (this.stopped) return;
    let type: string;
    let body: Buffer = Buffer.alloc(0);
    let link = '';
    let name = rel;
    if (st.isDirectory()) {
      type = '5';
      name = `${rel}/`;
    } else if (st.isSymbolicLink()) {
      type = '2';
      link = readlinkSync(abs);
    } else if (st.isFile()) {
      type = '0';
      if (this.bytes + BLOCK + st.size > this.stopAfterBytes) {
        // Past the limit anyway: counted, never read (a stray disk image must not fill the memory).
        this.bytes += BLOCK + st.size;
        this.stopped = true;
        return;
      }
      body = readFileSync(abs);
    } else return;
    const pax: string[] = [];
    if (!fitsUstar(name)) pax.push(paxRecord('path', name));
    if (!fitsUstar(link)) pax.push(paxRecord('linkpath', link));
    if (pax.length > 0) {
      const text = Buffer.from(pax.join(''), 'utf8');
      this.push(header('PaxHeader', 0o644, text.length, 0, 'x', ''));
      this.push(padded(text));
    }
    const mtime = Math.max(0, Math.floor(st.mtimeMs / 1000));
    this.push(
      header(
        fitsUstar(name) ? name : 'PaxName',
        st.mode & 0o7777,
        body.length,
        mtime,
        type,
        fitsUstar(link) ? link : '',
      ),
    );
    if (body.length > 0) this.push(padded(body));
  }

  finish(): Buffer {
    this.push(Buffer.alloc(BLOCK * 2));
    return Buffer.concat(this.parts);
  }
}

/** Plain ASCII of at most 100 bytes: fits a ustar name field as is. */
function fitsUstar(s: string): boolean {
  return s.length <= 100 && /^[\x20-\x7e]*$/.test(s);
}

/** A pax record: "<length> key=value\n", the length counting itself. */
function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  const restBytes = Buffer.byteLength(rest, 'utf8');
  let digits = 1;
  while (String(restBytes + digits).length > digits) digits++;
  return `${restBytes + digits}${rest}`;
}

function padded(b: Buffer): Buffer {
  const rem = b.length % BLOCK;
  return rem === 0 ? b : Buffer.concat([b, Buffer.alloc(BLOCK - rem)]);
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, mode: number, size: number, mtime: number, type: string, link: string): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtime, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write(link, 157, 100, 'utf8');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/**
 * Archives the folder `root`: every entry but those whose name matches one of `exclude` (at any
 * depth, with everything below them). Stops adding once the archive passes `stopAfterBytes`.
 */
export function tarFolder(root: string, exclude: readonly string[], stopAfterBytes: number): TarResult {
  const tar = new TarBuilder(stopAfterBytes);
  const walk = (rel: string, abs: string): void => {
    for (const name of readdirSync(abs).sort()) {
      if (tar.stopped) return;
      if (exclude.some((p) => globMatches(p, name))) continue;
      const r = rel ? `${rel}/${name}` : name;
      const a = join(abs, name);
      const st = lstatSync(a);
      tar.add(r, a, st);
      if (st.isDirectory()) walk(r, a);
    }
  };
  walk('', root);
  const bytes = tar.bytes;
  const stopped = tar.stopped;
  return { data: stopped ? Buffer.alloc(0) : tar.finish(), bytes, stopped };
}

/** Archives the listed paths of `root` (files, links, or folders without their contents), in order. */
export function tarPaths(root: string, paths: readonly string[], stopAfterBytes: number): TarResult {
  const tar = new TarBuilder(stopAfterBytes);
  for (const p of paths) {
    if (tar.stopped) break;
    const a = join(root, p);
    tar.add(p, a, lstatSync(a));
  }
  const bytes = tar.bytes;
  const stopped = tar.stopped;
  return { data: stopped ? Buffer.alloc(0) : tar.finish(), bytes, stopped };
}
