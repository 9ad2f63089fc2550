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
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyWorkspacePatch,
  DEFAULT_MAX_WORKSPACE_BYTES,
  packWorkspace,
  unpackWorkspace,
  workspaceDiff,
} from '../../src/cluster/workspace-transfer.js';
import { pack, scratchFolder, write } from './workspace-fixtures.js';

const { scratch, freshDir, freshPath } = scratchFolder('ws-transfer-test-');

const IDENTITY = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false'];
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...IDENTITY, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(cwd) },
  });
}

interface Entry {
  type: 'file' | 'link';
  exec?: boolean;
  sha?: string;
  target?: string;
}
/** What a folder holds: every file and symlink with its content, executable bit or link target. */
function contents(root: string, skip: (rel: string) => boolean = () => false): Record<string, Entry> {
  const out: Record<string, Entry> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === '.git' || skip(r)) continue;
      const st = lstatSync(join(root, r));
      if (st.isSymbolicLink()) out[r] = { type: 'link', target: readlinkSync(join(root, r)) };
      else if (st.isDirectory()) walk(r);
      else
        out[r] = {
          type: 'file',
          exec: (st.mode & 0o100) !== 0,
          sha: createHash('sha1')
            .update(readFileSync(join(root, r)))
            .digest('hex'),
        };
    }
  };
  walk('');
  return out;
}
/** Skips what never travels: run state (`.orchestrate` at any depth) and the ignored `build/`. */
const notIgnoredOrState = (r: string): boolean =>
  r.split('/').includes('.orchestrate') || r === 'build' || r.startsWith('build/');

/** Everything a user could notice about a repository's state. */
function repoState(repo: string): Record<string, string> {
  return {
    head: git(repo, 'rev-parse', 'HEAD'),
    refs: git(repo, 'for-each-ref'),
    status: git(repo, 'status', '--porcelain=v1', '--untracked-files=all'),
    staged: git(repo, 'diff', '--cached', '--binary'),
    index: createHash('sha1')
      .update(readFileSync(join(repo, '.git', 'index')))
      .digest('hex'),
    objects: git(repo, 'count-objects', '-v').replace(/^size-garbage.*$/m, ''),
  };
}

const binaryA = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10, 13, 0]);
const binaryB = Buffer.concat([binaryA, randomBytes(300)]);

/** A repository with every kind of change: committed, modified, staged, untracked, ignored, deleted, binary, executable, symlink. */
function makeBusyRepo(): string {
  const repo = freshDir('repo');
  git(repo, 'init', '-q');
  write(repo, 'a.txt', 'one\ntwo\nthree\n');
  write(repo, 'b.txt', 'b\n');
  write(repo, 'gone.txt', 'to be deleted\n');
  write(repo, 'staged.txt', 'before\n');
  write(repo, 'img.bin', binaryA);
  write(repo, 'run.sh', '#!/bin/sh\necho hi\n');
  chmodSync(join(repo, 'run.sh'), 0o755);
  write(repo, 'docs/readme.md', '# docs\n');
  write(repo, 'ünïcode dir/a b.txt', 'spaces and unicode\n');
  symlinkSync('docs/readme.md', join(repo, 'link.md'));
  write(repo, '.gitignore', 'build/\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'first');
  // Uncommitted state of every kind.
  write(repo, 'a.txt', 'one\ntwo changed\nthree\n');
  write(repo, 'staged.txt', 'after\n');
  git(repo, 'add', 'staged.txt');
  write(repo, 'new.txt', 'untracked\n');
  write(repo, 'img.bin', binaryB);
  unlinkSync(join(repo, 'gone.txt'));
  write(repo, 'build/out.js', 'ignored build output\n');
  write(repo, '.orchestrate/runs/r1/state.json', '{"run":1}\n');
  write(repo, 'docs/.orchestrate/x', 'nested state\n');
  return repo;
}

/** The edits an agent might make: modify, add, add binary, delete, chmod +x, new symlink, and run state. */
function agentEdits(dir: string): void {
  write(dir, 'a.txt', 'one\ntwo changed\nthree\nfour by agent\n');
  write(dir, 'src/added.ts', 'export const x = 1;\n');
  write(dir, 'pic.png', randomBytes(500));
  write(dir, 'img.bin', Buffer.concat([binaryB, Buffer.from([0, 0, 7])]));
  unlinkSync(join(dir, 'b.txt'));
  chmodSync(join(dir, 'docs/readme.md'), 0o755);
  symlinkSync('src/added.ts', join(dir, 'added-link.ts'));
  write(dir, '.orchestrate/runs/worker/state.json', '{"worker":true}\n');
  write(dir, 'notes/with space ü.txt', 'unicode name\n');
  // A symlink that becomes a file.
  unlinkSync(join(dir, 'link.md'));
  write(dir, 'link.md', 'now a file\n');
}

describe('workspace transfer of a git work tree', () => {
  it('packs HEAD plus every uncommitted change without touching the repository, and unpacks it as it was', async () => {
    const repo = makeBusyRepo();
    const before = repoState(repo);
    const packed = await pack(repo);
    expect(repoState(repo)).toEqual(before);
    expect(packed.kind).toBe('git');
    expect(packed.base).toMatch(/^[0-9a-f]{40}$/);

    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(contents(copy)).toEqual(contents(repo, notIgnoredOrState));
    expect(existsSync(join(copy, '.orchestrate'))).toBe(false);
    expect(existsSync(join(copy, 'docs/.orchestrate'))).toBe(false);
    expect(lstatSync(join(copy, 'link.md')).isSymbolicLink()).toBe(true);
    // The copy is clean against its baseline and keeps the history below it.
    expect(git(copy, 'status', '--porcelain')).toBe('');
    expect(git(copy, 'rev-parse', 'HEAD').trim()).toBe(packed.base);
    expect(git(copy, 'log', '--format=%s').split('\n')).toContain('first');
  });

  it("brings an agent's edits back: diff in the copy, apply to the original, and the original equals the copy", async () => {
    const repo = makeBusyRepo();
    const packed = await pack(repo);
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    agentEdits(copy);
    git(copy, 'add', 'a.txt'); // what the agent staged must stay staged
    const stagedBefore = git(copy, 'diff', '--cached', '--name-only');

    const patch = await workspaceDiff(copy);
    expect(git(copy, 'diff', '--cached', '--name-only')).toBe(stagedBefore);
    expect(patch.toString('utf8')).not.toContain('.orchestrate');
    expect(patch.toString('utf8')).toContain('GIT binary patch');

    const userStaged = git(repo, 'diff', '--cached', '--binary');
    const applied = await applyWorkspacePatch(repo, patch);
    expect(applied).toEqual({ ok: true, files: expect.any(Array) });
    if (!applied.ok) return;
    expect(applied.files.sort()).toEqual(
      [
        'a.txt',
        'added-link.ts',
        'b.txt',
        'docs/readme.md',
        'img.bin',
        'link.md',
        'notes/with space ü.txt',
        'pic.png',
        'src/added.ts',
      ].sort(),
    );
    expect(contents(repo, notIgnoredOrState)).toEqual(contents(copy, notIgnoredOrState));
    // The user's own run state and ignored files are left alone; nothing was staged.
    expect(readFileSync(join(repo, '.orchestrate/runs/r1/state.json'), 'utf8')).toBe('{"run":1}\n');
    expect(existsSync(join(repo, 'build/out.js'))).toBe(true);
    expect(git(repo, 'diff', '--cached', '--binary')).toBe(userStaged);
  });

  it('the same patch restores the edits onto a fresh unpack of the same pack (checkpoint restore)', async () => {
    const repo = makeBusyRepo();
    const packed = await pack(repo);
    const first = freshPath('first');
    await unpackWorkspace(packed, first);
    agentEdits(first);
    const patch = await workspaceDiff(first);

    const second = freshPath('second');
    await unpackWorkspace(packed, second);
    const applied = await applyWorkspacePatch(second, patch);
    expect(applied.ok).toBe(true);
    expect(contents(second, notIgnoredOrState)).toEqual(contents(first, notIgnoredOrState));
    // The restored copy diffs to the same patch, so a later checkpoint carries the same edits.
    expect((await workspaceDiff(second)).equals(patch)).toBe(true);
  });

  it('a patch that conflicts with changes made meanwhile changes nothing and says which file', async () => {
    const repo = makeBusyRepo();
    const packed = await pack(repo);
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    write(copy, 'docs/readme.md', '# docs by agent\n'); // applies cleanly on its own
    write(copy, 'a.txt', 'one\ntwo by agent\nthree\n');
    const patch = await workspaceDiff(copy);

    write(repo, 'a.txt', 'one\ntwo by the user meanwhile\nthree\n');
    const before = contents(repo);
    const applied = await applyWorkspacePatch(repo, patch);
    expect(applied.ok).toBe(false);
    if (applied.ok) return;
    expect(applied.error).toContain('a.txt');
    expect(applied.error).toContain('does not apply');
    expect(applied.error).toContain(repo);
    expect(contents(repo)).toEqual(before);
  });

  it('gives an empty diff when nothing changed, and an empty patch applies with no files', async () => {
    const repo = makeBusyRepo();
    const copy = freshPath('copy');
    await unpackWorkspace(await pack(repo), copy);
    write(copy, '.orchestrate/runs/x/log.txt', 'worker run state only\n');
    write(copy, 'build/out.js', 'ignored output of a build\n');
    const patch = await workspaceDiff(copy);
    expect(patch.length).toBe(0);
    expect(await applyWorkspacePatch(repo, patch)).toEqual({ ok: true, files: [] });
  });

  it('works in a repository without commits', async () => {
    const repo = freshDir('nocommits');
    git(repo, 'init', '-q');
    write(repo, 'staged.txt', 'staged\n');
    git(repo, 'add', 'staged.txt');
    write(repo, 'untracked.sh', '#!/bin/sh\n');
    chmodSync(join(repo, 'untracked.sh'), 0o755);
    const before = git(repo, 'status', '--porcelain');
    const packed = await pack(repo);
    expect(packed.kind).toBe('git');
    expect(git(repo, 'status', '--porcelain')).toBe(before);
    expect(() => git(repo, 'rev-parse', '--verify', '-q', 'HEAD')).toThrow();

    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(contents(copy)).toEqual(contents(repo));
    write(copy, 'staged.txt', 'edited\n');
    write(copy, 'more.txt', 'more\n');
    const applied = await applyWorkspacePatch(repo, await workspaceDiff(copy));
    expect(applied.ok && applied.files.sort()).toEqual(['more.txt', 'staged.txt']);
    expect(contents(repo)).toEqual(contents(copy));
  });

  it('sends only the snapshot when the history is over the limit but the snapshot is not', async () => {
    const repo = freshDir('bighistory');
    git(repo, 'init', '-q');
    write(repo, 'big.bin', randomBytes(200_000));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'big');
    git(repo, 'rm', '-q', 'big.bin');
    write(repo, 'small.txt', 'small\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'small');
    const packed = await pack(repo, { maxBytes: 50_000 });
    expect(packed.data.length).toBeLessThanOrEqual(50_000);
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(contents(copy)).toEqual(contents(repo));
    expect(git(copy, 'rev-list', '--count', 'HEAD').trim()).toBe('1');
  });

  it('refuses a workspace over the size limit with the folder, its size, the limit and the fix', async () => {
    const repo = freshDir('toolarge');
    git(repo, 'init', '-q');
    write(repo, 'noise.bin', randomBytes(300_000));
    const r = await packWorkspace(repo, { maxBytes: 100_000 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(repo);
    expect(r.error).toContain('the limit is 98 KB');
    expect(r.error).toMatch(/is (29\d|30\d) KB/); // the size
    expect(r.error).toContain('--max-workspace-mb');
    expect(r.error).toContain('.gitignore');
  });

  it('leaves out the names given in exclude, and they stay out of the diff', async () => {
    const repo = freshDir('exclude');
    git(repo, 'init', '-q');
    write(repo, 'keep.txt', 'keep\n');
    write(repo, 'vendor/lib.js', 'vendored\n');
    write(repo, 'pkg/vendor/x.js', 'nested\n');
    const packed = await pack(repo, { exclude: ['vendor'] });
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(Object.keys(contents(copy))).toEqual(['keep.txt']);
    write(copy, 'vendor/new.js', 'agent vendored\n');
    expect((await workspaceDiff(copy)).length).toBe(0);
    const bad = await packWorkspace(repo, { exclude: ['a/b'] });
    expect(bad.ok === false && bad.error).toContain('not a file or folder name');
  });
});

describe('workspace transfer of a plain folder', () => {
  function makeFolder(): string {
    const dir = freshDir('plain');
    write(dir, 'a.txt', 'one\ntwo\nthree\n');
    write(dir, 'b.txt', 'b\n');
    write(dir, 'img.bin', binaryB);
    write(dir, 'docs/readme.md', '# docs\n');
    write(dir, 'ünïcode dir/a b.txt', 'spaces and unicode\n');
    write(dir, 'run.sh', '#!/bin/sh\n');
    chmodSync(join(dir, 'run.sh'), 0o755);
    symlinkSync('docs/readme.md', join(dir, 'link.md'));
    write(dir, '.orchestrate/runs/r1/state.json', '{}\n');
    return dir;
  }

  it('round-trips: pack, unpack, agent edits, diff, apply; and a fresh unpack takes the same patch', async () => {
    const dir = makeFolder();
    const packed = await pack(dir);
    expect(packed.kind).toBe('folder');
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(contents(copy)).toEqual(contents(dir, notIgnoredOrState));
    expect(git(copy, 'status', '--porcelain')).toBe('');

    agentEdits(copy);
    const patch = await workspaceDiff(copy);
    expect(patch.toString('utf8')).not.toContain('.orchestrate');
    const applied = await applyWorkspacePatch(dir, patch);
    expect(applied.ok && applied.files.sort()).toEqual(
      [
        'a.txt',
        'added-link.ts',
        'b.txt',
        'docs/readme.md',
        'img.bin',
        'link.md',
        'notes/with space ü.txt',
        'pic.png',
        'src/added.ts',
      ].sort(),
    );
    expect(contents(dir, notIgnoredOrState)).toEqual(contents(copy, notIgnoredOrState));
    expect(existsSync(join(dir, '.git'))).toBe(false);

    const restored = freshPath('restored');
    await unpackWorkspace(packed, restored);
    expect((await applyWorkspacePatch(restored, patch)).ok).toBe(true);
    expect(contents(restored, notIgnoredOrState)).toEqual(contents(copy, notIgnoredOrState));
  });

  it('gives an empty diff when nothing changed', async () => {
    const copy = freshPath('copy');
    await unpackWorkspace(await pack(makeFolder()), copy);
    expect((await workspaceDiff(copy)).length).toBe(0);
  });

  it('a conflicting patch changes nothing', async () => {
    const dir = makeFolder();
    const copy = freshPath('copy');
    await unpackWorkspace(await pack(dir), copy);
    write(copy, 'b.txt', 'agent\n');
    write(copy, 'a.txt', 'agent\n');
    const patch = await workspaceDiff(copy);
    write(dir, 'a.txt', 'user meanwhile\n');
    const before = contents(dir);
    const applied = await applyWorkspacePatch(dir, patch);
    expect(applied.ok === false && applied.error).toContain('a.txt');
    expect(contents(dir)).toEqual(before);
  });

  it('refuses a folder over the size limit', async () => {
    const dir = freshDir('bigplain');
    write(dir, 'noise.bin', randomBytes(300_000));
    const r = await packWorkspace(dir, { maxBytes: 100_000 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(dir);
    expect(r.error).toContain('--max-workspace-mb');
    expect(DEFAULT_MAX_WORKSPACE_BYTES).toBe(64 * 1024 * 1024);
    // Far over the limit, packing stops early and gives a lower bound.
    const far = await packWorkspace(dir, { maxBytes: 20_000 });
    expect(far.ok === false && far.error).toMatch(/more than \d+ KB, the limit is 20 KB/);
  });

  it('a subfolder of a repository travels as a folder without ignored files, and its patch applies inside the subfolder', async () => {
    const repo = freshDir('monorepo');
    git(repo, 'init', '-q');
    write(repo, '.gitignore', 'node_modules/\n/only-at-top.txt\n');
    write(repo, 'top.txt', 'top\n');
    write(repo, 'pkg/index.js', 'module.exports = 1;\n');
    write(repo, 'pkg/node_modules/dep/index.js', 'dependency\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'first');
    write(repo, 'pkg/new.js', 'untracked\n');
    const sub = join(repo, 'pkg');

    const packed = await pack(sub);
    expect(packed.kind).toBe('folder');
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(Object.keys(contents(copy)).sort()).toEqual(['index.js', 'new.js']);

    write(copy, 'index.js', 'module.exports = 2;\n');
    write(copy, 'node_modules/other/index.js', 'installed by the agent\n');
    const patch = await workspaceDiff(copy);
    expect(patch.toString('utf8')).not.toContain('node_modules');
    const applied = await applyWorkspacePatch(sub, patch);
    expect(applied.ok && applied.files).toEqual(['index.js']);
    expect(readFileSync(join(sub, 'index.js'), 'utf8')).toBe('module.exports = 2;\n');
    expect(existsSync(join(repo, 'index.js'))).toBe(false);
  });
});

describe('nested repositories', () => {
  it('a repository cloned or created inside the workspace is left out of the pack and the diff, without failing them', async () => {
    const repo = freshDir('outer');
    git(repo, 'init', '-q');
    write(repo, 'a.txt', 'a\n');
    const inner = join(repo, 'vendor/inner');
    mkdirSync(inner, { recursive: true });
    git(inner, 'init', '-q'); // no commit: git add would fail on it
    write(inner, 'f.txt', 'inner\n');
    const packed = await pack(repo);
    const copy = freshPath('copy');
    await unpackWorkspace(packed, copy);
    expect(Object.keys(contents(copy))).toEqual(['a.txt']);

    const agentClone = join(copy, 'deps/clone');
    mkdirSync(agentClone, { recursive: true });
    git(agentClone, 'init', '-q');
    write(agentClone, 'x.txt', 'cloned\n');
    write(copy, 'a.txt', 'b\n');
    const patch = await workspaceDiff(copy);
    expect(patch.toString('utf8')).not.toContain('deps/clone');
    const applied = await applyWorkspacePatch(repo, patch);
    expect(applied.ok && applied.files).toEqual(['a.txt']);
  });
});

describe('workspace transfer errors', () => {
  it('refuses to unpack into a folder that is not empty', async () => {
    const packed = await pack(freshDir('src'));
    const target = freshDir('full');
    write(target, 'x', 'x');
    await expect(unpackWorkspace(packed, target)).rejects.toThrow(/not empty/);
  });

  it('says when the workspace folder does not exist, or a folder was never unpacked', async () => {
    const missing = join(scratch, 'nope');
    const r = await packWorkspace(missing);
    expect(r.ok === false && r.error).toContain(`${missing} does not exist`);
    await expect(workspaceDiff(freshDir('plain'))).rejects.toThrow(/not an unpacked workspace/);
    const applied = await applyWorkspacePatch(missing, Buffer.from('diff --git a/x b/x\n'));
    expect(applied.ok === false && applied.error).toContain('does not exist');
  });

  it('says so when git is not installed', async () => {
    const dir = freshDir('plain');
    write(dir, 'a.txt', 'a\n');
    const path = process.env.PATH;
    process.env.PATH = join(scratch, 'no-such-bin');
    try {
      // A plain folder is packed in this process; unpacking it (a git baseline) needs git.
      const r = await packWorkspace(dir);
      expect(r.ok).toBe(true);
      if (r.ok)
        await expect(unpackWorkspace(r.packed, freshPath('copy'))).rejects.toThrow(
          'git is not installed or not on PATH',
        );
      const applied = await applyWorkspacePatch(dir, Buffer.from('diff --git a/a.txt b/a.txt\n'));
      expect(applied.ok === false && applied.error).toContain('git is not installed or not on PATH');
    } finally {
      process.env.PATH = path;
    }
  });

  it('refuses a patch that writes into run state or .git, changing nothing', async () => {
    const dir = freshDir('plain');
    const intoState = Buffer.from(
      'diff --git a/.orchestrate/x b/.orchestrate/x\nnew file mode 100644\n--- /dev/null\n+++ b/.orchestrate/x\n@@ -0,0 +1 @@\n+x\n',
    );
    const r = await applyWorkspacePatch(dir, intoState);
    expect(r.ok === false && r.error).toContain('run state');
    const intoGit = Buffer.from(intoState.toString('utf8').replaceAll('.orchestrate', '.git/hooks'));
    const g = await applyWorkspacePatch(dir, intoGit);
    expect(g.ok === false && g.error).toContain('.git/hooks/x');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('rejects bytes that are not a patch, changing nothing', async () => {
    const dir = freshDir('plain');
    write(dir, 'a.txt', 'a\n');
    const r = await applyWorkspacePatch(dir, Buffer.from('this is not a patch\n'));
    expect(r.ok === false && r.error).toContain('not a valid patch');
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('a\n');
  });
});
