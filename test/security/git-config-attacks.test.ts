// Issue 26, item 1: a repository the model configured must not get a program run by the product's
// own git (snapshot, patch, worktree, merge) outside the sandbox, nor see a provider key. Each
// attack plants a command that would write its environment (with the decoy key) to a marker
// file outside the workspace; the marker must never exist, the decoy must be in no file, and the
// product's git must still give the right snapshot and patch. Run with bubblewrap and without it.
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addWorktree, diffSince, removeWorktree, snapshot } from '../../src/orchestrator/workspace/git-workspace.js';
import { applyToCheckout, commitToBranch } from '../../src/orchestrator/workspace/worktree-merge.js';
import { revertOutsideScope } from '../../src/orchestrator/workspace/write-scope-check.js';
import { productGitScript } from '../../src/tools/product-git.js';
import {
  DECOY_KEY,
  SANDBOX_MODES,
  cleanup,
  dumpEnvTo,
  filesHoldingDecoy,
  git,
  repoWith,
  setBwrap,
  tempDir,
  withDecoyKey,
  write,
} from './git-fixtures.js';

afterAll(() => cleanup());

describe.each(SANDBOX_MODES)('the product git $name', { timeout: 60_000 }, (mode) => {
  let restore: () => void;
  beforeEach(() => {
    restore = setBwrap(mode.bwrap);
  });
  afterEach(() => restore());

  it('sees no provider key, no HOME of the user and no git location of the parent', async () => {
    const repo = repoWith(tempDir(), { 'a.txt': 'a\n' });
    const before = process.env.GIT_DIR;
    process.env.GIT_DIR = '/nonexistent/elsewhere.git';
    try {
      const r = await withDecoyKey(() => productGitScript('env; git rev-parse --show-toplevel', [], { cwd: repo }));
      const out = r.stdout.toString('utf8');
      expect(r.code).toBe(0);
      expect(out).not.toContain(DECOY_KEY);
      expect(out).not.toContain('ANTHROPIC_API_KEY');
      expect(out).not.toContain('/nonexistent/elsewhere.git');
      expect(out).toMatch(/^GIT_CONFIG_NOSYSTEM=1$/m);
      expect(out).toMatch(/^LC_ALL=C$/m);
      expect(out).not.toMatch(new RegExp(`^HOME=${process.env.HOME ?? '/root'}$`, 'm'));
    } finally {
      if (before === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = before;
    }
  });

  it('core.fsmonitor written into .git/config runs nothing while a snapshot and a patch are taken; both are right', async () => {
    const repo = repoWith(tempDir(), { 'src/a.txt': 'one\n' });
    const marker = join(tempDir('git-marker-'), 'fsmonitor-ran');
    const base = await withDecoyKey(() => snapshot(repo));
    expect(base).toBeDefined();
    // What the write tool can do: the workspace's .git/config is an ordinary file in it.
    write(
      repo,
      '.git/config',
      `${readFileSync(join(repo, '.git/config'), 'utf8')}[core]\n\tfsmonitor = ${dumpEnvTo(repo, marker)}\n`,
    );
    write(repo, 'src/a.txt', 'two\n');
    write(repo, 'src/new.txt', 'new\n');
    const snap = await withDecoyKey(() => snapshot(repo));
    const d = await withDecoyKey(() => diffSince(repo, base!.tree));
    expect(existsSync(marker)).toBe(false);
    expect(snap?.tree).toMatch(/^[0-9a-f]{40}$/);
    expect(snap?.tree).not.toBe(base!.tree);
    expect(d?.files.sort()).toEqual(['src/a.txt', 'src/new.txt']);
    expect(d?.patch).toContain('+two');
    expect(filesHoldingDecoy(repo)).toEqual([]);
  });

  it('a filter driver in .git/config with a .gitattributes naming it runs nothing; the snapshot holds the files as they are', async () => {
    const repo = repoWith(tempDir(), { 'a.txt': 'a\n' });
    const marker = join(tempDir('git-marker-'), 'filter-ran');
    const base = await snapshot(repo);
    const cfg = readFileSync(join(repo, '.git/config'), 'utf8');
    write(
      repo,
      '.git/config',
      `${cfg}[filter "x"]\n\tclean = ${dumpEnvTo(repo, marker)}\n\tsmudge = ${dumpEnvTo(repo, marker)}\n\tprocess = ${dumpEnvTo(repo, marker)}\n\trequired = true\n[diff "y"]\n\ttextconv = ${dumpEnvTo(repo, marker)}\n\tcommand = ${dumpEnvTo(repo, marker)}\n[include]\n\tpath = extra.cfg\n`,
    );
    // A driver defined only in an included file is found as well (git config --list follows includes).
    write(repo, '.git/extra.cfg', `[filter "z"]\n\tclean = ${dumpEnvTo(repo, marker)}\n`);
    write(repo, '.gitattributes', '*.txt filter=x diff=y\n*.md filter=z\n');
    write(repo, 'a.txt', 'changed\n');
    write(repo, 'b.md', '# b\n');
    const d = await withDecoyKey(() => diffSince(repo, base!.tree));
    expect(existsSync(marker)).toBe(false);
    expect(d?.files.sort()).toEqual(['.gitattributes', 'a.txt', 'b.md']);
    expect(d?.patch).toContain('+changed');
    expect(d?.patch).toContain('+# b');
    // write-scope revert restores through the same git (a smudge filter would run here).
    const v = await withDecoyKey(() => revertOutsideScope(repo, repo, base!.tree, [join(repo, 'b.md')], []));
    expect(v?.files.sort()).toEqual(['.gitattributes', 'a.txt']);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('hooks the model wrote (post-checkout, reference-transaction, post-index-change ...) never run for a worktree, a snapshot, a branch commit or an apply', async () => {
    const repo = repoWith(tempDir(), { 'hello.txt': 'hello\n' });
    const marker = join(tempDir('git-marker-'), 'hook-ran');
    for (const hook of [
      'post-checkout',
      'reference-transaction',
      'post-index-change',
      'pre-auto-gc',
      'post-commit',
      'pre-commit',
      'post-applypatch',
    ]) {
      write(repo, `.git/hooks/${hook}`, `#!/bin/sh\nenv > "${marker}"\n`);
      chmodSync(join(repo, '.git/hooks', hook), 0o755);
    }
    const base = await withDecoyKey(() => snapshot(repo));
    const wt = join(tempDir('git-wt-'), 'runs', 'wt-a');
    const added = await withDecoyKey(() => addWorktree(repo, wt, base!.commit));
    expect(added).toEqual({ ok: true });
    expect(readFileSync(join(wt, 'hello.txt'), 'utf8')).toBe('hello\n');
    write(wt, 'hello.txt', 'goodbye\n');
    const d = await withDecoyKey(() => diffSince(wt, base!.tree));
    expect(d?.files).toEqual(['hello.txt']);
    const landed = await withDecoyKey(() => commitToBranch(repo, base!.commit!, 'orchestrate/t/a', d!.patch, 'a'));
    expect(landed.ok).toBe(true);
    expect(git(repo, 'show', 'orchestrate/t/a:hello.txt')).toBe('goodbye\n');
    const applied = await withDecoyKey(() => applyToCheckout(repo, d!.patch, 'patches/a.diff'));
    expect(applied).toEqual({ ok: true, applied: true });
    expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('goodbye\n');
    await withDecoyKey(() => removeWorktree(repo, wt));
    expect(existsSync(wt)).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it('core.hooksPath, core.pager, credential helpers and an external diff from the repository config change nothing', async () => {
    const repo = repoWith(tempDir(), { 'a.txt': 'a\n' });
    const marker = join(tempDir('git-marker-'), 'other-ran');
    const hooks = tempDir('git-hooks-');
    write(hooks, 'post-index-change', `#!/bin/sh\nenv > "${marker}"\n`, 0o755);
    const base = await snapshot(repo);
    const cfg = readFileSync(join(repo, '.git/config'), 'utf8');
    write(
      repo,
      '.git/config',
      `${cfg}[core]\n\thooksPath = ${hooks}\n\tpager = ${dumpEnvTo(repo, marker)}\n[diff]\n\texternal = ${dumpEnvTo(repo, marker)}\n[credential]\n\thelper = !${dumpEnvTo(repo, marker)}\n`,
    );
    write(repo, 'a.txt', 'b\n');
    const d = await withDecoyKey(() => diffSince(repo, base!.tree));
    expect(d?.patch).toContain('+b');
    expect(existsSync(marker)).toBe(false);
  });

  it('a repository whose own .gitattributes marks files binary or sets eol still gives the right patch, which applies to a clean clone', async () => {
    const repo = repoWith(tempDir(), {
      '.gitattributes': '*.dat binary\n*.txt text eol=lf\n',
      'notes.dat': 'plain text kept as binary\n',
      'a.txt': 'one\n',
    });
    const base = await snapshot(repo);
    write(repo, 'notes.dat', 'plain text changed\n');
    write(repo, 'a.txt', 'one\r\ntwo\r\n');
    const d = await diffSince(repo, base!.tree);
    expect(d?.patch).toContain('GIT binary patch');
    // eol=lf: the CRLF written in the work tree is stored (and diffed) as LF.
    expect(d?.patch).toContain('+two\n');
    expect(d?.patch).not.toContain('\r');
    const clone = tempDir('git-clone-');
    git(clone, 'clone', '-q', repo, '.');
    write(clone, 'p.diff', d!.patch);
    git(clone, 'apply', '--binary', 'p.diff');
    expect(readFileSync(join(clone, 'notes.dat'), 'utf8')).toBe('plain text changed\n');
    expect(readFileSync(join(clone, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
  });
});
