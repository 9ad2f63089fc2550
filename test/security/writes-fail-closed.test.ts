// Issue 37, items 3 and 6, as a user meets them: whole offline runs (scripted model, worker
// threads, real git, bash in bubblewrap) where an agent with `writes: ["src/**"]` breaks the
// product's own git before it changes top.txt, outside its scope:
//   - `git -C src/sub init`: an empty nested repository, which `git add` cannot stage;
//   - `git config core.worktree /tmp`: git would measure another folder;
//   - a `.git` file naming a folder whose `commondir` is another repository: git would write the
//     workspace's objects there.
// Each attempt must fail with class `workspace`, naming top.txt and what went wrong, with no patch
// written and nothing written into the other repository. A nested repository (or submodule) that
// was there before the run is legitimate, and `writes:` must keep working with it.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { cleanup, git, repoWith, tempDir } from './git-fixtures.js';

afterAll(() => {
  cleanupTempDirs();
  cleanup();
});

/** Every file under `dir`, relative (objects and refs of a repository, to see that none appeared). */
function filesUnder(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p, base));
    else out.push(p.slice(base.length + 1));
  }
  return out.sort();
}

const recipe = (extra = '') => `name: fail-closed
provider: scripted
script: script.yaml
agents:
  coder: { tools: [bash] }
tasks:
  - id: attack
    agent: coder
    writes: ["src/**"]
    prompt: "Attack"
${extra}`;

const script = (command: string) => `turns:
  - tools: [{ name: bash, args: { command: ${JSON.stringify(command)} } }]
  - text: "done"
`;

/** A committed project holding recipe.yaml, script.yaml, top.txt and src/keep.txt; the run's outcome and log. */
async function runAttack(command: string, extra = '') {
  const dir = tempProject({});
  repoWith(dir, {
    'recipe.yaml': recipe(extra),
    'script.yaml': script(command),
    'top.txt': 'top\n',
    'src/keep.txt': 'keep\n',
    '.gitignore': 'runs/\n',
  });
  const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, out: r.outcome, log: events(r.outcome.dir) };
}

describe('writes: fails closed when the product cannot measure the changes', { timeout: 120_000 }, () => {
  it('an empty nested repository the agent made (git -C src/sub init): class workspace, top.txt named, no patch', async () => {
    const { dir, out, log } = await runAttack('git init -q src/sub && echo changed > top.txt');
    // The attack was made: the nested repository exists and top.txt changed.
    expect(existsSync(join(dir, 'src/sub/.git'))).toBe(true);
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['workspace']);
    expect(failed[0]!.error).toMatch(/does not have a commit checked out/);
    expect(failed[0]!.error).toMatch(/top\.txt/);
    expect(out.status).not.toBe('succeeded');
    expect(ofType(log, 'instance_done')).toEqual([]);
    expect(existsSync(join(out.dir, 'patches'))).toBe(false);
  });

  it('core.worktree pointed elsewhere (git config core.worktree /tmp): class workspace, top.txt named', async () => {
    const { dir, out, log } = await runAttack('git config core.worktree /tmp && echo changed > top.txt');
    expect(git(dir, 'config', '--get', 'core.worktree').trim()).toBe('/tmp');
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['workspace']);
    expect(failed[0]!.error).toMatch(/core\.worktree/);
    // Measured in the real work tree (pinned), not in /tmp: the change is named.
    expect(failed[0]!.error).toMatch(/top\.txt/);
    expect(out.status).not.toBe('succeeded');
    expect(existsSync(join(out.dir, 'patches'))).toBe(false);
  });

  it('a line the agent adds to .git/info/exclude cannot hide its new file outside writes: (class workspace)', async () => {
    const { dir, out, log } = await runAttack(
      'mkdir -p .git/info && echo stray.txt >> .git/info/exclude && echo x > stray.txt',
    );
    expect(readFileSync(join(dir, '.git/info/exclude'), 'utf8')).toContain('stray.txt');
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['workspace']);
    expect(failed[0]!.error).toMatch(/info\/exclude/);
    expect(out.status).not.toBe('succeeded');
  });

  it("a worktree's .git file rewritten to a gitdir whose commondir is another repository: class workspace, nothing written there", async () => {
    const other = repoWith(tempDir('other-repo-'), { 'theirs.txt': 'theirs\n' });
    const before = filesUnder(join(other, '.git'));
    const { out, log } = await runAttack(
      `mkdir -p x && echo 'ref: refs/heads/main' > x/HEAD && echo '${join(other, '.git')}' > x/commondir && printf 'gitdir: x\\n' > .git && echo changed > top.txt && echo new > brand-new.txt`,
      '    isolation: worktree\n    merge: apply\n',
    );
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['workspace']);
    expect(failed[0]!.error).toMatch(/commondir/);
    expect(failed[0]!.error).toMatch(/top\.txt/);
    // git wrote no object, ref or index into the other repository.
    expect(filesUnder(join(other, '.git'))).toEqual(before);
    // merge: apply did not land anything in the checkout.
    expect(readFileSync(join(out.dir, '..', '..', 'top.txt'), 'utf8')).toBe('top\n');
    expect(existsSync(join(out.dir, 'patches'))).toBe(false);
  });

  it('a .git file an earlier task wrote into a plain folder makes the next snapshot fail (class workspace), writing nothing into the repository it names', async () => {
    const other = repoWith(tempDir('other-repo-'), { 'theirs.txt': 'theirs\n' });
    const before = filesUnder(join(other, '.git'));
    const dir = tempProject({
      'recipe.yaml': `name: plain-then-git
provider: scripted
script: script.yaml
agents:
  coder: { tools: [bash] }
tasks:
  - id: plant
    agent: coder
    cwd: work
    prompt: "Plant"
  - id: after
    agent: coder
    cwd: work
    needs: [plant]
    writes: ["src/**"]
    prompt: "After"
`,
      'script.yaml': `conversations:
  - match: "Plant"
    turns:
      - tools: [{ name: bash, args: { command: ${JSON.stringify(`mkdir -p x && echo 'ref: refs/heads/main' > x/HEAD && echo '${join(other, '.git')}' > x/commondir && printf 'gitdir: x\\n' > .git`)} } }]
      - text: "planted"
  - match: "After"
    turns:
      - tools: [{ name: bash, args: { command: "echo changed > top.txt" } }]
      - text: "done"
`,
      'work/top.txt': 'top\n',
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(ofType(log, 'instance_done').map((e) => e.key)).toEqual(['plant']);
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => [e.key, e.failure])).toEqual([['after', 'workspace']]);
    expect(failed[0]!.error).toMatch(/not one orchestrate trusts/);
    expect(filesUnder(join(other, '.git'))).toEqual(before);
  });

  it('a nested repository and a submodule that were there before the run still work with writes:', async () => {
    const lib = repoWith(tempDir('lib-repo-'), { 'src/lib.txt': 'lib\n' });
    const dir = tempProject({});
    repoWith(dir, {
      'recipe.yaml': `name: nested-ok
provider: scripted
script: script.yaml
agents:
  coder: { tools: [bash] }
tasks:
  - id: in-nested
    agent: coder
    cwd: vendor/nested
    writes: ["src/**"]
    prompt: "Nested"
  - id: in-submodule
    agent: coder
    cwd: vendor/sub
    writes: ["src/**"]
    prompt: "Submodule"
  - id: outer
    agent: coder
    writes: ["docs/**", "vendor/**"]
    prompt: "Outer"
`,
      'script.yaml': `conversations:
  - match: "Nested"
    turns:
      - tools: [{ name: bash, args: { command: "echo more >> src/nested.txt" } }]
      - text: "done nested"
  - match: "Submodule"
    turns:
      - tools: [{ name: bash, args: { command: "echo more >> src/lib.txt" } }]
      - text: "done submodule"
  - match: "Outer"
    turns:
      - tools: [{ name: bash, args: { command: "echo doc > docs/a.md" } }]
      - text: "done outer"
`,
      'docs/.keep': '',
      '.gitignore': 'runs/\nvendor/nested/\n',
    });
    // A nested repository with a commit (ignored by the outer one) and a real submodule.
    repoWith(join(dir, 'vendor', 'nested'), { 'src/nested.txt': 'nested\n' });
    git(dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'vendor/sub');
    git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'submodule');
    expect(statSync(join(dir, 'vendor/sub/.git')).isFile()).toBe(true);
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(ofType(log, 'instance_failed')).toEqual([]);
    expect(r.outcome.status).toBe('succeeded');
    expect(readFileSync(join(r.outcome.dir, 'patches', 'in-nested.diff'), 'utf8')).toContain('+more');
    expect(readFileSync(join(r.outcome.dir, 'patches', 'in-submodule.diff'), 'utf8')).toContain('+more');
    expect(readFileSync(join(r.outcome.dir, 'patches', 'outer.diff'), 'utf8')).toContain('+doc');
  });
});

describe('the patch fails closed without writes: too', { timeout: 120_000 }, () => {
  it('a diff git cannot take fails the instance (class workspace) instead of marking it done with no patch', async () => {
    const dir = tempProject({});
    repoWith(dir, {
      'recipe.yaml': `name: no-writes
provider: scripted
script: script.yaml
agents:
  coder: { tools: [bash] }
tasks:
  - id: work
    agent: coder
    prompt: "Work"
`,
      'script.yaml': script('git init -q sub && echo changed > top.txt'),
      'top.txt': 'top\n',
      '.gitignore': 'runs/\n',
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(ofType(log, 'instance_done')).toEqual([]);
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['workspace']);
    expect(failed[0]!.error).toMatch(/cannot be measured.*top\.txt/);
  });
});

describe('landing fails closed when the checkout it lands in was rewired', { timeout: 120_000 }, () => {
  it("a commondir planted in the checkout's .git by a worktree agent: merge: branch fails with class workspace and writes nothing into the repository it names", async () => {
    const other = repoWith(tempDir('other-repo-'), { 'theirs.txt': 'theirs\n' });
    const before = filesUnder(join(other, '.git'));
    const dir = tempProject({});
    // The agent runs unconfined (sandbox: none), so it can reach the checkout's .git from its worktree.
    repoWith(dir, {
      'recipe.yaml': `name: land-rewired
provider: scripted
script: script.yaml
sandbox: none
agents:
  coder: { tools: [bash] }
tasks:
  - id: work
    agent: coder
    isolation: worktree
    merge: branch
    prompt: "Work"
`,
      'script.yaml': '',
      'top.txt': 'top\n',
      '.gitignore': 'runs/\n',
    });
    writeFileSync(
      join(dir, 'script.yaml'),
      script(`echo changed > top.txt && echo '${join(other, '.git')}' > '${join(dir, '.git', 'commondir')}'`),
    );
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(existsSync(join(dir, '.git', 'commondir'))).toBe(true);
    const failed = ofType(events(r.outcome.dir), 'instance_failed');
    expect(failed.map((e) => e.failure)).toEqual(['workspace']);
    expect(failed[0]!.error).toMatch(/commondir/);
    expect(filesUnder(join(other, '.git'))).toEqual(before);
  });
});
