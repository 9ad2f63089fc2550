// What a `publish --rebase` re-run is asked: the instance rendered again from the run's recipe.
// A run that recorded the item and prompt (instance_start) is rendered from them even after the
// recipe changed; a run logged before that record is found by expanding the task's for_each
// again, and when the for_each no longer yields its key the error says what to restore. The first
// message carries the task, the old summary and the old patch (cut when long).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rebaseContext, rebasePrompt, renderRebasedInstance } from '../../src/publish/rebase-instance.js';
import { type LoadedRecipe, loadRecipe } from '../../src/recipe/index.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { foldEvents } from '../../src/run/run-fold.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

const recipeText = (items: string) => `name: r
provider: scripted
script: s.yaml
agents:
  editor: { tools: [read, edit] }
tasks:
  - id: change
    agent: editor
    for_each: [${items}]
    cwd: \${{ item }}
    prompt: "Change \${{ item }} now"
`;

function load(dir: string, items: string): LoadedRecipe {
  writeFileSync(join(dir, 'recipe.yaml'), recipeText(items));
  const r = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env: {} });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.recipe;
}

/** The log of a run whose instance change.alpha finished; `start` adds fields to its instance_start. */
function fold(start: Record<string, unknown>) {
  const base = { v: 1 as const, runId: 'r1', ts: 1 };
  const events = [
    {
      ...base,
      type: 'run_start',
      recipe: '/x/recipe.yaml',
      name: 'r',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 'change', keys: ['change.alpha', 'change.beta'], needs: [], dynamic: false }],
    },
    { ...base, type: 'instance_start', task: 'change', key: 'change.alpha', attempt: 1, ...start },
    {
      ...base,
      type: 'instance_done',
      task: 'change',
      key: 'change.alpha',
      attempt: 1,
      output: 'ok',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 },
      durationMs: 1,
    },
  ] as RunEvent[];
  const state = foldEvents(events);
  return { state, inst: [...state.instances.values()].find((i) => i.key === 'change.alpha')! };
}

describe('rendering an instance again for --rebase', () => {
  afterAll(() => cleanupTempDirs());
  const dir = tempProject({ 's.yaml': 'turns: [{ text: ok }]\n' });

  it('uses the recorded item and prompt, even after the recipe changed', () => {
    const recipe = load(dir, 'gamma');
    const { state, inst } = fold({ item: 'alpha', prompt: 'Change alpha then' });
    const r = renderRebasedInstance(recipe, state, inst, {});
    if (!r.ok) throw new Error(r.error);
    expect(r.resolved.prompt).toBe('Change alpha then');
    expect(r.resolved.cwd).toBe(join(dir, 'alpha'));
    expect(r.resolved.item).toBe('alpha');
  });

  it('renders an older run (no item recorded) from its for_each, or says what to restore', () => {
    const { state, inst } = fold({});
    const r = renderRebasedInstance(load(dir, 'alpha, beta'), state, inst, {});
    if (!r.ok) throw new Error(r.error);
    expect(r.resolved.prompt).toBe('Change alpha now');
    const gone = renderRebasedInstance(load(dir, 'beta'), state, inst, {});
    expect(gone).toEqual({
      ok: false,
      error: expect.stringMatching(
        /cannot render change\.alpha again: its run was recorded before .* no longer yields the key "change\.alpha"\. Restore the recipe's for_each/,
      ),
    });
    const noTask = renderRebasedInstance({ ...load(dir, 'alpha'), tasks: [] }, state, inst, {});
    expect(noTask).toMatchObject({ ok: false, error: expect.stringContaining('has no task "change" any more') });
  });

  it('gives a `context: summaries` task the merged plan of the tasks it needs, as the run did', () => {
    writeFileSync(
      join(dir, 'recipe.yaml'),
      recipeText('alpha')
        .replace('tasks:\n', 'tasks:\n  - id: plan\n    agent: editor\n    prompt: "Plan"\n')
        .replace('    cwd:', '    needs: [plan]\n    context: summaries\n    cwd:'),
    );
    const loaded = loadRecipe(join(dir, 'recipe.yaml'), { cwd: dir, env: {} });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const base = { v: 1 as const, runId: 'r1', ts: 1 };
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
    const state = foldEvents([
      { ...base, type: 'instance_start', task: 'plan', key: 'plan', attempt: 1 },
      {
        ...base,
        type: 'instance_done',
        task: 'plan',
        key: 'plan',
        attempt: 1,
        output: 'planned',
        summary: '## Goal\nRename log() everywhere\n\n## Done\n- listed the call sites of log()',
        usage,
        durationMs: 1,
      },
    ] as RunEvent[]);
    const change = loaded.recipe.tasks.find((t) => t.id === 'change')!;
    expect(rebaseContext(loaded.recipe, state, change)).toMatch(/<merged-plan tasks="plan">[\s\S]*log\(\)/);
    expect(rebaseContext(loaded.recipe, state, loaded.recipe.tasks.find((t) => t.id === 'plan')!)).toBeUndefined();
  });

  it('writes a first message with the task, the old summary and the old patch, cut when long', () => {
    const text = rebasePrompt({
      prompt: 'Change alpha',
      summary: 'renamed log() to logger.info()',
      base: 'main',
      fromCommit: 'a'.repeat(40),
      baseCommit: 'b'.repeat(40),
      oldPatch: `diff --git a/x b/x\n${'+line\n'.repeat(5000)}`,
      patchFile: 'patches/change.alpha.diff',
    });
    expect(text).toMatch(/older commit of main \(a{12}\)\. main has moved on to b{12}/);
    expect(text).toContain('must be redone on the current code');
    expect(text).toContain('The task:\nChange alpha');
    expect(text).toContain('Summary of the earlier change:\nrenamed log() to logger.info()');
    expect(text).toContain('the run folder keeps it as patches/change.alpha.diff');
    expect(text).toMatch(/\.\.\. \(cut: \d+ more characters\)/);
    expect(text.length).toBeLessThan(22_000);
  });
});
