// The cheap paths of a workspace's travel (issue 32): a plain folder archived in this process
// (tar-writer.ts), unpacked in one sandboxed shell, and checkpoints that run no git when nothing
// changed (workspace-stat-cache.ts); plus the batching of up messages (up-batcher.ts). Exactness
// (modes, symlinks, deletions, binary files, empty folders) and the trust boundary (no write
// outside the workspace, no smuggled .git/config) are what these tests hold.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UpMessage } from '../../src/cluster/cluster-wire.js';
import { UpBatcher } from '../../src/cluster/up-batcher.js';
import { snapshotWorkspace } from '../../src/cluster/workspace-stat-cache.js';
import { applyWorkspacePatch, unpackWorkspace, workspaceDiff } from '../../src/cluster/workspace-transfer.js';
import { pack, scratchFolder, write } from './workspace-fixtures.js';

const { scratch, freshPath } = scratchFolder('ws-fast-test-');

/** Every entry of a folder: files with their executable bit and hash, links with their target, folders (empty ones too). */
function contents(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (name === '.git' || name === '.orchestrate' || name === 'node_modules') continue;
      const st = lstatSync(join(root, r));
      if (st.isSymbolicLink()) out[r] = `link -> ${readlinkSync(join(root, r))}`;
      else if (st.isDirectory()) {
        out[`${r}/`] = 'folder';
        walk(r);
      } else
        out[r] = `${(st.mode & 0o100) !== 0 ? 'exec' : 'file'} ${createHash('sha1')
          .update(readFileSync(join(root, r)))
          .digest('hex')}`;
    }
  };
  walk('');
  return out;
}

/** Runs `fn` with no git (nor tar) on PATH: whatever it does, it does in this process. */
async function withoutGit<T>(fn: () => Promise<T>): Promise<T> {
  const path = process.env.PATH;
  process.env.PATH = join(scratch, 'no-such-bin');
  try {
    return await fn();
  } finally {
    process.env.PATH = path;
  }
}

const LONG = `${'deep-folder-name/'.repeat(7)}a file with a name past one hundred bytes ünïcödé.txt`;

function makeFolder(): string {
  const dir = freshPath('plain');
  write(dir, 'a.txt', 'one\ntwo\n');
  write(dir, 'img.bin', Buffer.concat([Buffer.from([0, 255, 0, 13, 10]), randomBytes(2000)]));
  write(dir, 'run.sh', '#!/bin/sh\necho hi\n');
  chmodSync(join(dir, 'run.sh'), 0o755);
  write(dir, 'gone.txt', 'to be deleted\n');
  write(dir, LONG, 'long name\n');
  symlinkSync('a.txt', join(dir, 'link.txt'));
  symlinkSync('deep-folder-name', join(dir, 'dir-link'));
  mkdirSync(join(dir, 'empty/inner'), { recursive: true });
  write(dir, '.orchestrate/runs/r1/state.json', '{}\n');
  write(dir, 'node_modules/pkg/index.js', 'excluded\n');
  return dir;
}

describe('a plain folder archived in this process', () => {
  it('round-trips modes, symlinks, binary files, long names and empty folders; checkpoints without changes run no git; edits come back exact', async () => {
    const dir = makeFolder();
    const packed = await pack(dir, { exclude: ['node_modules'] });
    expect(packed.kind).toBe('folder');
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(contents(copy)).toEqual(contents(dir));
    expect(contents(copy)['empty/inner/']).toBe('folder');
    expect(existsSync(join(copy, 'node_modules'))).toBe(false);
    expect(existsSync(join(copy, '.orchestrate'))).toBe(false);

    // Nothing changed since the unpack: the empty patch, with no git to run.
    expect((await withoutGit(() => workspaceDiff(copy))).length).toBe(0);

    // Every kind of change: content, mode both ways, link retargeted, deletion, binary, new file in an empty folder.
    write(copy, 'a.txt', 'one\nTWO\n');
    chmodSync(join(copy, 'run.sh'), 0o644);
    chmodSync(join(copy, 'a.txt'), 0o755);
    unlinkSync(join(copy, 'link.txt'));
    symlinkSync('img.bin', join(copy, 'link.txt'));
    unlinkSync(join(copy, 'gone.txt'));
    write(copy, 'img.bin', randomBytes(3000));
    write(copy, 'empty/inner/new.txt', 'new\n');
    write(copy, '.orchestrate/x', 'run state never travels\n');
    const patch = await workspaceDiff(copy);
    expect(patch.length).toBeGreaterThan(0);
    // Unchanged since: the same patch again, still without git.
    expect((await withoutGit(() => workspaceDiff(copy))).equals(patch)).toBe(true);

    const applied = await applyWorkspacePatch(dir, patch);
    expect(applied.ok && applied.files.sort()).toEqual(
      ['a.txt', 'empty/inner/new.txt', 'gone.txt', 'img.bin', 'link.txt', 'run.sh'].sort(),
    );
    const back = contents(dir);
    const there = contents(copy);
    expect(back).toEqual(there);
    expect(back['gone.txt']).toBeUndefined();
    expect(back['run.sh']?.startsWith('file ')).toBe(true);
    expect(back['a.txt']?.startsWith('exec ')).toBe(true);
    expect(back['link.txt']).toBe('link -> img.bin');
  });

  it('sees a same-size change made in the same clock tick as the last walk (racy files are compared by content)', () => {
    const dir = freshPath('racy');
    mkdirSync(join(dir, '.git'), { recursive: true });
    const f = join(dir, 'f.txt');
    // A file stamped at or after the walk's clock is racy: its content is recorded.
    const later = new Date(Date.now() + 3_600_000);
    const writeStamped = (text: string): void => {
      writeFileSync(f, text);
      utimesSync(f, later, later);
    };
    writeStamped('content a\n');
    const first = snapshotWorkspace(dir);
    const recorded = first?.snapshot.files.get('f.txt');
    expect(recorded?.hash).toBeDefined();
    /** What a change within one tick of the clock looks like: every stat field as recorded. */
    const statAsRecorded = (): void => {
      const now = lstatSync(f, { bigint: true });
      Object.assign(recorded!, { size: now.size, ino: now.ino, mtimeNs: now.mtimeNs, ctimeNs: now.ctimeNs });
    };
    writeStamped('content b\n');
    statAsRecorded();
    expect(snapshotWorkspace(dir, first!.snapshot)?.same).toBe(false);
    writeStamped('content a\n');
    statAsRecorded();
    expect(snapshotWorkspace(dir, first!.snapshot)?.same).toBe(true);
    // A new file, or one gone, is a change whatever the stats say.
    write(dir, 'g.txt', 'new\n');
    expect(snapshotWorkspace(dir, first!.snapshot)?.same).toBe(false);
  });
});

describe('the trust boundary of an unpack', () => {
  /** A GNU tar archive made by `tar args` in `cwd`, optionally extended by a second `tar -r`. */
  function tarOf(cwd: string, args: string[], append?: { cwd: string; args: string[] }): Buffer {
    const file = `${freshPath('crafted')}.tar`;
    execFileSync('tar', ['-c', '-f', file, ...args], { cwd });
    if (append) execFileSync('tar', ['-r', '-f', file, ...append.args], { cwd: append.cwd });
    return readFileSync(file);
  }

  it('never writes outside the workspace (../ members, a symlink then a file through it) and never adopts a shipped .git/config', async () => {
    const outside = freshPath('outside');
    mkdirSync(outside);
    const src = freshPath('crafted');
    write(src, 'ok.txt', 'fine\n');
    symlinkSync(outside, join(src, 'link'));
    const through = freshPath('through');
    write(through, 'link/pwned.txt', 'through the link\n');
    const marker = join(outside, 'fsmonitor-ran');
    write(src, '.git/config', `[core]\n\tfsmonitor = "touch ${marker}; false"\n\thooksPath = ${outside}\n`);
    const archives = [
      tarOf(src, ['-P', '--transform', 's,^ok.txt,../escaped.txt,', 'ok.txt']),
      tarOf(src, ['link'], { cwd: through, args: ['link/pwned.txt'] }),
      tarOf(src, ['--exclude=./link', '.']),
    ];
    const copies: string[] = [];
    for (const data of archives) {
      const copy = freshPath('copy');
      copies.push(copy);
      await unpackWorkspace({ kind: 'folder', data }, copy).catch(() => undefined);
      if (existsSync(join(copy, '.git', 'config')))
        expect(readFileSync(join(copy, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
      if (existsSync(join(copy, '.git'))) {
        write(copy, 'changed.txt', 'a change, so the diff runs git\n');
        await workspaceDiff(copy);
      }
    }
    // The last archive is harmless but for its .git/config: it unpacks, without it.
    expect(readFileSync(join(copies[2]!, 'ok.txt'), 'utf8')).toBe('fine\n');
    expect(readFileSync(join(copies[2]!, '.git', 'config'), 'utf8')).not.toContain(outside);
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(scratch, 'escaped.txt'))).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it('a patch that climbs out of the workspace changes nothing', async () => {
    const dir = freshPath('target');
    mkdirSync(dir);
    const climbing = Buffer.from(
      'diff --git a/../escaped-by-patch b/../escaped-by-patch\nnew file mode 100644\n--- /dev/null\n+++ b/../escaped-by-patch\n@@ -0,0 +1 @@\n+x\n',
    );
    const r = await applyWorkspacePatch(dir, climbing);
    expect(r.ok).toBe(false);
    expect(existsSync(join(scratch, 'escaped-by-patch'))).toBe(false);
  });
});

describe('up messages of one attempt', () => {
  it('go one entry at a time, in order, and those sent while one is in flight share the next entry', async () => {
    const entries: UpMessage[][] = [];
    let release: () => void = () => {};
    const batcher = new UpBatcher(async (ms) => {
      entries.push(ms);
      if (entries.length === 1) await new Promise<void>((r) => (release = r));
    });
    const port = (n: number): UpMessage => ({ k: 'port', m: n });
    const sent = [1, 2, 3, 4].map((n) => batcher.send(port(n)));
    expect(entries).toEqual([[port(1)]]);
    release();
    await Promise.all(sent);
    expect(entries).toEqual([[port(1)], [port(2), port(3), port(4)]]);

    const failing = new UpBatcher(() => Promise.reject(new Error('redis down')));
    await expect(failing.send(port(5))).rejects.toThrow('redis down');
  });

  it('go one message per entry, in order, for a coordinator that reads no lists (a job without readsBatches)', async () => {
    const entries: UpMessage[][] = [];
    let release: () => void = () => {};
    const batcher = new UpBatcher(async (ms) => {
      entries.push(ms);
      if (entries.length === 1) await new Promise<void>((r) => (release = r));
    }, false);
    const port = (n: number): UpMessage => ({ k: 'port', m: n });
    const sent = [1, 2, 3, 4].map((n) => batcher.send(port(n)));
    release();
    await Promise.all(sent);
    expect(entries).toEqual([[port(1)], [port(2)], [port(3)], [port(4)]]);
  });
});
