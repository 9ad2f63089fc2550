// plan.md is written off the coordinator's event loop (issue 41): a rewrite asked for returns
// before anything is written, at most one write is in flight, rewrites asked for meanwhile become
// one more write rendered when it starts (the latest plan wins), and finish() awaits the write under
// way before the final plan.md and result.json. A real run store in a temp folder, real files.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunFiles } from '../../src/orchestrator/run-files.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { RunStore } from '../../src/run/run-store.js';
import { zeroUsage } from '../../src/run/usage-summary.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A RunFiles over a real store, its live status settable, its plan.md writes counted. */
function runFiles() {
  const dir = mkdtempSync(join(tmpdir(), 'run-files-'));
  dirs.push(dir);
  const file = join(dir, 'recipe.yaml');
  writeFileSync(join(dir, 'script.yaml'), 'turns:\n  - text: done\n');
  writeFileSync(
    file,
    'name: plan-writes\nprovider: scripted\nscript: script.yaml\nagents:\n  a: {}\ntasks:\n  - id: t\n    agent: a\n    prompt: hi\n',
  );
  const loaded = loadRecipe(file, { cwd: dir });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const store = RunStore.create(join(dir, 'runs'));
  const writes = { started: 0, active: 0, mostActive: 0 };
  const write = store.writeFileAsync.bind(store);
  store.writeFileAsync = async (name, content) => {
    if (name === 'plan.md') {
      writes.started++;
      writes.mostActive = Math.max(writes.mostActive, ++writes.active);
    }
    try {
      return await write(name, content);
    } finally {
      if (name === 'plan.md') writes.active--;
    }
  };
  const live = { status: 'running 0' };
  const files = new RunFiles({ recipe: loaded.recipe, store, tasks: () => [], liveStatus: () => live.status });
  const plan = () => readFileSync(join(store.dir, 'plan.md'), 'utf8');
  return { store, files, writes, live, plan };
}

const ended = { startedAt: 1, endedAt: 2, usage: zeroUsage() };

describe('RunFiles: plan.md off the event loop', () => {
  it('coalesces rewrites into one write in flight and one after it, the latest status winning', async () => {
    const { store, files, writes, live, plan } = runFiles();
    files.writePlan();
    // Nothing is written on the caller's turn (the old code replaced plan.md, fsyncs and all, here).
    expect(existsSync(join(store.dir, 'plan.md'))).toBe(false);
    for (let k = 1; k <= 20; k++) {
      live.status = `running ${k}`;
      files.writePlan();
    }
    await files.planWritten();
    expect(writes.mostActive).toBe(1);
    expect(writes.started).toBe(2);
    expect(plan()).toContain('Status: running 20 —');

    const result = await files.finish({ status: 'succeeded', ...ended });
    expect(result.error).toBeUndefined();
    expect(plan()).toContain('Status: succeeded —');
    expect(JSON.parse(readFileSync(result.resultPath, 'utf8'))).toMatchObject({ status: 'succeeded' });
  });

  it('finish() waits for the write under way, so the final plan.md is the last one written', async () => {
    const { files, writes, live, plan } = runFiles();
    files.writePlan();
    live.status = 'running later';
    files.writePlan(); // coalesced; the run's end drops it (the final plan supersedes it)
    await files.finish({ status: 'failed', ...ended });
    expect(writes.active).toBe(0);
    expect(writes.started).toBe(2); // the one under way, then the final one
    expect(plan()).toContain('Status: failed —');
    await files.planWritten();
    expect(plan()).toContain('Status: failed —');
  });

  it('writes nothing after the run is fenced (another coordinator owns the folder)', async () => {
    const { store, files } = runFiles();
    store.fence('lease lost');
    files.writePlan();
    await files.planWritten();
    const result = await files.finish({ status: 'succeeded', ...ended });
    expect(existsSync(join(store.dir, 'plan.md'))).toBe(false);
    expect(existsSync(result.resultPath)).toBe(false);
  });
});
