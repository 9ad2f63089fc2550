import { describe, expect, it } from 'vitest';
import { absoluteGlob, globsOverlap, scopesOverlap } from '../../../src/orchestrator/workspace/write-scopes.js';

describe('write scopes', () => {
  it('resolves relative globs against the recipe folder and keeps wildcards', () => {
    expect(absoluteGlob('/r', 'repos/a/**')).toBe('/r/repos/a/**');
    expect(absoluteGlob('/r/x', '../y/*.ts')).toBe('/r/y/*.ts');
    expect(absoluteGlob('/r', '/abs/**')).toBe('/abs/**');
  });

  it('separate folders never overlap', () => {
    expect(globsOverlap('/r/repos/a/**', '/r/repos/b/**')).toBe(false);
    expect(globsOverlap('/r/src/*.md', '/r/docs/*.md')).toBe(false);
    expect(globsOverlap('/r/*.md', '/r/docs/a.md')).toBe(false);
  });

  it('a deep glob overlaps anything under its prefix', () => {
    expect(globsOverlap('/r/**', '/r/src/a.ts')).toBe(true);
    expect(globsOverlap('/r/src/**', '/r/src/deep/x/y.ts')).toBe(true);
    expect(globsOverlap('/r/src/**/*.ts', '/r/src/a.ts')).toBe(true);
  });

  it('compares wildcard segments by their literal ends', () => {
    expect(globsOverlap('/r/src/*.ts', '/r/src/a.ts')).toBe(true);
    expect(globsOverlap('/r/src/*.ts', '/r/src/a.js')).toBe(false);
    expect(globsOverlap('/r/src/a*', '/r/src/b*')).toBe(false);
    expect(globsOverlap('/r/src/a*', '/r/src/*z')).toBe(true);
  });

  it('a folder write overlaps files inside it; empty scopes overlap nothing', () => {
    expect(globsOverlap('/r/src', '/r/src/a.ts')).toBe(true);
    expect(scopesOverlap([], ['/r/**'])).toBe(false);
    expect(scopesOverlap(['/r/a/**', '/r/b/x'], ['/r/c/**', '/r/b/*'])).toBe(true);
  });

  it('extglobs, classes and escapes count as wildcards, so overlap is never missed', () => {
    expect(globsOverlap('/r/src/!(gen)/**', '/r/src/app/x.ts')).toBe(true);
    expect(globsOverlap('/r/src/@(a|b).ts', '/r/src/a.ts')).toBe(true);
    expect(globsOverlap('/r/src/@(a|b).ts', '/r/src/a.js')).toBe(false);
    expect(globsOverlap('/r/src/[[:alpha:]]*.ts', '/r/src/x.ts')).toBe(true);
    expect(globsOverlap('/r/lit\\*', '/r/lit*')).toBe(true);
  });
});
