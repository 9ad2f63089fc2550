// `writes:` holds for bash and verify too: end to end with worker threads, the scripted model and
// a real git repository. Changes outside the scope fail the instance (class write_scope) and are
// put back; changes inside it, and a sibling's changes inside its own scope, are kept.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { bashAgentRecipe, conversationsScript } from '../../helpers/held-agents.js';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

async function run(files: Record<string, string>) {
  const dir = tempProject(files);
  gitInit(dir);
  const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, out: r.outcome, log: events(r.outcome.dir) };
}

/** recipe.yaml: task `fix` of bash agent w may write src/** only; `more` are further lines of the task. */
const fixInSrc = (name: string, ...more: string[]) =>
  bashAgentRecipe(
    name,
    1,
    `  - id: fix
    agent: w
    writes: ["src/**"]
    prompt: "Fix it"
${more.map((l) => `    ${l}\n`).join('')}`,
  );

/** script.yaml: one bash call, then "done". */
const bashThenDone = (command: string) => `turns:
  - tools: [{ name: bash, args: { command: ${JSON.stringify(command)} } }]
  - text: "done"
`;

const BASE = {
  'README.md': 'original readme\n',
  'src/keep.txt': 'keep\n',
};

describe('writes: holds for bash and verify', () => {
  it('bash changes outside writes: fail the instance with class write_scope and are reverted; changes inside stay', async () => {
    const { dir, log } = await run({
      ...BASE,
      'recipe.yaml': fixInSrc('scope'),
      'script.yaml': bashThenDone(
        'echo new > src/ok.txt && echo stray > outside.txt && echo x > stray-ä.txt && echo changed >> README.md && rm src/keep.txt',
      ),
    });
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['write_scope']);
    expect(failed[0]!.error).toMatch(/outside\.txt/);
    expect(failed[0]!.error).toMatch(/README\.md/);
    expect(failed[0]!.error).toMatch(/reverted/);
    // Put back: the tracked file as it was, the new file gone.
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('original readme\n');
    expect(existsSync(join(dir, 'outside.txt'))).toBe(false);
    // A name git quotes in its output ("stray-\303\244.txt") is found and removed too.
    expect(existsSync(join(dir, 'stray-ä.txt'))).toBe(false);
    // Inside the scope nothing is touched (a deletion inside it stays deleted).
    expect(readFileSync(join(dir, 'src/ok.txt'), 'utf8')).toBe('new\n');
    expect(existsSync(join(dir, 'src/keep.txt'))).toBe(false);
    // The run's own files (runs/ inside the repository here) are never counted.
    expect(existsSync(join(dir, 'runs'))).toBe(true);
  });

  it('in a worktree (isolation: worktree) the same holds, and the checkout itself is untouched', async () => {
    const { dir, out, log } = await run({
      ...BASE,
      'recipe.yaml': fixInSrc('scope-worktree', 'isolation: worktree'),
      'script.yaml': bashThenDone('echo new > src/ok.txt && echo stray > outside.txt && echo changed >> README.md'),
    });
    expect(ofType(log, 'instance_failed').map((e) => e.failure)).toEqual(['write_scope']);
    const wt = out.tasks[0]!.instances[0]!;
    const start = ofType(log, 'instance_start')[0]!;
    expect(start.worktree).toBeTruthy();
    expect(readFileSync(join(start.worktree!, 'README.md'), 'utf8')).toBe('original readme\n');
    expect(existsSync(join(start.worktree!, 'outside.txt'))).toBe(false);
    expect(readFileSync(join(start.worktree!, 'src/ok.txt'), 'utf8')).toBe('new\n');
    expect(wt.status).toBe('failed');
    expect(existsSync(join(dir, 'outside.txt'))).toBe(false);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('original readme\n');
  });

  it('a verify command that writes outside writes: fails the instance the same way', async () => {
    const { dir, log } = await run({
      ...BASE,
      'recipe.yaml': fixInSrc('verify-scope', 'verify: ["echo cache > stray-cache.txt"]'),
      'script.yaml': `turns:
  - text: "done"
`,
    });
    expect(ofType(log, 'instance_failed').map((e) => e.failure)).toEqual(['write_scope']);
    expect(existsSync(join(dir, 'stray-cache.txt'))).toBe(false);
  });

  it("instances in the same checkout keep each other's in-scope work; in-scope work succeeds", async () => {
    const { dir, out, log } = await run({
      ...BASE,
      'recipe.yaml': bashAgentRecipe(
        'siblings',
        2,
        `  - id: each
    agent: w
    for_each: [a, b]
    writes: ["src/\${{ item }}/**"]
    prompt: "Work on \${{ item }}"
`,
      ),
      // a waits (bounded) until b has written, so b's change is certainly in a's diff when a settles.
      'script.yaml': conversationsScript({
        'Work on a': [
          {
            bash: 'for i in $(seq 300); do [ -f src/b/out.txt ] && break; sleep 0.1; done; mkdir -p src/a && echo a > src/a/out.txt',
          },
          { text: 'done a' },
        ],
        'Work on b': [{ bash: 'mkdir -p src/b && echo b > src/b/out.txt' }, { text: 'done b' }],
      }),
    });
    expect(ofType(log, 'instance_failed')).toEqual([]);
    expect(out.status).toBe('succeeded');
    expect(readFileSync(join(dir, 'src/a/out.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(dir, 'src/b/out.txt'), 'utf8')).toBe('b\n');
  });
});
