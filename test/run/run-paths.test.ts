// Paths in the run log: stored relative to the run (run_start.root, the recipe's folder, and the
// run folder), read back absolute by readRunLog, resolved against wherever the folder now is. Old
// logs with absolute paths read as they were written.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRunLog, RunStore } from '../../src/run/run-store.js';
import { storedPath } from '../../src/run/run-paths.js';
import type { RunEvent } from '../../src/run/run-events.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-run-paths-'));
  made.push(d);
  return d;
}

const plan = [{ task: 'fix', keys: ['fix'], needs: [], dynamic: false }];

/** A run of `project/recipe.yaml` recorded in `runsDir`: run_start and one instance_start. */
function record(project: string, runsDir: string, outside: string): string {
  const store = RunStore.create(runsDir, 'run-1');
  store.append({
    type: 'run_start',
    recipe: join(project, 'recipe.yaml'),
    name: 'r',
    recipeHash: 'h',
    inputs: {},
    plan,
  });
  store.append({
    type: 'instance_start',
    task: 'fix',
    key: 'fix',
    attempt: 1,
    cwd: join(project, 'repo', 'src'),
    repoRoot: join(project, 'repo'),
    sessionFile: store.sessionFile('fix'),
    worktree: join(store.dir, 'worktrees', 'fix'),
  });
  store.append({ type: 'instance_start', task: 'fix', key: 'fix', attempt: 2, cwd: outside });
  return store.dir;
}

const starts = (events: RunEvent[]) =>
  events.filter((e): e is Extract<RunEvent, { type: 'instance_start' }> => e.type === 'instance_start');

describe('run log paths', () => {
  it('are stored relative (root to the run folder, the rest to root or the run folder) and read back absolute', () => {
    const project = temp();
    const outside = temp();
    const runDir = record(project, join(project, '.orchestrate', 'runs'), outside);
    const lines = readFileSync(join(runDir, 'run.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ root: '../../..', recipe: 'recipe.yaml' });
    expect(lines[1]).toMatchObject({
      cwd: 'repo/src',
      repoRoot: 'repo',
      sessionFile: 'sessions/fix.jsonl',
      worktree: 'worktrees/fix',
    });
    // A folder outside the root is relative too: a project copied whole keeps it inside the copy.
    expect(lines[2]!.cwd).toBe(relative(project, outside));
    expect(lines[2]!.cwd).toMatch(/^\.\.\//);

    const { events } = readRunLog(join(runDir, 'run.jsonl'));
    expect(events[0]).toMatchObject({ recipe: join(project, 'recipe.yaml'), root: project });
    expect(starts(events)[0]).toMatchObject({
      cwd: join(project, 'repo', 'src'),
      repoRoot: join(project, 'repo'),
      sessionFile: join(runDir, 'sessions', 'fix.jsonl'),
      worktree: join(runDir, 'worktrees', 'fix'),
    });
    expect(starts(events)[1]!.cwd).toBe(outside);
  });

  it('a copied project folder reads as the copy; a reopened store keeps writing relative to the copy', () => {
    const project = temp();
    const runDir = record(project, join(project, '.orchestrate', 'runs'), temp());
    const copy = join(temp(), 'copy');
    cpSync(project, copy, { recursive: true });
    rmSync(project, { recursive: true, force: true });
    const copyRun = join(copy, '.orchestrate', 'runs', 'run-1');
    const store = RunStore.open(copyRun);
    store.append({
      type: 'instance_start',
      task: 'fix',
      key: 'fix',
      attempt: 3,
      cwd: join(copy, 'repo'),
      sessionFile: store.sessionFile('fix'),
    });
    const last = JSON.parse(readFileSync(join(copyRun, 'run.jsonl'), 'utf8').trim().split('\n').at(-1)!) as Record<
      string,
      unknown
    >;
    expect(last).toMatchObject({ cwd: 'repo', sessionFile: 'sessions/fix.jsonl' });
    const { events } = readRunLog(join(copyRun, 'run.jsonl'));
    expect(events[0]).toMatchObject({ recipe: join(copy, 'recipe.yaml') });
    for (const e of starts(events).filter((s) => s.repoRoot || s.attempt === 3))
      expect(e.cwd!.startsWith(copy)).toBe(true);
    expect(JSON.stringify(events)).not.toContain(runDir);
  });

  it('runs recorded outside the project (--run-dir elsewhere) point at it relatively and read back to it', () => {
    const project = temp();
    const runDir = record(project, join(temp(), 'runs'), temp());
    const first = JSON.parse(readFileSync(join(runDir, 'run.jsonl'), 'utf8').split('\n')[0]!) as Record<
      string,
      unknown
    >;
    expect(first).toMatchObject({ root: relative(runDir, project), recipe: 'recipe.yaml' });
    expect(readRunLog(join(runDir, 'run.jsonl')).events[0]).toMatchObject({ recipe: join(project, 'recipe.yaml') });
  });

  it("an old log with absolute paths (no root) reads as it was written, its root the recipe's folder", () => {
    const dir = join(temp(), 'old-run');
    mkdirSync(dir);
    const old = [
      {
        v: 1,
        ts: 1,
        runId: 'old-run',
        type: 'run_start',
        recipe: '/work/p/recipe.yaml',
        name: 'r',
        recipeHash: 'h',
        inputs: {},
        plan,
      },
      {
        v: 1,
        ts: 2,
        runId: 'old-run',
        type: 'instance_start',
        task: 'fix',
        key: 'fix',
        attempt: 1,
        cwd: '/work/p/repo',
        repoRoot: '/work/p/repo',
        sessionFile: '/work/p/.orchestrate/runs/old-run/sessions/fix.jsonl',
        worktree: '/work/p/.orchestrate/runs/old-run/worktrees/fix',
      },
    ];
    writeFileSync(join(dir, 'run.jsonl'), `${old.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const { events } = readRunLog(join(dir, 'run.jsonl'));
    // Every path as written; the root is the recipe's folder.
    expect(events).toEqual([{ ...old[0], root: '/work/p' }, old[1]]);
  });

  it('storedPath: relative with "/" inside and outside the base, the base itself "."', () => {
    expect(storedPath('/a/b', '/a/b/c/d.txt')).toBe('c/d.txt');
    expect(storedPath('/a/b', '/a/b')).toBe('.');
    expect(storedPath('/a/b', '/a/bc/d')).toBe('../bc/d');
    expect(storedPath('/a/b', '/a')).toBe('..');
    expect(storedPath('/a/b', 'already/relative')).toBe('already/relative');
  });
});
