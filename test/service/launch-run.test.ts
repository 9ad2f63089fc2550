// service/launch-run.ts: what a detached run's process would refuse comes back as a code before
// any process starts (recipe problems, a missing API key, an unwritable runs folder, a run that
// already succeeded), and a launch starts a real `orchestrate run` process (the scripted provider)
// that takes its run folder and runs it to its end.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchResume, launchRun } from '../../src/service/launch-run.js';
import { RunLauncher } from '../../src/service/run-launcher.js';
import { runStatus } from '../../src/service/show-run.js';
import { cleanupTempDirs, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const env = { PATH: process.env.PATH, HOME: process.env.HOME };

function project(): string {
  return tempProject({
    'recipe.yaml': `name: tiny
provider: scripted
script: script.yaml
inputs:
  who: { type: string, default: world }
tasks:
  - id: hello
    prompt: "Say hello to \${{ inputs.who }}"
`,
    'script.yaml': 'turns:\n  - text: "hello"\n',
  });
}

describe('service: launch a run as a process of its own', { timeout: 120_000 }, () => {
  it('refuses with a code, before any process starts', async () => {
    const launcher = new RunLauncher();
    const broken = tempProject({ 'recipe.yaml': 'name: broken\ntasks:\n  - id: a\n    promt: "typo"\n' });
    const problems = await launchRun({ recipe: 'recipe.yaml' }, { cwd: broken, env, launcher });
    expect(problems).toMatchObject({ ok: false, code: 'problems' });

    const needsKey = tempProject({
      'recipe.yaml': 'name: real\nmodel: claude-haiku-4-5\ntasks:\n  - id: a\n    prompt: "hi"\n',
    });
    const missing = await launchRun({ recipe: 'recipe.yaml' }, { cwd: needsKey, env, launcher });
    expect(missing).toMatchObject({ ok: false, code: 'missing_api_key' });
    if (!missing.ok && missing.code === 'missing_api_key') expect(missing.message).toContain('ANTHROPIC_API_KEY');

    const dir = project();
    writeFileSync(join(dir, 'afile'), 'not a folder\n');
    const unwritable = await launchRun({ recipe: 'recipe.yaml', runsDir: 'afile' }, { cwd: dir, env, launcher });
    expect(unwritable).toMatchObject({ ok: false, code: 'runs_dir_unwritable' });
  });

  it('starts the run as `orchestrate run` with the request, which runs to its end; a resume of it is refused as succeeded', async () => {
    const dir = project();
    const launcher = new RunLauncher();
    const launched = await launchRun(
      { recipe: 'recipe.yaml', set: ['who=Ana'], runsDir: 'runs' },
      { cwd: dir, env, launcher },
    );
    if (!launched.ok) throw new Error(JSON.stringify(launched));
    expect(launched.recipeFile).toBe(join(dir, 'recipe.yaml'));
    expect(launched.run.runDir).toBe(join(dir, 'runs', launched.run.runId));
    expect(await launched.run.exited).toBe(0);
    expect(runStatus(launched.run.runDir).status).toBe('succeeded');
    expect(events(launched.run.runDir).find((e) => e.type === 'run_start')).toMatchObject({ inputs: { who: 'Ana' } });

    const again = await launchResume(launched.run.runDir, {}, { cwd: dir, env, launcher });
    expect(again).toMatchObject({ ok: false, code: 'succeeded', runId: launched.run.runId });
  });
});
