// Workspaces (src/orchestrator/workspace/workspaces.ts) on its own, with real git in temporary
// repositories: an instance's workspace prepared (snapshot, or a worktree), what it changed
// recorded and landed as its task's merge: says, the worktree dropped, and every failure
// returned as data with its class ({ ok: false, failure, detail }), never thrown.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type LoadedRecipe, loadRecipe } from '../../../src/recipe/index.js';
import { zeroUsage } from '../../../src/run/run-events.js';
import type { InstanceState, TaskState } from '../../../src/run/run-state.js';
import { writeCapturedInputs } from '../../../src/run/run-inputs.js';
import { RunStore } from '../../../src/run/run-store.js';
import { Workspaces } from '../../../src/orchestrator/workspace/workspaces.js';
import { cleanupTempDirs, gitInit, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const RECIPE = `name: ws
provider: scripted
script: script.yaml
tasks:
  - id: inplace
    prompt: "edit"
  - id: branchy
    prompt: "edit"
    isolation: worktree
    merge: branch
  - id: applied
    prompt: "edit"
    isolation: worktree
    merge: apply
`;

function project(ignoreRuns = true): { dir: string; recipe: LoadedRecipe; store: RunStore; workspaces: Workspaces } {
  const dir = tempProject({ 'recipe.yaml': RECIPE, 'script.yaml': 'turns:\n  - { text: "ok" }\n', 'a.txt': 'one\n' });
  if (ignoreRuns) writeFileSync(join(dir, '.gitignore'), 'runs/\n');
  gitInit(dir);
  const loaded = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const store = RunStore.create(join(dir, 'runs'));
  const workspaces = new Workspaces({ recipeDir: dir, store });
  return { dir, recipe: loaded.recipe, store, workspaces };
}

function stateOf(recipe: LoadedRecipe, taskId: string, cwd: string): { t: TaskState; inst: InstanceState } {
  const task = recipe.tasks.find((x) => x.id === taskId)!;
  const inst: InstanceState = {
    id: taskId,
    task: taskId,
    index: 0,
    status: 'running',
    attempt: 1,
    resolved: { id: taskId, taskId, index: 0, cwd, prompt: 'edit', writes: [], verify: [], env: {} },
    usage: zeroUsage(),
    readFiles: [],
    sessionFiles: [],
  };
  return { t: { task, level: 0, status: 'active', expanded: true, instances: [inst] }, inst };
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('Workspaces', () => {
  it('snapshots the checkout, then records what changed since as a patch with the files it touched', async () => {
    const { dir, recipe, store, workspaces } = project();
    const { t, inst } = stateOf(recipe, 'inplace', dir);
    expect(await workspaces.prepare(t, inst)).toEqual({ ok: true });
    expect(inst.git?.root).toBe(dir);
    expect(inst.workCwd).toBe(dir);
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    const land = await workspaces.land(t, inst, 'changed a');
    expect(land).toEqual({ ok: true, files: ['a.txt'], patchFile: `patches/${inst.id}.diff` });
    expect(readFileSync(join(store.dir, `patches/${inst.id}.diff`), 'utf8')).toContain('+two');
  });

  it("the runs folder inside the checkout (not ignored) is in no instance's patch: the run's own files are no one's work", async () => {
    const { dir, recipe, store, workspaces } = project(false);
    const { t, inst } = stateOf(recipe, 'inplace', dir);
    expect(await workspaces.prepare(t, inst)).toEqual({ ok: true });
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    store.writeFile('patches/other.diff', 'diff --git a/x b/x\n'); // the run writes while the instance works
    const land = await workspaces.land(t, inst, 'changed a');
    expect(land).toEqual({ ok: true, files: ['a.txt'], patchFile: `patches/${inst.id}.diff` });
    expect(readFileSync(join(store.dir, `patches/${inst.id}.diff`), 'utf8')).not.toContain('runs/');
  });

  it('a worktree with merge: branch lands a commit on the instance branch, then the worktree is dropped', async () => {
    const { dir, recipe, store, workspaces } = project();
    const { t, inst } = stateOf(recipe, 'branchy', dir);
    expect(await workspaces.prepare(t, inst)).toEqual({ ok: true });
    const wt = inst.git!.worktree!;
    expect(inst.workCwd).toBe(wt);
    writeFileSync(join(wt, 'a.txt'), 'from the worktree\n');
    const land = await workspaces.land(t, inst, 'rewrote a\nmore');
    expect(land.ok && land.branch).toBe(`orchestrate/${store.runId}/branchy`);
    expect(git(dir, 'show', `orchestrate/${store.runId}/branchy:a.txt`)).toBe('from the worktree');
    expect(git(dir, 'log', '-1', '--format=%s', `orchestrate/${store.runId}/branchy`)).toBe('branchy: rewrote a');
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('one\n');
    await workspaces.drop(t, inst);
    expect(existsSync(wt)).toBe(false);
  });

  it('merge: apply that does not apply is patch_conflict, with the patch still recorded', async () => {
    const { dir, recipe, workspaces } = project();
    const { t, inst } = stateOf(recipe, 'applied', dir);
    expect(await workspaces.prepare(t, inst)).toEqual({ ok: true });
    writeFileSync(join(inst.git!.worktree!, 'a.txt'), 'theirs\n');
    writeFileSync(join(dir, 'a.txt'), 'mine meanwhile\n');
    const land = await workspaces.land(t, inst, 'done');
    expect(land).toMatchObject({ ok: false, failure: 'patch_conflict', patchFile: `patches/${inst.id}.diff` });
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('mine meanwhile\n');
  });

  it('returns failures as data with their class: a missing cwd, a worktree outside git, an unmeasurable diff', async () => {
    const { dir, recipe, workspaces } = project();
    const missing = stateOf(recipe, 'inplace', join(dir, 'nope'));
    expect(await workspaces.prepare(missing.t, missing.inst)).toEqual({
      ok: false,
      failure: 'error',
      detail: `the working directory ${join(dir, 'nope')} does not exist`,
    });
    const plain = tempProject({ 'x.txt': 'x\n' });
    const outside = stateOf(recipe, 'branchy', plain);
    const r = await workspaces.prepare(outside.t, outside.inst);
    expect(r).toMatchObject({ ok: false, failure: 'error' });
    expect(!r.ok && r.detail).toContain('isolation: worktree needs');
    // The snapshot's tree is gone: what the attempt changed cannot be measured, so nothing lands.
    const { t, inst } = stateOf(recipe, 'inplace', dir);
    expect(await workspaces.prepare(t, inst)).toEqual({ ok: true });
    inst.git!.tree = '0123456789abcdef0123456789abcdef01234567';
    const land = await workspaces.land(t, inst, 'done');
    expect(land).toMatchObject({ ok: false, failure: 'workspace' });
    expect(!land.ok && land.detail).toContain('cannot be measured');
  });

  it('hides the runs folder from the sandbox and keeps the captured inputs inside the workspace read-only', () => {
    const { dir, recipe, store, workspaces } = project();
    const outside = tempProject({ 'agent.md': 'x\n' });
    writeCapturedInputs(
      store.dir,
      new Map([
        [join(dir, 'recipe.yaml'), Buffer.from(RECIPE)],
        [join(outside, 'agent.md'), Buffer.from('x\n')],
      ]),
    );
    const { inst } = stateOf(recipe, 'inplace', dir);
    expect(workspaces.sandboxPaths(inst)).toEqual({ hide: [join(dir, 'runs')], readOnly: [join(dir, 'recipe.yaml')] });
  });
});
