// The example recipes in recipes/ run as shipped, offline (their own `provider: scripted` and
// script files), each on a fresh copy so the checkout is never touched.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, ofType, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const RECIPES = resolve(import.meta.dirname, '../../recipes');

async function runShipped(name: string) {
  const dir = join(tempProject({}), name);
  cpSync(join(RECIPES, name), dir, {
    recursive: true,
    filter: (src) => !/[\\/](\.orchestrate|work)([\\/]|$)/.test(src.slice(RECIPES.length)),
  });
  const r = await runRecipeFile(
    join(dir, 'recipe.yaml'),
    { cwd: dir, env: { ...process.env, ANTHROPIC_API_KEY: '' } },
    { runsDir: join(dir, 'runs') },
  );
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, out: r.outcome, log: events(r.outcome.dir) };
}

describe('example recipes run as shipped (offline)', () => {
  it('fan-out: one surveyor per project folder, then an overview built from their JSON', async () => {
    const { out, log } = await runShipped('fan-out');
    expect(out.status).toBe('succeeded');
    const surveys = ofType(log, 'instance_done').filter((e) => e.task === 'survey');
    expect(surveys.map((e) => (e.output as { name: string }).name).sort()).toEqual(['alpha', 'beta', 'gamma']);
    expect(String(ofType(log, 'instance_done').find((e) => e.task === 'overview')!.output)).toMatch(
      /Issues, most urgent first/,
    );
  });

  it('planner-worker: the pair builds slugify and its tests pass', async () => {
    const { dir, out, log } = await runShipped('planner-worker');
    expect(out.status).toBe('succeeded');
    expect(ofType(log, 'instance_done').find((e) => e.key === 'build')).toMatchObject({ approved: true });
    expect(existsSync(join(dir, 'work', 'slugify.js'))).toBe(true);
    execFileSync(process.execPath, ['--test'], { cwd: join(dir, 'work'), stdio: 'pipe' });
  });

  it('batch-refactor: one patch per changed repository, each gated by verify, and a review', async () => {
    const { dir, out, log } = await runShipped('batch-refactor');
    expect(out.status).toBe('succeeded');
    expect(ofType(log, 'task_expanded').find((e) => e.task === 'refactor')!.keys).toEqual([
      'refactor.work-repo-a',
      'refactor.work-repo-b',
    ]);
    for (const repo of ['a', 'b']) {
      expect(readFileSync(join(out.dir, 'patches', `refactor.work-repo-${repo}.diff`), 'utf8')).toContain(
        '+import { logger }',
      );
      execFileSync(process.execPath, ['test.js'], { cwd: join(dir, 'work', `repo-${repo}`), stdio: 'pipe' });
    }
    expect(ofType(log, 'verify').every((v) => v.ok)).toBe(true);
    const plan = readFileSync(out.planFile, 'utf8');
    expect(plan).toContain('work/repo-b/src/checkout.js — refactor.work-repo-b');
  });
});
