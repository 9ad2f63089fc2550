// The captured inputs of a run, loaded without running anything: what a capture holds (files
// read, files found missing, extensions), that a later load reads the copies (a changed extension
// or script is run from its copy, an unchanged one from its place), and that damaged captures
// are refused with a message saying what to do.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readInputsManifest } from '../../src/run/run-inputs.js';
import { loadAndCaptureRecipe, loadTrustedRecipe } from '../../src/run/trusted-recipe.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const RECIPE = `name: captured
provider: scripted
script: script.yaml
sandbox: workspace
agents:
  worker: { system_file: worker.md, extensions: [ext.mjs], summaries: extractive }
tasks:
  - id: a
    agent: worker
    prompt: go
`;

function project(): { dir: string; runDir: string; env: Record<string, string> } {
  const dir = tempProject({
    'recipe.yaml': RECIPE,
    'worker.md': '---\nname: worker\n---\nBe careful.\n',
    'script.yaml': '- text: v1\n',
    'ext.mjs': 'export default function () {}\n',
  });
  const runDir = join(dir, 'runs', 'r1');
  mkdirSync(runDir, { recursive: true });
  return { dir, runDir, env: { HOME: join(dir, 'home') } };
}

describe('captured run inputs', () => {
  it('a capture holds every file the load read, the missing ones as missing, and the extensions', () => {
    const { dir, runDir, env } = project();
    const loaded = loadAndCaptureRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    expect(loaded.ok).toBe(true);
    const files = readInputsManifest(runDir)!.files;
    const byPath = new Map(files.map((f) => [f.path, f]));
    for (const name of ['recipe.yaml', 'worker.md', 'script.yaml', 'ext.mjs'])
      expect(byPath.get(`../../${name}`)?.sha256, name).toMatch(/^[0-9a-f]{64}$/);
    for (const missing of ['.mcp.json', '.claude/settings.json', 'home/.claude/settings.json'])
      expect(byPath.get(`../../${missing}`), missing).toEqual({ path: `../../${missing}` });
    const copy = byPath.get('../../worker.md')!.copy!;
    expect(readFileSync(join(runDir, 'inputs', copy), 'utf8')).toContain('Be careful.');
  });

  it('a later load reads the copies; a changed extension or script runs from its copy, an unchanged one from its place', () => {
    const { dir, runDir, env } = project();
    loadAndCaptureRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    const same = loadTrustedRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    if (!same.ok) throw new Error(same.message);
    expect(same.recipe.agents.worker!.extensions).toEqual([join(dir, 'ext.mjs')]);

    writeFileSync(join(dir, 'recipe.yaml'), RECIPE.replace('sandbox: workspace', 'sandbox: none'));
    writeFileSync(join(dir, 'worker.md'), '---\nname: worker\n---\nBe reckless.\n');
    writeFileSync(join(dir, 'ext.mjs'), 'export default function () { /* changed */ }\n');
    writeFileSync(join(dir, 'script.yaml'), '- text: v2\n');
    const later = loadTrustedRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    if (!later.ok) throw new Error(later.message);
    expect(later.recipe.sandbox).toBe('workspace');
    const worker = later.recipe.agents.worker!;
    expect(worker.system).toContain('Be careful.');
    expect(worker.extensions[0]).toMatch(/\/runs\/r1\/inputs\/files\/[0-9a-f]{64}\.mjs$/);
    expect(readFileSync(worker.extensions[0]!, 'utf8')).not.toContain('changed');
    expect(readFileSync(worker.script!, 'utf8')).toBe('- text: v1\n');
    expect(later.inputs.changed.map((c) => [c.file, c.change])).toEqual([
      [join(dir, 'ext.mjs'), 'modified'],
      [join(dir, 'recipe.yaml'), 'modified'],
      [join(dir, 'script.yaml'), 'modified'],
      [join(dir, 'worker.md'), 'modified'],
    ]);
    expect(later.inputs.changed[1]!.diff).toBe('-sandbox: workspace\n+sandbox: none');

    const reloaded = loadTrustedRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env }, { reloadBy: 'ana' });
    if (!reloaded.ok) throw new Error(reloaded.message);
    expect(reloaded.recipe.sandbox).toBe('none');
    expect(reloaded.inputs).toMatchObject({ source: 'reloaded', reloadedBy: 'ana' });
    const after = loadTrustedRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    expect(after.ok && after.inputs.changed).toEqual([]);
  });

  it('a damaged manifest or an altered copy is refused, naming the way forward', () => {
    const { dir, runDir, env } = project();
    loadAndCaptureRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    const manifest = readInputsManifest(runDir)!;
    const copy = manifest.files.find((f) => f.path === '../../recipe.yaml')!.copy!;
    writeFileSync(join(runDir, 'inputs', copy), RECIPE.replace('sandbox: workspace', 'sandbox: none'));
    const altered = loadTrustedRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    expect(altered.ok).toBe(false);
    expect(JSON.stringify(altered)).toContain('was altered');

    writeFileSync(join(runDir, 'inputs', 'manifest.json'), '{"version": 1');
    const damaged = loadTrustedRecipe(runDir, join(dir, 'recipe.yaml'), { cwd: dir, env });
    expect(damaged.ok).toBe(false);
    expect(!damaged.ok && damaged.message).toMatch(/not valid JSON.*--reload-recipe/);
  });
});
