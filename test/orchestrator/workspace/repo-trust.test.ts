// Which repository layouts the product's own git works in (src/orchestrator/workspace/repo-trust.ts): the
// ones git makes (a plain repository, a linked worktree, a submodule, a separate git folder inside
// the work tree) are found and pinned; a `.git` file or `commondir` naming another place is not.
// Real repositories made by git in temp folders.
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pinnedGitEnv, trustedRepository } from '../../../src/orchestrator/workspace/repo-trust.js';
import { cleanup, git, repoWith, tempDir } from '../../security/git-fixtures.js';

afterAll(() => cleanup());

const repo = (files: Record<string, string> = { 'a.txt': 'a\n' }) => realpathSync(repoWith(tempDir('trust-'), files));

describe('trusted repositories', () => {
  it('a plain repository is found from a subfolder and pinned to its own .git', () => {
    const r = repo({ 'pkg/a.txt': 'a\n' });
    const t = trustedRepository(join(r, 'pkg'));
    expect(t).toEqual({ ok: true, location: { top: r, gitDir: join(r, '.git'), commonDir: join(r, '.git') } });
    expect(t.ok && pinnedGitEnv(t.location)).toEqual({
      GIT_DIR: join(r, '.git'),
      GIT_COMMON_DIR: join(r, '.git'),
      GIT_WORK_TREE: r,
    });
  });

  it('a linked worktree (git worktree add) and a submodule are trusted', () => {
    const r = repo();
    const wt = join(realpathSync(tempDir('trust-wt-')), 'w');
    git(r, 'worktree', 'add', '-q', '--detach', wt);
    const t = trustedRepository(wt);
    expect(t.ok && t.location).toEqual({
      top: wt,
      gitDir: join(r, '.git', 'worktrees', 'w'),
      commonDir: join(r, '.git'),
    });
    const lib = repo({ 'lib.txt': 'lib\n' });
    git(r, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'vendor/lib');
    const sub = trustedRepository(join(r, 'vendor', 'lib'));
    expect(sub.ok && sub.location.gitDir).toBe(join(r, '.git', 'modules', 'vendor', 'lib'));
  });

  it('a .git file naming a folder inside the work tree is trusted; one naming another repository is not', () => {
    const inside = realpathSync(tempDir('trust-sep-'));
    git(inside, 'init', '-q', '--separate-git-dir', join(inside, 'meta'));
    expect(trustedRepository(inside).ok).toBe(true);
    const other = repo();
    const work = realpathSync(tempDir('trust-plain-'));
    writeFileSync(join(work, '.git'), `gitdir: ${join(other, '.git')}\n`);
    const t = trustedRepository(work);
    expect(t.ok).toBe(false);
    expect(!t.ok && t.error).toMatch(/names .*outside its work tree/);
  });

  it('a commondir naming another repository is refused, in a planted git folder and in a real .git', () => {
    const other = repo();
    const work = realpathSync(tempDir('trust-planted-'));
    mkdirSync(join(work, 'x'));
    writeFileSync(join(work, 'x', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(work, 'x', 'commondir'), `${join(other, '.git')}\n`);
    writeFileSync(join(work, '.git'), 'gitdir: x\n');
    const planted = trustedRepository(work);
    expect(!planted.ok && planted.error).toMatch(/commondir names .*another repository/);
    const r = repo();
    writeFileSync(join(r, '.git', 'commondir'), `${join(other, '.git')}\n`);
    expect(trustedRepository(r).ok).toBe(false);
  });

  it('outside any repository it says so', () => {
    const t = trustedRepository(realpathSync(tempDir('trust-none-')));
    expect(!t.ok && t.error).toMatch(/not inside a git repository/);
  });
});
