// Snapshots and landing diffs of one repository taken together (src/orchestrator/workspace/repo-git-batches.ts):
// a monorepo fan-out pays one shell under the repository's lock per batch, not one per instance, and
// each instance still gets exactly its own folder's changes. Real git repositories in temp folders.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../../src/orchestrator/workspace/keyed-lock.js';
import type { DiffOutcome, SnapshotOutcome } from '../../../src/orchestrator/workspace/git-workspace.js';
import { RepoGitBatches } from '../../../src/orchestrator/workspace/repo-git-batches.js';

/** The snapshot or diff of an outcome that must have succeeded (git's message otherwise). */
function ok<T extends SnapshotOutcome | DiffOutcome>(o: T): Extract<T, { ok: true }> {
  if (!o.ok) throw new Error(o.error);
  return o as Extract<T, { ok: true }>;
}

function monorepo(packages: string[]): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'orch-batches-')));
  const g = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  g('init', '-q');
  g('config', 'user.email', 't@example.com');
  g('config', 'user.name', 'T');
  for (const p of packages) {
    mkdirSync(join(dir, p), { recursive: true });
    writeFileSync(join(dir, p, 'index.ts'), `export const name = '${p}';\n`);
  }
  g('add', '-A');
  g('commit', '-qm', 'packages');
  return dir;
}

/** A per-repository lock that counts how many times work ran under it. */
function countingLock(): { withLock: <T>(root: string, fn: () => Promise<T>) => Promise<T>; runs: () => number } {
  const lock = new KeyedLock();
  let runs = 0;
  return {
    withLock: (root, fn) =>
      lock.run(root, () => {
        runs++;
        return fn();
      }),
    runs: () => runs,
  };
}

describe('repository git batches', () => {
  it('snapshots of several packages asked together are one run under the lock, and each diff holds only its own package', async () => {
    const repo = monorepo(['a', 'b', 'c', 'd']);
    try {
      const lock = countingLock();
      const batches = new RepoGitBatches(lock.withLock);
      const dirs = ['a', 'b', 'c', 'd'].map((p) => join(repo, p));
      const roots = await Promise.all(dirs.map((d) => batches.root(d)));
      expect(roots).toEqual(dirs.map(() => repo));
      const snaps = (await Promise.all(dirs.map((d) => batches.snapshot(repo, d)))).map(ok);
      expect(lock.runs()).toBe(1);
      expect(snaps.every((s) => s?.tree && s.root === repo && s.commit)).toBe(true);

      // Uncommitted work after the snapshot, in every package; a new file in b (its name as it is, not quoted).
      for (const p of ['a', 'b', 'c', 'd']) writeFileSync(join(repo, p, 'index.ts'), `export const name = '${p}!';\n`);
      writeFileSync(join(repo, 'b', 'new ü.ts'), 'export {};\n');
      const diffs = (await Promise.all(dirs.map((d, i) => batches.diffSince(repo, d, snaps[i]!.tree)))).map(ok);
      expect(lock.runs()).toBe(2);
      expect(diffs.map((d) => d?.files)).toEqual([
        ['a/index.ts'],
        ['b/index.ts', 'b/new ü.ts'],
        ['c/index.ts'],
        ['d/index.ts'],
      ]);
      expect(diffs[0]!.patch).toContain("+export const name = 'a!';");
      expect(diffs[0]!.patch).not.toContain("'b!'");
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it("a package's changes made before its snapshot are its baseline, while another package's are not hidden from that one's diff", async () => {
    const repo = monorepo(['a', 'b']);
    try {
      const batches = new RepoGitBatches(countingLock().withLock);
      // b has uncommitted work before a's snapshot; b's own snapshot comes later.
      writeFileSync(join(repo, 'b', 'index.ts'), "export const name = 'early';\n");
      const snapA = ok(await batches.snapshot(repo, join(repo, 'a')));
      writeFileSync(join(repo, 'b', 'index.ts'), "export const name = 'later';\n");
      const snapB = ok(await batches.snapshot(repo, join(repo, 'b')));
      writeFileSync(join(repo, 'b', 'index.ts'), "export const name = 'agent';\n");
      const dB = ok(await batches.diffSince(repo, join(repo, 'b'), snapB.tree));
      expect(dB!.patch).toContain("-export const name = 'later';");
      expect(dB!.patch).toContain("+export const name = 'agent';");
      const dA = ok(await batches.diffSince(repo, join(repo, 'a'), snapA.tree));
      expect(dA!.files).toEqual([]);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('a folder that vanished fails only its own request: the batch is taken again one by one', async () => {
    const repo = monorepo(['a', 'b', 'gone']);
    try {
      const lock = countingLock();
      const batches = new RepoGitBatches(lock.withLock);
      rmSync(join(repo, 'gone'), { recursive: true });
      const [a, gone, b] = await Promise.all(['a', 'gone', 'b'].map((p) => batches.snapshot(repo, join(repo, p))));
      expect(ok(a!).tree).toBeTruthy();
      expect(ok(b!).tree).toBeTruthy();
      // The one that failed says why, instead of passing for "no repository".
      expect(gone).toMatchObject({ ok: false, error: expect.stringContaining('does not exist') });
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('requests made while the lock is busy join one batch, taken once it is free; a later request gets a fresh snapshot', async () => {
    const repo = monorepo(['a']);
    try {
      const lock = countingLock();
      const batches = new RepoGitBatches(lock.withLock);
      const dir = join(repo, 'a');
      let release!: () => void;
      // Something else holds the repository's lock (a patch being landed).
      const held = lock.withLock(repo, () => new Promise<void>((r) => (release = r)));
      const first = batches.snapshot(repo, dir);
      await new Promise((r) => setImmediate(r));
      writeFileSync(join(dir, 'index.ts'), "export const name = 'changed';\n");
      const second = batches.snapshot(repo, dir);
      release();
      await held;
      const [s1, s2] = (await Promise.all([first, second])).map(ok);
      // Both waited behind the lock and joined one batch, taken when the lock came free (after the change).
      expect(s1!.tree).toBe(s2!.tree);
      const third = ok(await batches.snapshot(repo, dir));
      expect(third!.tree).toBe(s1!.tree);
      writeFileSync(join(dir, 'index.ts'), "export const name = 'again';\n");
      const fourth = ok(await batches.snapshot(repo, dir));
      expect(fourth!.tree).not.toBe(s1!.tree);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('outside a repository, and inside a .git folder, there is no root', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'orch-batches-plain-'));
    const repo = monorepo(['a']);
    try {
      const batches = new RepoGitBatches(countingLock().withLock);
      expect(await batches.root(plain)).toBeUndefined();
      expect(await batches.root(join(repo, 'a'))).toBe(repo);
      expect(await batches.root(join(repo, '.git'))).toBeUndefined();
    } finally {
      rmSync(plain, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
