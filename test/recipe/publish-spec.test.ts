// The publish: block's validation: its templates may use inputs, key, task, summary, diffstat,
// repo and run; anything else (a misspelt name, an unknown field, env, the item) is a validate
// error at the file:line:col of the expression, with a hint.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/index.js';
import { runCli } from '../cli/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-publish-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function recipe(publish: string, task = ''): string {
  const file = join(dir, `r${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    `name: p
inputs:
  label: { default: x }
publish:
${publish}
tasks:
  - id: change
    for_each: [a, b]
    as: repo_name
    prompt: "do \${{ repo_name }}"
${task}`,
  );
  return file;
}

describe('publish: block', () => {
  it('a valid block loads into each task with the defaults filled in; publish: false turns a task off', () => {
    const file = recipe(
      '  forge: github\n  remote: https://github.com/acme/${{ repo.name }}.git\n  title: "${{ inputs.label }}: ${{ diffstat.files }} files in ${{ key }}"\n  labels: [bot]',
    );
    const loaded = loadRecipe(file, { cwd: dir });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(loaded.recipe.tasks[0]!.publish).toMatchObject({
      forge: 'github',
      base: 'main',
      draft: true,
      labels: ['bot'],
      commitMessage: '${{ inputs.label }}: ${{ diffstat.files }} files in ${{ key }}',
    });
    const off = loadRecipe(recipe('  forge: git', '    publish: false\n'), { cwd: dir });
    if (!off.ok) throw new Error(JSON.stringify(off.problems));
    expect(off.recipe.tasks[0]!.publish).toBeUndefined();
  });

  it('unknown names and fields in its templates are validate errors at file:line:col', async () => {
    const file = recipe(
      '  forge: git\n  title: "${{ sumary }}"\n  body: "${{ diffstat.lines }} ${{ env.HOME }}"\n  branch: "b/${{ repo_name }}"\n  commit_message: "${{ inputs.lable }}"',
    );
    const r = await runCli(['validate', file], { cwd: dir });
    expect(r.code).toBe(2);
    const name = file.split('/').pop()!;
    expect(r.stderr).toContain(`${name}:6:15: publish.title: unknown name "sumary"`);
    expect(r.stderr).toMatch(/hint: publish templates know inputs, key, task, summary, diffstat, repo, run/);
    expect(r.stderr).toContain(`${name}:7:23: publish.body: diffstat has no field "lines"`);
    expect(r.stderr).toContain('publish.body: env is not available in publish templates');
    expect(r.stderr).toContain('publish.branch: "repo_name" (the for_each item) is not available in publish templates');
    expect(r.stderr).toContain('publish.commit_message: unknown input "lable"');
    expect(r.stderr).not.toContain('expressions are not evaluated here');
  });

  it('a wrong forge or an unknown key is a schema error', async () => {
    const r = await runCli(['validate', recipe('  forge: bitbucket\n  colour: red')], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/forge/);
    expect(r.stderr).toMatch(/colour/);
  });

  it('follow_up: fills in its defaults; merge_when: is kept; a misspelt trigger or key is a problem at file:line:col', () => {
    const ok = loadRecipe(recipe('  forge: github\n  follow_up: {}\n  merge_when: [ci_passed, approved]'), {
      cwd: dir,
    });
    if (!ok.ok) throw new Error(JSON.stringify(ok.problems));
    expect(ok.recipe.tasks[0]!.publish).toMatchObject({
      followUp: { on: ['ci_failed', 'changes_requested', 'conflict'], maxRounds: 2 },
      mergeWhen: ['ci_passed', 'approved'],
    });
    const bad = loadRecipe(recipe('  forge: github\n  follow_up: { on: [ci_fail], max_round: 3 }'), { cwd: dir });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((p) => [p.line, p.message, p.hint])).toEqual([
      [
        6,
        'publish.follow_up.on[0] must be one of: ci_failed, changes_requested, conflict (got "ci_fail")',
        'did you mean "ci_failed"?',
      ],
      [6, 'unknown key "max_round" in publish.follow_up', 'did you mean "max_rounds"?'],
    ]);
  });
});
