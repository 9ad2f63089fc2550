// service/resume-run.ts with real runs (the scripted provider on real worker threads): a run
// interrupted before its agent answered is continued to its end, with a retry named by the actor
// the caller gives; a run that is not there or already succeeded is a `usage` reason, not a throw.
import { afterAll, describe, expect, it } from 'vitest';
import { resumeRun } from '../../src/service/resume-run.js';
import { prepareRun, startRun } from '../../src/service/start-run.js';
import { cleanupTempDirs, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const env = { PATH: process.env.PATH };
const BY = { retry: 'resume (test)', reloadRecipe: 'resume --reload-recipe (test)' };

function project(): string {
  return tempProject({
    'recipe.yaml': `name: tiny
provider: scripted
script: script.yaml
tasks:
  - id: hello
    prompt: "Say hello"
`,
    'script.yaml': 'turns:\n  - text: "hello"\n',
  });
}

/** A run of the project interrupted as soon as its store exists: nothing finished, resumable. */
async function interruptedRun(dir: string): Promise<string> {
  const prepared = prepareRun({ recipe: 'recipe.yaml', runsDir: 'runs' }, { cwd: dir, env });
  if (!prepared.ok) throw new Error('the recipe loads');
  const stop = new AbortController();
  const result = await startRun(prepared, { cwd: dir, env, signal: stop.signal, onStore: () => stop.abort() });
  if (!result.ok) throw new Error(JSON.stringify(result));
  expect(result.outcome.status).toBe('interrupted');
  return result.outcome.runId;
}

describe('service: resume a run', { timeout: 120_000 }, () => {
  it('continues an interrupted run to its end, by id prefix, with the new budget recorded', async () => {
    const dir = project();
    const runId = await interruptedRun(dir);
    const result = await resumeRun({ run: runId.slice(0, 15), runsDir: 'runs', budgetUsd: 3 }, { cwd: dir, env }, BY);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (!result.ok) return;
    expect(result.outcome.status).toBe('succeeded');
    expect(result.outcome.runId).toBe(runId);
    const resumed = events(result.outcome.dir).filter((e) => e.type === 'run_resume');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ overrides: { budgetUsd: 3 } });
  });

  it('a run that is not there, and one that already succeeded, are usage reasons', async () => {
    const dir = project();
    const missing = await resumeRun({ run: 'nope', runsDir: 'runs' }, { cwd: dir, env }, BY);
    expect(missing).toMatchObject({ ok: false, code: 'usage' });
    const runId = await interruptedRun(dir);
    const first = await resumeRun({ run: runId, runsDir: 'runs' }, { cwd: dir, env }, BY);
    expect(first.ok && first.outcome.status).toBe('succeeded');
    const again = await resumeRun({ run: runId, runsDir: 'runs' }, { cwd: dir, env }, BY);
    expect(again).toMatchObject({ ok: false, code: 'usage' });
    if (again.ok || again.code === 'problems') return;
    expect(again.message).toBe(`run ${runId} already succeeded; there is nothing to resume.`);
  });
});
