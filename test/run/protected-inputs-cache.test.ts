// protectedInputPaths keeps its answer per run folder while the inputs manifest is the same file
// (every instance's sandbox asks; #41). The cache must never answer for another run, and a
// recapture (a resume that reloads the recipe replaces the manifest) must be seen at once.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { protectedInputPaths, writeCapturedInputs } from '../../src/run/run-inputs.js';

function runFolder(): { project: string; runDir: string } {
  const project = mkdtempSync(join(tmpdir(), 'protected-inputs-'));
  const runDir = join(project, 'runs', 'r1');
  mkdirSync(runDir, { recursive: true });
  return { project, runDir };
}

const capture = (runDir: string, files: Record<string, string | null>) =>
  writeCapturedInputs(
    runDir,
    new Map(Object.entries(files).map(([path, text]) => [path, text === null ? null : Buffer.from(text)])),
  );

describe('protectedInputPaths', () => {
  it('answers each run folder from its own manifest, and again after a recapture', () => {
    const a = runFolder();
    const b = runFolder();
    capture(a.runDir, { [join(a.project, 'recipe.yaml')]: 'a', [join(a.project, '.mcp.json')]: null });
    capture(b.runDir, { [join(b.project, 'other.yaml')]: 'b' });
    expect(protectedInputPaths(a.runDir)).toEqual([join(a.project, 'recipe.yaml')]);
    expect(protectedInputPaths(b.runDir)).toEqual([join(b.project, 'other.yaml')]);
    // Asked again (the cached answer), the same.
    expect(protectedInputPaths(a.runDir)).toEqual([join(a.project, 'recipe.yaml')]);

    // A recapture: the file that was missing exists now, and an agent file was added.
    capture(a.runDir, {
      [join(a.project, 'recipe.yaml')]: 'a',
      [join(a.project, '.mcp.json')]: '{}',
      [join(a.project, 'worker.md')]: 'w',
    });
    expect(protectedInputPaths(a.runDir).sort()).toEqual(
      [join(a.project, '.mcp.json'), join(a.project, 'recipe.yaml'), join(a.project, 'worker.md')].sort(),
    );
  });

  it('a caller changing its answer does not change the next one', () => {
    const { project, runDir } = runFolder();
    capture(runDir, { [join(project, 'recipe.yaml')]: 'r' });
    protectedInputPaths(runDir).push('/elsewhere');
    expect(protectedInputPaths(runDir)).toEqual([join(project, 'recipe.yaml')]);
  });

  it('a manifest removed or damaged protects nothing (as before), and a new one is read', () => {
    const { project, runDir } = runFolder();
    capture(runDir, { [join(project, 'recipe.yaml')]: 'r' });
    expect(protectedInputPaths(runDir)).toHaveLength(1);
    rmSync(join(runDir, 'inputs', 'manifest.json'));
    expect(protectedInputPaths(runDir)).toEqual([]);
    writeFileSync(join(runDir, 'inputs', 'manifest.json'), '{ not json');
    expect(protectedInputPaths(runDir)).toEqual([]);
    capture(runDir, { [join(project, 'again.yaml')]: 'x' });
    expect(protectedInputPaths(runDir)).toEqual([join(project, 'again.yaml')]);
  });
});
