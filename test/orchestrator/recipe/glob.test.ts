import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expandGlob, globToRegExp } from '../../../src/orchestrator/recipe/glob.js';

describe('glob', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orchestrate-glob-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['repos/api/a.ts', 'repos/web/b.ts', 'repos/web/deep/c.ts', 'repos/.cache/x.ts', 'repos/README.md', 'other/z.ts']) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), '');
  }

  it('compiles *, ?, **, [..] and {a,b}', () => {
    expect(globToRegExp('repos/*').test('repos/api')).toBe(true);
    expect(globToRegExp('repos/*').test('repos/api/x')).toBe(false);
    expect(globToRegExp('**/*.ts').test('a/b/c.ts')).toBe(true);
    expect(globToRegExp('**/*.ts').test('c.ts')).toBe(true);
    expect(globToRegExp('r?pos/[aw]*').test('repos/web')).toBe(true);
    expect(globToRegExp('{repos,other}/*').test('other/z.ts')).toBe(true);
    expect(globToRegExp('a.b').test('axb')).toBe(false);
  });

  it('matches folders by default, files when asked, skipping hidden entries', () => {
    expect(expandGlob(dir, 'repos/*')).toEqual(['repos/api', 'repos/web']);
    expect(expandGlob(dir, 'repos/*', 'file')).toEqual(['repos/README.md']);
    expect(expandGlob(dir, 'repos/**/*.ts', 'file')).toEqual(['repos/api/a.ts', 'repos/web/b.ts', 'repos/web/deep/c.ts']);
    expect(expandGlob(dir, 'repos/.*')).toEqual(['repos/.cache']);
    expect(expandGlob(dir, './repos/w*/')).toEqual(['repos/web']);
    expect(expandGlob(dir, 'missing/*')).toEqual([]);
  });
});
