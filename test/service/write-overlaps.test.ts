// Overlap prediction in the dry run: instances whose writes: overlap are named with what the run
// will do with them: run in parallel, merged by the train, or one after another (serialize:
// overlapping, or a task that writes in the checkout itself); instances whose writes do not
// overlap are not named.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/index.js';
import { dryRunRecipe } from '../../src/service/dry-run.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

async function overlapsOf(tasks: string) {
  const dir = tempProject({
    'script.yaml': 'turns: [{ text: done }]\n',
    'recipe.yaml': `name: overlaps
provider: scripted
script: script.yaml
agents:
  editor: { tools: [bash] }
tasks:
${tasks}`,
  });
  const loaded = loadRecipe(join(dir, 'recipe.yaml'));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const d = await dryRunRecipe(loaded.recipe, { cwd: dir, env: {} }, { listMcp: false });
  if (!d.ok) throw new Error(JSON.stringify(d.problems));
  return d.report;
}

describe('dry run: overlap prediction', () => {
  it('names the instances whose writes overlap and says the train runs them in parallel, or serialize one after another', async () => {
    const report = await overlapsOf(`  - id: api
    for_each: [users, orders]
    cwd: repo
    isolation: worktree
    merge: apply
    writes: ["src/\${{ item }}/**", "src/routes.ts"]
    prompt: "Add the \${{ item }} API"
  - id: docs
    cwd: repo
    isolation: worktree
    merge: apply
    serialize: overlapping
    writes: ["docs/**"]
    prompt: "Document"
  - id: guide
    cwd: repo
    isolation: worktree
    merge: apply
    serialize: overlapping
    writes: ["docs/guide.md"]
    prompt: "Write the guide"
  - id: tests
    cwd: repo
    writes: ["test/**"]
    prompt: "Tests"
`);
    expect(report.overlaps).toEqual([
      { a: 'api.users', b: 'api.orders', how: 'parallel' },
      { a: 'docs', b: 'guide', how: 'serialized' },
    ]);
    expect(report.warnings).toContain(
      'api.users and api.orders may write the same files (their writes: overlap): they run in parallel and the merge train merges their work, repairing a conflict (serialize: overlapping runs them one after another)',
    );
    expect(report.warnings).toContain(
      'docs and guide may write the same files (their writes: overlap): they run one after another',
    );
  });

  it('no overlap, no entry', async () => {
    const report = await overlapsOf(`  - id: a
    cwd: repo
    writes: ["a/**"]
    prompt: "a"
  - id: b
    cwd: repo
    writes: ["b/**"]
    prompt: "b"
`);
    expect(report.overlaps).toBeUndefined();
  });
});
