import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addWorktree,
  diffScopes,
  diffSince,
  git,
  gitErrorLines,
  headCommit,
  mayBeInGitRepo,
  removeWorktree,
  repoRoot,
  snapshot,
  snapshotScopes,
} from '../../../src/orchestrator/workspace/git-workspace.js';

function makeRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-git-'));
  const g = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  g('init', '-q');
  g('config', 'user.email', 't@example.com');
  g('config', 'user.name', 'T');
  mkdirSync(join(dir, 'pkg'));
  writeFileSync(join(dir, 'pkg', 'a.ts'), 'log("a");\n');
  writeFileSync(join(dir, 'root.txt'), 'root\n');
  writeFileSync(join(dir, '.gitignore'), 'ignored.txt\n');
  g('add', '-A');
  g('commit', '-qm', 'init');
  return dir;
}

describe('git workspace', () => {
  it("a same-size edit made in the second the index was written is in the patch (the throwaway index keeps the real one's time: racy git)", async () => {
    const repo = makeRepo();
    // The next full second, so that writing the index, the snapshot and the edit share one second.
    const second = (): number => Math.floor(Date.now() / 1000);
    const startSecond = second();
    while (second() === startSecond) await new Promise((r) => setTimeout(r, 5));
    const began = second();
    writeFileSync(join(repo, 'root.txt'), 'ROOT\n');
    execFileSync('git', ['add', 'root.txt'], { cwd: repo }); // the real index is written now
    const snap = await snapshot(repo);
    writeFileSync(join(repo, 'root.txt'), 'Root\n'); // same size, same second
    const sameSecond = second() === began;
    // The patch is taken in a later second, when a copy of the index stamped "now" would trust the stale stat.
    while (second() === began) await new Promise((r) => setTimeout(r, 5));
    const d = await diffSince(repo, snap!.tree);
    expect(d!.files, `steps ${sameSecond ? 'within' : 'across'} one second`).toEqual(['root.txt']);
    expect(d!.patch).toContain('+Root');
  });

  it('the patch holds tracked edits and new files since the snapshot, not ignored files, and leaves the index alone', async () => {
    const repo = makeRepo();
    writeFileSync(join(repo, 'pkg', 'a.ts'), 'log("dirty before start");\n'); // uncommitted change from earlier work
    const snap = await snapshot(join(repo, 'pkg'));
    expect(snap?.commit).toBe(await headCommit(repo));
    writeFileSync(join(repo, 'pkg', 'a.ts'), 'logger.info("a");\n');
    writeFileSync(join(repo, 'pkg', 'new.ts'), 'export {};\n');
    writeFileSync(join(repo, 'ignored.txt'), 'x\n');
    const d = await diffSince(join(repo, 'pkg'), snap!.tree);
    expect(d?.files).toEqual(['pkg/a.ts', 'pkg/new.ts']);
    expect(d?.patch).toMatch(/-log\("dirty before start"\);\n\+logger\.info\("a"\);/);
    expect(d?.patch).toMatch(/new file mode/);
    expect(d?.patch).not.toMatch(/ignored/);
    // The user's index is untouched: nothing staged.
    expect(execFileSync('git', ['diff', '--cached', '--name-only'], { cwd: repo }).toString()).toBe('');
  });

  it('the runs folder inside the repository is no part of a snapshot or a patch (the run writes its own files there)', async () => {
    const repo = makeRepo();
    const runs = join(repo, '.orchestrate', 'runs');
    mkdirSync(join(runs, 'r1', 'sessions'), { recursive: true });
    writeFileSync(join(runs, 'r1', 'run.jsonl'), '{}\n');
    const snap = await snapshotScopes([repo], undefined, runs);
    if (!snap.ok) throw new Error(snap.error);
    // While the instance works, the run writes its session, log and another instance's patch.
    writeFileSync(join(runs, 'r1', 'sessions', 'a.jsonl'), '{}\n');
    writeFileSync(join(runs, 'r1', 'run.jsonl'), '{}\n{}\n');
    writeFileSync(join(repo, 'root.txt'), 'changed\n');
    const [d] = await diffScopes([{ dir: repo, baseTree: snap.tree }], undefined, runs);
    if (!d?.ok) throw new Error(JSON.stringify(d));
    expect(d.files).toEqual(['root.txt']);
    expect(d.patch).not.toContain('.orchestrate');
    // Without the runs folder named, the same diff holds the run's files (what a patch held before).
    const [all] = await diffScopes([{ dir: repo, baseTree: snap.tree }]);
    expect(all?.ok && all.files).toContain('.orchestrate/runs/r1/sessions/a.jsonl');
    // A folder inside the runs folder (an instance working there) is diffed as it is.
    const inside = await snapshotScopes([join(runs, 'r1')], undefined, runs);
    expect(inside.ok).toBe(true);
  });

  it('the patch is limited to the instance folder', async () => {
    const repo = makeRepo();
    const snap = await snapshot(repo);
    writeFileSync(join(repo, 'pkg', 'a.ts'), 'changed\n');
    writeFileSync(join(repo, 'root.txt'), 'changed\n');
    expect((await diffSince(join(repo, 'pkg'), snap!.tree))?.files).toEqual(['pkg/a.ts']);
    expect((await diffSince(repo, snap!.tree))?.files).toEqual(['pkg/a.ts', 'root.txt']);
  });

  it('the patch applies with git apply on a clean checkout', async () => {
    const repo = makeRepo();
    const snap = await snapshot(repo);
    writeFileSync(join(repo, 'pkg', 'a.ts'), 'logger.info("a");\n');
    writeFileSync(join(repo, 'pkg', 'b.ts'), 'new\n');
    const d = await diffSince(repo, snap!.tree);
    execFileSync('git', ['stash', '-u', '-q'], { cwd: repo });
    writeFileSync(join(repo, 'p.diff'), d!.patch);
    execFileSync('git', ['apply', 'p.diff'], { cwd: repo });
    expect(readFileSync(join(repo, 'pkg', 'a.ts'), 'utf8')).toBe('logger.info("a");\n');
    expect(readFileSync(join(repo, 'pkg', 'b.ts'), 'utf8')).toBe('new\n');
  });

  it('outside git there is no snapshot and no patch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-nogit-'));
    expect(await snapshot(dir)).toBeUndefined();
    expect(await diffSince(dir, undefined)).toBeUndefined();
  });

  it('finds the repository from a nested folder, and a worktree (.git file) counts as one, without a git spawn deciding "no repository"', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, 'pkg', 'deep', 'er'), { recursive: true });
    expect(mayBeInGitRepo(join(repo, 'pkg', 'deep', 'er'), {})).toBe(true);
    expect(await repoRoot(join(repo, 'pkg', 'deep', 'er'))).toBe(
      execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo, encoding: 'utf8' }).trim(),
    );
    const wt = join(mkdtempSync(join(tmpdir(), 'orch-wt-')), 'w0');
    await addWorktree(repo, wt, await headCommit(repo));
    expect(mayBeInGitRepo(join(wt, 'pkg'), {})).toBe(true);
    expect(await repoRoot(join(wt, 'pkg'))).toBeDefined();
    const plain = mkdtempSync(join(tmpdir(), 'orch-nogit-'));
    expect(mayBeInGitRepo(plain, {})).toBe(false);
    // GIT_DIR can make any folder a work tree: then git decides.
    expect(mayBeInGitRepo(plain, { GIT_DIR: join(repo, '.git') })).toBe(true);
  });

  it('a worktree starts at the commit and its changes stay out of the main checkout', async () => {
    const repo = makeRepo();
    const wt = join(mkdtempSync(join(tmpdir(), 'orch-wt-')), 'w1');
    const commit = await headCommit(repo);
    expect(await addWorktree(repo, wt, commit)).toEqual({ ok: true });
    expect(await addWorktree(repo, wt, commit)).toEqual({ ok: true }); // reused on retry
    const snap = await snapshot(wt);
    writeFileSync(join(wt, 'pkg', 'a.ts'), 'in worktree\n');
    expect(readFileSync(join(repo, 'pkg', 'a.ts'), 'utf8')).toBe('log("a");\n');
    expect((await diffSince(wt, snap!.tree))?.files).toEqual(['pkg/a.ts']);
    await removeWorktree(repo, wt);
    expect(existsSync(wt)).toBe(false);
  });
});

describe('gitErrorLines', () => {
  it("says git's own error in one line, at most three of its lines, with how many more there were", async () => {
    const repo = makeRepo();
    const bad = await git(['read-tree', 'no-such-tree'], repo);
    expect(bad.ok).toBe(false);
    const said = gitErrorLines(bad.stderr);
    expect(said).toContain('no-such-tree');
    expect(said).not.toContain('\n');
    expect(gitErrorLines('\n  error: one  \n\nhint: two\nhint: three\nhint: four\nhint: five\n')).toBe(
      'error: one; hint: two; hint: three; and 2 more',
    );
    expect(gitErrorLines('')).toBe('');
  });
});
