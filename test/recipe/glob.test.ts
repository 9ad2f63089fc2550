import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expandGlob, globToRegExp } from '../../src/recipe/glob.js';
import type { LoadedTask } from '../../src/recipe/loaded-recipe.js';
import { resolveInstance } from '../../src/recipe/plan.js';
import { validateRecipeText } from '../../src/recipe/validate.js';

const dir = mkdtempSync(join(tmpdir(), 'orchestrate-glob-'));

describe('glob', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of [
    'repos/api/a.ts',
    'repos/web/b.ts',
    'repos/web/deep/c.ts',
    'repos/.cache/x.ts',
    'repos/README.md',
    'other/z.ts',
  ]) {
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
    expect(expandGlob(dir, 'repos/**/*.ts', 'file')).toEqual([
      'repos/api/a.ts',
      'repos/web/b.ts',
      'repos/web/deep/c.ts',
    ]);
    expect(expandGlob(dir, 'repos/.*')).toEqual(['repos/.cache']);
    expect(expandGlob(dir, './repos/w*/')).toEqual(['repos/web']);
    expect(expandGlob(dir, 'missing/*')).toEqual([]);
  });
});

describe('malformed globs in a recipe', () => {
  it('are validate errors at file:line:col, for for_each globs and writes, before anything runs', () => {
    const yaml = [
      'name: g',
      'tasks:',
      '  - id: each',
      '    for_each: { glob: "projects/[z-a]*" }',
      '    writes: ["ok/**", "[z-a]/**", "${{ item }}/{a,b"]',
      '    prompt: p',
    ].join('\n');
    const r = validateRecipeText(yaml, '/work/r/recipe.yaml', { cwd: '/work/r' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.code} ${p.message}`)).toEqual([
      'recipe.yaml:4:23 bad_glob task "each" for_each.glob: "projects/[z-a]*" is not a valid glob: a character range goes backwards (z-a); write the lower character first, e.g. [a-z]',
      'recipe.yaml:5:23 bad_glob task "each" writes[1]: "[z-a]/**" is not a valid glob: a character range goes backwards (z-a); write the lower character first, e.g. [a-z]',
      'recipe.yaml:5:35 bad_glob task "each" writes[2]: "${{ item }}/{a,b" is not a valid glob: a "{" is never closed; escape it (\\{) to match it literally',
    ]);
  });

  it('rendered from an item, fail the instance with a message instead of crashing the run', () => {
    const task = {
      id: 't',
      dir,
      writes: ['${{ item }}/**'],
      verify: [],
      env: {},
      forEach: { kind: 'list', items: ['[z-a]'] },
      as: 'item',
    } as unknown as LoadedTask;
    const r = resolveInstance(
      task,
      { id: 't.x', taskId: 't', key: 'x', item: '[z-a]', index: 0 },
      { inputs: {}, env: {}, tasks: {} },
    );
    expect(r).toEqual({
      ok: false,
      error:
        'task "t" (t.x) writes[0]: "[z-a]/**" is not a valid glob: a character range goes backwards (z-a); write the lower character first, e.g. [a-z]',
    });
  });
});
