// What `npm pack` would publish: the command's entry point, every example `orchestrate init`
// copies, the license; no leftovers of runs made in the repository. (.ci/run packs, installs
// and runs the real tarball; this is the fast check of the file list.)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INIT_EXAMPLES } from '../../src/cli/commands/init.js';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;

describe('package.json', () => {
  it('installs the orchestrate command from a name of its own, with a license and a repository', () => {
    // `orchestrate` on npm is someone else's package (a database client).
    expect(pkg.name).not.toBe('orchestrate');
    expect(pkg.bin).toEqual({ orchestrate: 'dist/cli/main.js' });
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\//) });
    // A fresh clone has no dist/: packing must build it.
    expect((pkg.scripts as Record<string, string>).prepack).toMatch(/npm run build/);
  });
});

// Packing reads dist/; without a build there is nothing to list (`npm run build` makes it).
describe.skipIf(!existsSync(join(ROOT, 'dist', 'cli', 'main.js')))('npm pack --dry-run', () => {
  it('lists the entry point, the examples init copies, README and LICENSE, and no run leftovers', {
    timeout: 60_000,
  }, () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const f of [
      'dist/cli/main.js',
      'dist/cli/commands/init.js',
      'dist/index.js',
      'README.md',
      'LICENSE',
      'recipes/recipe.schema.json',
    ])
      expect(files, f).toContain(f);
    for (const e of INIT_EXAMPLES)
      expect(
        files.some((f) => f.startsWith(`recipes/${e.name}/`)),
        e.name,
      ).toBe(true);
    for (const f of [
      'recipes/fan-out/recipe.yaml',
      'recipes/fan-out/script.yaml',
      'recipes/agent/hello.yaml',
      'recipes/agent/tool-round.yaml',
    ])
      expect(files, f).toContain(f);
    // The sources and tests stay home; a run's folder or workspace made in the repository too.
    expect(files.filter((f) => /^(src|test)\//.test(f) || /(^|\/)(\.orchestrate|work)\//.test(f))).toEqual([]);
  });
});
