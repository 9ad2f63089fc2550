// isolation: worktree with merge: branch / apply (worktree-merge.ts), end to end with worker
// threads, the scripted model and real git: where each instance's work lands, what the user's
// checkout looks like afterwards, conflicts, and landing twice (a resume after a kill) being harmless.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { applyToCheckout, branchName, commitToBranch } from '../../../src/orchestrator/workspace/worktree-merge.js';
import { loadRecipe } from '../../../src/recipe/index.js';
import { loadRunFolder } from '../../../src/display/run-folder.js';
import { formatRunDetails } from '../../../src/display/run-details-text.js';
import { formatFinalSummary } from '../../../src/display/final-summary.js';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** Three instances in one repository: `a` edits hello.txt, `b` adds a new file and a binary one, `c` changes nothing. */
function fanOut(merge: 'branch' | 'apply' | 'patch', extra = '', land?: 'direct'): Record<string, string> {
  return {
    'recipe.yaml': `name: merge-${merge}
provider: scripted
script: script.yaml
agents:
  editor: { tools: [edit, write, bash] }
tasks:
  - id: unit
    agent: editor
    for_each: [a, b, c${extra ? ', d' : ''}]
    cwd: repo
    isolation: worktree
    merge: ${merge}
${land ? `    land: ${land}\n` : ''}    on_failure: continue
    prompt: "Unit \${{ item }}"
`,
    'script.yaml': `conversations:
  - match: "Unit a"
    turns:
      - tools: [{ name: edit, args: { path: hello.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
      - text: "a: greeting changed"
  - match: "Unit b"
    turns:
      - tools: [{ name: write, args: { path: docs/new.md, content: "# new\\n" } }]
      - tools: [{ name: bash, args: { command: "printf 'bin\\\\000\\\\001\\\\377' > data.bin" } }]
      - text: "b: docs and data added"
  - match: "Unit c"
    turns:
      - text: "c: nothing to do"
${extra}`,
    'repo/hello.txt': 'hello\nworld\n',
    'repo/other.txt': 'untouched\n',
  };
}

async function run(files: Record<string, string>) {
  const dir = tempProject(files);
  gitInit(join(dir, 'repo'));
  const head = git(join(dir, 'repo'), 'rev-parse', 'HEAD').trim();
  const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, repo: join(dir, 'repo'), head, out: r.outcome, log: events(r.outcome.dir) };
}

describe('isolation: worktree, merge:', () => {
  it('branch: each instance that changed something gets a commit of exactly its patch on orchestrate/<run>/<key>; the checkout, its index and HEAD stay as they were; worktrees are removed', async () => {
    const { repo, head, out, log } = await run(fanOut('branch'));
    expect(out.status).toBe('succeeded');
    const runId = out.runId;
    // Instance keys are <task>.<item>.
    const done = Object.fromEntries(ofType(log, 'instance_done').map((e) => [e.key.replace('unit.', ''), e]));
    expect(done.a!.branch).toBe(`orchestrate/${runId}/unit.a`);
    expect(done.b!.branch).toBe(`orchestrate/${runId}/unit.b`);
    expect(done.c!.branch).toBeUndefined(); // nothing changed: no patch, no branch
    expect(done.c!.patchFile).toBeUndefined();

    // The user's checkout: same HEAD, same branch, nothing modified or staged.
    expect(git(repo, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('hello\nworld\n');

    for (const key of ['a', 'b']) {
      const branch = `orchestrate/${runId}/unit.${key}`;
      expect(git(repo, 'rev-parse', `${branch}^`).trim()).toBe(head); // parented on the start commit
      // The commit holds exactly the instance's patch.
      const patch = readFileSync(join(out.dir, 'patches', `unit.${key}.diff`), 'utf8');
      expect(git(repo, 'diff', '--binary', head, branch)).toBe(patch);
      expect(git(repo, 'log', '-1', '--format=%s', branch)).toMatch(new RegExp(`^unit\\.${key}: ${key}: `));
    }
    expect(git(repo, 'show', `orchestrate/${runId}/unit.a:hello.txt`)).toBe('goodbye\nworld\n');
    expect(execFileSync('git', ['show', `orchestrate/${runId}/unit.b:data.bin`], { cwd: repo })).toEqual(
      Buffer.from([0x62, 0x69, 0x6e, 0, 1, 0xff]),
    );

    // Worktrees of landed instances are gone, from the run folder and from git's list.
    expect(existsSync(join(out.dir, 'worktrees'))).toBe(false);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);

    // result.json and plan.md say where the work is.
    const result = JSON.parse(readFileSync(join(out.dir, 'result.json'), 'utf8')) as {
      instances: { id: string; branch?: string }[];
    };
    expect(result.instances.find((i) => i.id === 'unit.a')!.branch).toBe(`orchestrate/${runId}/unit.a`);
    expect(readFileSync(out.planFile, 'utf8')).toContain(`(on branch orchestrate/${runId}/unit.a)`);
    // orchestrate show names the branch.
    expect(formatRunDetails(loadRunFolder(out.dir))).toContain(`branch: orchestrate/${runId}/unit.a`);
    // The summary printed at the end of the run says how to find them.
    expect(formatFinalSummary(loadRunFolder(out.dir).state)).toContain(
      `branches: 2, listed by git branch --list 'orchestrate/${runId}/*'`,
    );
  });

  it('apply with land: direct: the patches land in the checkout (new and binary files included, the index untouched); a patch that no longer applies fails its instance patch_conflict and changes nothing', async () => {
    // d edits the same line as a: whichever lands second conflicts.
    const d = `  - match: "Unit d"
    turns:
      - tools: [{ name: edit, args: { path: hello.txt, edits: [{ oldText: "hello", newText: "howdy" }] } }]
      - text: "d: greeting changed differently"
`;
    const { repo, out, log } = await run(fanOut('apply', d, 'direct'));
    expect(out.status).toBe('failed');
    const done = ofType(log, 'instance_done').map((e) => ({ ...e, key: e.key.replace('unit.', '') }));
    const failed = ofType(log, 'instance_failed').map((e) => ({ ...e, key: e.key.replace('unit.', '') }));
    expect(failed).toHaveLength(1);
    expect(failed[0]!.failure).toBe('patch_conflict');
    expect(['a', 'd']).toContain(failed[0]!.key);
    const winner = failed[0]!.key === 'a' ? 'd' : 'a';
    expect(failed[0]!.error).toMatch(/do not apply to .*hello\.txt/);
    expect(failed[0]!.error).toContain(`patches/unit.${failed[0]!.key}.diff`);
    expect(done.find((e) => e.key === winner)!.applied).toBe(true);
    expect(done.find((e) => e.key === 'b')!.applied).toBe(true);
    expect(done.find((e) => e.key === 'c')!.applied).toBeUndefined();

    // The checkout holds the winner's edit, b's new files, and nothing of the loser's.
    expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe(`${winner === 'a' ? 'goodbye' : 'howdy'}\nworld\n`);
    expect(readFileSync(join(repo, 'docs', 'new.md'), 'utf8')).toBe('# new\n');
    expect(readFileSync(join(repo, 'data.bin'))).toEqual(Buffer.from([0x62, 0x69, 0x6e, 0, 1, 0xff]));
    expect(git(repo, 'diff', '--cached', '--name-only')).toBe(''); // nothing staged
    expect(formatRunDetails(loadRunFolder(out.dir))).toContain('applied to the checkout');
    expect(formatFinalSummary(loadRunFolder(out.dir).state)).toContain(
      'applied: the work of 2 instances is in the checkout (git diff shows it)',
    );
    // The loser's worktree is kept (its work is there and in its patch); the landed ones are gone.
    expect(readdirSync(join(out.dir, 'worktrees')).sort()).toEqual([`unit.${failed[0]!.key}`]);
  });

  it('patch (the default): the work of each instance stays a patch in the run folder, the checkout is untouched, and the summary says where the patches are', async () => {
    const { repo, head, out } = await run(fanOut('patch'));
    expect(out.status).toBe('succeeded');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'rev-parse', 'HEAD').trim()).toBe(head);
    const summary = formatFinalSummary(loadRunFolder(out.dir).state, { runDir: out.dir });
    expect(summary).toContain(`patches: 2 in ${join(out.dir, 'patches')} (merge: patch: your checkout is untouched)`);
    expect(summary).not.toContain('applied:');
    // What the line tells the user to do works: the patch applies in its repository.
    git(repo, 'apply', join(out.dir, 'patches', 'unit.a.diff'));
    expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('goodbye\nworld\n');
  });

  it('landing twice is harmless: an applied patch is recognised as applied, a branch is set to the same tree', async () => {
    const dir = tempProject({ 'repo/a.txt': 'one\ntwo\n' });
    const repo = join(dir, 'repo');
    gitInit(repo);
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(repo, 'a.txt'), 'one\ntwo\nthree\n');
    const patch = git(repo, 'diff', '--binary');
    git(repo, 'checkout', '--', 'a.txt');

    expect(await applyToCheckout(repo, patch, 'p.diff')).toEqual({ ok: true, applied: true });
    expect(await applyToCheckout(repo, patch, 'p.diff')).toEqual({ ok: true, applied: true, alreadyApplied: true });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');

    const first = await commitToBranch(repo, head, 'orchestrate/r/x', patch, 'x: once');
    const second = await commitToBranch(repo, head, 'orchestrate/r/x', patch, 'x: twice');
    expect(first.ok && second.ok).toBe(true);
    expect(git(repo, 'rev-parse', 'orchestrate/r/x^{tree}').trim()).toBe(
      git(repo, 'rev-parse', `${first.ok ? first.commit : ''}^{tree}`).trim(),
    );
    expect(git(repo, 'rev-parse', 'orchestrate/r/x^').trim()).toBe(head);
  });

  it('branch names are valid refs whatever the instance key holds', () => {
    expect(branchName('20261203-134506-532e', 'svc-a')).toBe('orchestrate/20261203-134506-532e/svc-a');
    for (const key of ['a b', '../x', 'x.lock', '.hidden', 'a..b', 'what?*[', 'ü~^:']) {
      const name = branchName('run', key);
      expect(
        () => execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'pipe' }),
        `${key} -> ${name}`,
      ).not.toThrow();
    }
  });

  it('merge: branch or apply without isolation: worktree is a recipe error at its line', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: bad
provider: scripted
tasks:
  - id: t
    prompt: "x"
    merge: apply
`,
    });
    const loaded = loadRecipe(join(dir, 'recipe.yaml'));
    expect(loaded.ok).toBe(false);
    const problems = loaded.ok ? [] : loaded.problems;
    expect(problems.map((p) => `${p.line}:${p.col} ${p.message}`)).toContain(
      '6:5 task "t" sets merge: apply, which needs isolation: worktree',
    );
  });
});
