// Approval gate prompts and the publish gate's keys at load time (issue 29 item 4): a task gate's
// prompt is a template like the task prompt (its item, inputs; an unknown name or field is a
// validate error at file:line:col); publish.approve is checked like a task's approve: (keys,
// on_timeout without timeout) and its prompt knows the changesets it would publish.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe, recipeJsonSchema } from '../../src/recipe/index.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-approve-prompts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(text: string) {
  const file = join(dir, 'recipe.yaml');
  writeFileSync(file, text);
  const loaded = loadRecipe(file, { cwd: dir });
  return loaded.ok
    ? loaded
    : { ok: false as const, lines: loaded.problems.map((p) => `${p.line}:${p.col}: ${p.message}`) };
}

describe('approval gate prompts and publish.approve', () => {
  it('reports every bad key and name at its line:col', () => {
    const r = problemsOf(`name: p
inputs:
  team: { default: x }
publish:
  forge: git
  approve: { prompt: "Ship \${{ changesets.fils }} and \${{ summary }}?", promt: x }
tasks:
  - id: change
    for_each: [a, b]
    prompt: "do \${{ item }}"
    approve: { prompt: "Change \${{ item }} for \${{ inputs.tema }}?" }
  - id: single
    prompt: "one"
    approve: { prompt: "Go \${{ item }}?", on_timeout: approve }
    publish:
      approve: { on_timeout: approve }
`);
    expect(r.ok).toBe(false);
    expect('lines' in r && r.lines).toEqual([
      '6:43: publish.approve.prompt: changesets has no field "fils"',
      '6:59: publish.approve.prompt: unknown name "summary"',
      '6:73: unknown key "promt" in publish.approve',
      '11:59: task "change" approve.prompt: unknown input "tema"',
      '14:32: task "single" approve.prompt: "item" is only available in tasks with for_each',
      '14:55: task "single" approve.on_timeout: says what the timeout answers, but there is no timeout: add timeout: (e.g. 30m), or remove on_timeout',
      '16:30: task "single" publish.approve.on_timeout: says what the timeout answers, but there is no timeout: add timeout: (e.g. 30m), or remove on_timeout',
    ]);
  });

  it('loads the publish gate per task (a task block replaces the recipe one); the schema documents it', () => {
    const r = problemsOf(`name: p
publish:
  forge: git
  approve: { prompt: "Publish \${{ changesets.count }} of \${{ task }}?", timeout: 2h, on_timeout: approve }
tasks:
  - id: a
    prompt: "x"
  - id: b
    prompt: "y"
    publish: { approve: { prompt: "Only b" } }
  - id: c
    prompt: "z"
    publish: false
`);
    if (!r.ok) throw new Error(r.lines.join('\n'));
    const gates = r.recipe.tasks.map((t) => t.publish?.approve);
    expect(gates).toEqual([
      { prompt: 'Publish ${{ changesets.count }} of ${{ task }}?', timeoutMs: 7_200_000, onTimeout: 'approve' },
      { prompt: 'Only b', onTimeout: 'reject' },
      undefined,
    ]);
    const schema = JSON.stringify(recipeJsonSchema());
    expect(schema).toContain('Publish gate: once the changesets are computed the run waits');
  });
});
