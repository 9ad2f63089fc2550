import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  importSpecifiers,
  maskSource,
  moduleClosure,
  resolveRelativeImport,
} from '../../src/cluster/module-closure.js';

const scratch = mkdtempSync(join(tmpdir(), 'module-closure-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
function project(files: Record<string, string>): string {
  const root = join(scratch, `p${++counter}`);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}
const rel = (root: string, files: string[]): string[] => files.map((f) => relative(root, f)).sort();

describe('importSpecifiers', () => {
  it('finds every static form: import/export from, side effects, import(), require()', () => {
    const src = `
import a from './a.js';
import * as b from "./b";
import { c1,
  c2 as c3 } from '../lib/c.ts';
import type { T } from './types.js';
import d, { e } from './d.mjs' with { type: 'x' };
import './side-effect.js';
export * from './star.js';
export * as ns from './ns.js';
export { f } from './f.js';
export { g as default } from './g.cjs';
const h = await import('./h.js');
const i = await import(\`./i.js\`, { with: {} });
const j = require('./j.cjs');
import k = require('./k');
import zod from 'zod';
import { x } from 'node:path';
`;
    expect(importSpecifiers(src)).toEqual([
      './a.js',
      './b',
      '../lib/c.ts',
      './types.js',
      './d.mjs',
      './side-effect.js',
      './star.js',
      './ns.js',
      './f.js',
      './g.cjs',
      './h.js',
      './i.js',
      './j.cjs',
      './k',
      'zod',
      'node:path',
    ]);
  });

  it('ignores imports inside comments, strings, templates and regex literals, and dynamic specifiers', () => {
    const src = `
// import a from './commented.js';
/* export * from './block.js'; */
const s = "import b from './in-string.js'";
const t = \`require('./in-template.js') \${ await import('./in-substitution.js') } import('./after.js')\`;
const re = /import c from '.\\/in-regex.js'/;
const ratio = total / count; const other = x / y; // import d from './trailing.js'
const name = './computed.js';
await import(name);
await import('./pre' + name);
obj.require('./method.js');
const important = 1; const reimport = 2;
import real from './real.js';
`;
    expect(importSpecifiers(src)).toEqual(['./in-substitution.js', './real.js']);
  });

  it('masks a division after a closing parenthesis as code, not as a regex that would swallow the next import', () => {
    const src = `const half = (a) / 2; import x from './x.js'; const q = f(1) / g(2);\nimport y from './y.js';`;
    expect(importSpecifiers(src)).toEqual(['./x.js', './y.js']);
    expect(maskSource(`return /a'b/.test(s) ? 'c' : "d"`).strings).toEqual(['c', 'd']);
  });
});

describe('resolveRelativeImport', () => {
  it('resolves like Node and tsx: exact path, .js for .ts, appended extensions, folder index', () => {
    const root = project({
      'ext.ts': '',
      'exact.js': '',
      'twin.ts': '',
      'both.js': '',
      'both.ts': '',
      'bare-ext.mts': '',
      'lib/index.ts': '',
      'esm.mts': '',
      'data.json': '{}',
    });
    const from = join(root, 'ext.ts');
    const r = (s: string) => rel(root, resolveRelativeImport(from, s));
    expect(r('./exact.js')).toEqual(['exact.js']);
    expect(r('./twin.js')).toEqual(['twin.ts']);
    // Both may be what the loader picks: both travel.
    expect(r('./both.js')).toEqual(['both.js', 'both.ts']);
    expect(r('./bare-ext')).toEqual(['bare-ext.mts']);
    expect(r('./lib')).toEqual(['lib/index.ts']);
    expect(r('./lib/')).toEqual(['lib/index.ts']);
    expect(r('./esm.mjs')).toEqual(['esm.mts']);
    expect(r('./data.json')).toEqual(['data.json']);
    expect(r('./twin.js?v=1')).toEqual(['twin.ts']);
    expect(r('./nothing.js')).toEqual([]);
    expect(rel(root, resolveRelativeImport(join(root, 'lib', 'index.ts'), '../twin.js'))).toEqual(['twin.ts']);
  });
});

describe('moduleClosure', () => {
  it('follows relative imports recursively, across folders, once each, and leaves packages out', () => {
    const root = project({
      'ext/main.ts': `import { helper } from './helpers.js';\nexport * from './reexport';\nimport 'zod';\nexport default () => helper() + import('./late.mjs');`,
      'ext/helpers.ts': `import { util } from '../lib/util.ts';\nimport { helper as again } from './helpers.js';\nexport const helper = () => util();`,
      'ext/reexport/index.ts': `export { util } from '../../lib/util.ts';`,
      'ext/late.mjs': `const { deep } = require('./deep/more.cjs'); export default deep;`,
      'ext/deep/more.cjs': `module.exports = { deep: 1 };`,
      'lib/util.ts': `import missing from './gone.js';\nexport const util = () => 1;`,
      'lib/unrelated.ts': `export const x = 1;`,
      'lib/package.json': `{ "type": "commonjs" }`,
      'package.json': `{ "type": "module" }`,
    });
    const c = moduleClosure(join(root, 'ext', 'main.ts'));
    expect(c.files[0]).toBe(join(root, 'ext', 'main.ts'));
    // Each file's package scope travels with it (it decides ES module or CommonJS).
    expect(rel(root, c.files)).toEqual([
      'ext/deep/more.cjs',
      'ext/helpers.ts',
      'ext/late.mjs',
      'ext/main.ts',
      'ext/reexport/index.ts',
      'lib/package.json',
      'lib/util.ts',
      'package.json',
    ]);
    expect(c.missing).toEqual([{ from: join(root, 'lib', 'util.ts'), specifier: './gone.js' }]);
  });

  it('is enough to load the entry under tsx after the files moved elsewhere with their layout (as on a worker)', () => {
    const root = project({
      'agent/ext.ts': `import { greet } from './helpers.js';\nimport { suffix } from '../shared/util';\nexport * from './more/index.js';\nexport default async function () { const late = await import('./late.js'); return greet() + suffix + late.tail; }`,
      'agent/helpers.ts': `import { base } from './more/base.ts';\nexport const greet = () => base + '-greet';`,
      'agent/more/index.ts': `export const extra = 'x';`,
      'agent/more/base.ts': `export const base = 'base';`,
      'agent/late.ts': `export const tail = '-late';`,
      'shared/util.ts': `export const suffix = '-util';`,
      // Without it (none above the scratch folder) tsx reads ext.ts as CommonJS: no default export function.
      'package.json': `{ "type": "module" }`,
    });
    const entry = join(root, 'agent', 'ext.ts');
    const moved = join(scratch, `moved-${++counter}`);
    for (const f of moduleClosure(entry).files) {
      const dest = join(moved, f);
      mkdirSync(dirname(dest), { recursive: true });
      copyFileSync(f, dest);
    }
    const script = `import(${JSON.stringify(pathToFileURL(join(moved, entry)).href)}).then(async (m) => console.log(await m.default(), m.extra))`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
      encoding: 'utf8',
      cwd: process.cwd(),
    });
    expect(out.trim()).toBe('base-greet-util-late x');
  });
});
