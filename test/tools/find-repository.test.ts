// findRepository finds the repository git would find from a folder without running git (a `.git`
// folder with a HEAD, or a `.git` file naming one), walking up from deep below it (#41 made the
// levels without a `.git` cheap; the answers must stay the same).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRepository } from '../../src/tools/product-git.js';

function gitDirAt(dir: string): string {
  const g = join(dir, '.git');
  mkdirSync(g, { recursive: true });
  writeFileSync(join(g, 'HEAD'), 'ref: refs/heads/main\n');
  return g;
}

describe('findRepository', () => {
  it('finds a .git folder several levels up, and a nearer worktree .git file first', () => {
    const top = mkdtempSync(join(tmpdir(), 'find-repo-'));
    const gitDir = gitDirAt(top);
    const deep = join(top, 'a', 'b', 'c');
    mkdirSync(deep, { recursive: true });
    expect(findRepository(deep)).toEqual({ top, gitDir, commonDir: gitDir });

    const wtGit = join(gitDir, 'worktrees', 'w1');
    mkdirSync(wtGit, { recursive: true });
    writeFileSync(join(wtGit, 'HEAD'), 'ref: refs/heads/w1\n');
    writeFileSync(join(wtGit, 'commondir'), '../..\n');
    writeFileSync(join(top, 'a', '.git'), `gitdir: ${wtGit}\n`);
    expect(findRepository(deep)).toEqual({ top: join(top, 'a'), gitDir: wtGit, commonDir: gitDir });
  });

  it('skips a .git without a HEAD, and finds none where there is none', () => {
    const top = mkdtempSync(join(tmpdir(), 'find-repo-'));
    const inner = join(top, 'x', 'y');
    mkdirSync(join(inner, '.git'), { recursive: true });
    const outside = findRepository(top);
    // Whatever holds the temp folder (usually nothing) is the answer for the folder without a repository.
    expect(findRepository(inner)).toEqual(outside);
    const gitDir = gitDirAt(top);
    expect(findRepository(inner)).toEqual({ top, gitDir, commonDir: gitDir });
  });
});
