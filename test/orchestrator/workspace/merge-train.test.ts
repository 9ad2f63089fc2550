// The merge train end to end (issue 39's monorepo test): six tasks in one repository, each in a
// worktree of its own with merge: apply (the train is its default), scripted models editing with
// bash, and a verify command. Two of them edit the same file in separate hunks (they merge), two
// edit the same line (the one that lands second conflicts and is repaired on the new tip). All six
// land, verify is green on the merged tree of every landing, the same-lines pair needs exactly one
// repair, and the run log's fold shows the train. A landing that breaks verify on the merged tree
// (each change is fine alone) is kept out of the checkout and repaired too; with max_repairs: 0 it
// fails verify_failed, and a conflict without repairs fails patch_conflict naming the file.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatRunDetails } from '../../../src/display/run-details-text.js';
import { loadRunFolder } from '../../../src/display/run-folder.js';
import { runRecipeFile, type StartResult } from '../../../src/orchestrator/run-recipe.js';
import { foldEvents, type RunControl } from '../../../src/run/index.js';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from '../helpers/run-fixtures.js';
import { TRAIN_CHECK, TRAIN_EDITS, TRAIN_TASKS, trainRepoFiles } from '../helpers/six-task-repo.js';

afterAll(() => cleanupTempDirs());

const NAMES = TRAIN_TASKS;
const EDITS = TRAIN_EDITS;
const CHECK = `${TRAIN_CHECK}echo verified\n`;

function project(extra = ''): string {
  const tasks = NAMES.map(
    (n) => `  - id: ${n}
    agent: editor
    cwd: repo
    isolation: worktree
    merge: apply
    verify: "sh check.sh"
    prompt: "Task ${n}"
${extra}`,
  ).join('');
  // A repair of either of the same-line pair keeps both values (its first message quotes the task).
  const repairs = ['five', 'six']
    .map(
      (n) => `  - match: "^Repair 1 of \\\\d[\\\\s\\\\S]*Task ${n}"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'value=five,six\\\\n' > same.txt" } }]
      - text: "${n} repaired"
`,
    )
    .join('');
  const convs = NAMES.map(
    (n) => `  - match: "^Task ${n}"
    turns:
      - tools: [{ name: bash, args: { command: "${EDITS[n]}" } }]
      - text: "${n} done"
`,
  ).join('');
  const files: Record<string, string> = {
    'recipe.yaml': `name: train
provider: scripted
script: script.yaml
concurrency: 6
agents:
  editor: { tools: [bash] }
tasks:
${tasks}`,
    'script.yaml': `conversations:\n${repairs}${convs}`,
    ...trainRepoFiles(CHECK),
  };
  const dir = tempProject(files);
  gitInit(join(dir, 'repo'));
  return dir;
}

/**
 * The semantic-conflict project with one repair, run once with its runs folder inside the
 * repository (the default place, `repo/.orchestrate/runs`): the repair test and the runs-folder
 * test read the same run, which neither changes. `seen` lists each worktree's files as its agent
 * started in it.
 */
let renameRun: Promise<{ dir: string; r: Extract<StartResult, { ok: true }>; seen: string[] }> | undefined;
function renameRunInsideRepo() {
  renameRun ??= (async () => {
    const dir = renameProject(1);
    const seen: string[] = [];
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      {
        runsDir: join(dir, 'repo', '.orchestrate', 'runs'),
        onStore: (store) =>
          store.subscribe((e) => {
            // Each worktree as its agent starts in it (the runs folder would be there if the tip carried it).
            if (e.type === 'instance_start' && e.worktree) seen.push(...readdirSync(resolve(store.dir, e.worktree)));
          }),
      },
    );
    if (!r.ok) throw new Error(JSON.stringify(r));
    return { dir, r, seen };
  })();
  return renameRun;
}

describe('land: train', { timeout: 240_000 }, () => {
  it('six tasks in one repository all land, verify green after every step, the same-lines pair after one repair', async () => {
    const dir = project();
    const repo = join(dir, 'repo');
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(ofType(log, 'instance_failed'), JSON.stringify(ofType(log, 'train_step'))).toEqual([]);
    expect(r.outcome.status).toBe('succeeded');

    // The checkout holds all six changes, merged.
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a done\n');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b done\n');
    const shared = readFileSync(join(repo, 'shared.txt'), 'utf8').split('\n');
    expect(shared[0]).toBe('top by three');
    expect(shared[9]).toBe('bottom by four');
    expect(readFileSync(join(repo, 'same.txt'), 'utf8')).toBe('value=five,six\n');

    const steps = ofType(log, 'train_step');
    const landed = steps.filter((s) => s.phase === 'landed');
    expect(landed.map((s) => s.key).sort()).toEqual([...NAMES].sort());
    // Verify ran on the merged tree of every landing, and passed.
    for (const s of landed)
      expect(
        s.verify?.map((v) => v.ok),
        s.key,
      ).toEqual([true]);
    expect(steps.filter((s) => s.phase === 'verify_failed')).toEqual([]);
    // Exactly one conflict, on same.txt, of one of the pair; it landed after one repair.
    const conflicts = steps.filter((s) => s.phase === 'conflict');
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]!.files).toEqual(['same.txt']);
    const repaired = conflicts[0]!.key;
    expect(['five', 'six']).toContain(repaired);
    expect(steps.filter((s) => s.phase === 'repair').map((s) => [s.key, s.repair])).toEqual([[repaired, 1]]);
    const retry = ofType(log, 'instance_retry');
    expect(retry.map((e) => [e.key, e.failure, e.uncharged])).toEqual([[repaired, 'patch_conflict', true]]);
    // The repair ran with a session of its own, and its first message carried the earlier patch.
    const session = readFileSync(join(r.outcome.dir, 'sessions', `${repaired}.repair-1.jsonl`), 'utf8');
    expect(session).toContain('Repair 1 of 2');
    expect(session).toContain(`value=${repaired}`);
    // Nothing landed twice: one landing per instance, the others untouched by the conflict.
    expect(new Set(landed.map((s) => s.key)).size).toBe(6);

    // The fold's train: every car landed, verify green, one repair.
    const fold = foldEvents(log);
    const cars = Object.values(fold.train.cars);
    expect(cars.map((c) => [c.key, c.status, c.verifyOk]).sort()).toEqual(
      [...NAMES].sort().map((n) => [n, 'landed', true]),
    );
    expect(cars.find((c) => c.key === repaired)?.repairs).toBe(1);
    // show: the train per repository, and each car with its repairs and verify result.
    const details = formatRunDetails(loadRunFolder(r.outcome.dir));
    expect(details).toContain('merge train of repo: 6 landed, 0 repairing, 0 failed');
    expect(details).toMatch(new RegExp(`  ${repaired} {2}landed after 1 repair · verify passed · commit [0-9a-f]{12}`));
    expect(details).toMatch(/ {2}one {2}landed · verify passed · commit [0-9a-f]{12}/);
    // The index and HEAD are the user's: the train changed files only.
    expect(execFileSync('git', ['log', '--oneline'], { cwd: repo }).toString().trim().split('\n')).toHaveLength(1);
  });

  it('work that breaks verify only together with what landed before it never reaches the checkout, and is repaired on the new tip', async () => {
    const { dir, r } = await renameRunInsideRepo();
    expect(r.outcome.status).toBe('succeeded');
    const steps = ofType(events(r.outcome.dir), 'train_step');
    // Whichever lands second breaks verify on the merged tree (each passed it alone) and is repaired.
    const second = steps.find((s) => s.phase === 'verify_failed')!.key;
    const first = second === 'rename' ? 'extra' : 'rename';
    expect(steps.map((s) => `${s.key} ${s.phase}`)).toEqual([
      `${first} landing`,
      `${first} landed`,
      `${second} verify_failed`,
      `${second} repair`,
      `${second} landing`,
      `${second} landed`,
    ]);
    const failed = steps.find((s) => s.phase === 'verify_failed')!;
    expect(failed.verify?.[0]).toMatchObject({ ok: false });
    expect(failed.verify?.[0]?.output).toContain('undefined: foo');
    // The repair's first message carried the failing output.
    const session = readFileSync(join(r.outcome.dir, 'sessions', `${second}.repair-1.jsonl`), 'utf8');
    expect(session).toContain('undefined: foo');
    for (const f of ['defs.txt', 'use1.txt', 'use2.txt'])
      expect(readFileSync(join(dir, 'repo', f), 'utf8')).toBe('bar\n');
  });

  it('with max_repairs: 0 a landing that breaks verify fails verify_failed and the checkout never sees it', async () => {
    const dir = renameProject(0);
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('failed');
    const log = events(r.outcome.dir);
    const failed = ofType(log, 'instance_failed');
    expect(failed.map((e) => [e.failure, e.final])).toEqual([['verify_failed', true]]);
    expect(failed[0]!.error).toContain('undefined: foo');
    const second = failed[0]!.key;
    const first = second === 'rename' ? 'extra' : 'rename';
    expect(ofType(log, 'train_step').map((s) => `${s.key} ${s.phase}`)).toEqual([
      `${first} landing`,
      `${first} landed`,
      `${second} verify_failed`,
      `${second} failed`,
    ]);
    // The checkout holds the first one's work alone, and still passes verify.
    const repo = join(dir, 'repo');
    expect(existsSync(join(repo, 'use2.txt'))).toBe(first === 'extra');
    expect(readFileSync(join(repo, 'defs.txt'), 'utf8')).toBe(first === 'rename' ? 'bar\n' : 'foo\n');
    execFileSync('sh', ['-c', VERIFY_NAMES], { cwd: repo });
  });

  it('a run folder inside the repository is no part of the work: worktrees start without it, and nothing of it lands', async () => {
    const { dir, r, seen } = await renameRunInsideRepo();
    const repo = join(dir, 'repo');
    expect(r.outcome.status, JSON.stringify(ofType(events(r.outcome.dir), 'instance_failed'))).toBe('succeeded');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).not.toContain('.orchestrate');
    const steps = ofType(events(r.outcome.dir), 'train_step');
    expect(steps.flatMap((s) => s.files ?? []).filter((f) => f.includes('.orchestrate'))).toEqual([]);
    for (const f of ['defs.txt', 'use1.txt', 'use2.txt']) expect(readFileSync(join(repo, f), 'utf8')).toBe('bar\n');
  });

  it("verify on the merged tree is confined as the task's verify is: with sandbox: none it may write outside", async () => {
    const dir = tempProject({
      'script.yaml': `conversations:
  - match: "^Task one"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'x\\\\n' > a.txt" } }]
      - text: "one done"
`,
      'repo/a.txt': 'a\n',
    });
    gitInit(join(dir, 'repo'));
    // Only the verify on the merged tree (a folder orchestrate-train-*) leaves the marker, outside that folder.
    const marker = join(dir, 'marker');
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: train-sandbox
provider: scripted
script: script.yaml
sandbox: none
agents:
  editor: { tools: [bash] }
tasks:
  - id: one
    agent: editor
    cwd: repo
    isolation: worktree
    merge: apply
    verify: 'case "$PWD" in *orchestrate-train-*) touch ${marker} || true;; esac'
    prompt: "Task one"
`,
    );
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    const landed = ofType(events(r.outcome.dir), 'train_step').find((s) => s.phase === 'landed');
    expect(landed?.verify?.map((v) => v.ok)).toEqual([true]);
    expect(existsSync(marker)).toBe(true);
  });

  it('land_order: task lands in recipe order though the tasks finish in reverse, and an earlier failure blocks nothing', async () => {
    // Each agent's bash waits for the event "the task after it has finished" (its patch written,
    // just before it asks the train to land), so three finishes first and one last.
    const dir = tempProject({ 'repo/base.txt': 'base\n' });
    gitInit(join(dir, 'repo'));
    const runs = join(dir, 'runs');
    const after = (next: string) => `until ls ${runs}/*/patches/${next}.diff >/dev/null 2>&1; do sleep 0.1; done; `;
    const conv = (name: string, wait: string, last: string) => `  - match: "^Task ${name}"
    turns:
      - tools: [{ name: bash, args: { command: "${wait}printf '${name}\\\\n' > ${name}.txt" } }]
      - ${last}
`;
    const run = async (firstFails: boolean) => {
      const script = [
        conv(
          'one',
          after('two'),
          firstFails ? 'error: "400 invalid_request_error: one is broken"' : 'text: "one done"',
        ),
        conv('two', after('three'), 'text: "two done"'),
        conv('three', '', 'text: "three done"'),
      ].join('');
      writeFileSync(join(dir, 'script.yaml'), `conversations:\n${script}`);
      const tasks = ['one', 'two', 'three']
        .map((n) => `  - id: ${n}\n    agent: editor\n    cwd: repo\n    prompt: "Task ${n}"\n`)
        .join('');
      writeFileSync(
        join(dir, 'recipe.yaml'),
        `name: train-order
provider: scripted
script: script.yaml
sandbox: none
concurrency: 3
agents:
  editor: { tools: [bash] }
defaults:
  isolation: worktree
  merge: apply
  land_order: task
tasks:
${tasks}`,
      );
      const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: runs });
      if (!r.ok) throw new Error(JSON.stringify(r));
      return { r, log: events(r.outcome.dir) };
    };

    const ordered = await run(false);
    expect(ordered.r.outcome.status).toBe('succeeded');
    const landed = ofType(ordered.log, 'train_step').filter((s) => s.phase === 'landed');
    expect(landed.map((s) => s.key)).toEqual(['one', 'two', 'three']);
    for (const n of ['one', 'two', 'three']) expect(readFileSync(join(dir, 'repo', `${n}.txt`), 'utf8')).toBe(`${n}\n`);

    // The checkout back as it was; one now fails after two and three wait for it: they still land, in order.
    execFileSync('git', ['checkout', '-q', '--', '.'], { cwd: join(dir, 'repo') });
    execFileSync('git', ['clean', '-qfd', '--', '.'], { cwd: join(dir, 'repo') });
    rmSync(runs, { recursive: true, force: true });
    const failed = await run(true);
    expect(ofType(failed.log, 'instance_failed').map((e) => e.key)).toEqual(['one']);
    const landedAfter = ofType(failed.log, 'train_step').filter((s) => s.phase === 'landed');
    expect(landedAfter.map((s) => s.key)).toEqual(['two', 'three']);
    expect(existsSync(join(dir, 'repo', 'one.txt'))).toBe(false);
  });

  it('land_order: task at concurrency 1: a finished later task waits and gives its slot back, so the earlier ones start and land first', async () => {
    // two (level 0) runs first and finishes before pre and one (it needs pre) have started; the
    // land order is pre, one (its need pulled before it), two. Holding the only slot while it
    // waited would deadlock; waiting for started work only would land two first.
    const dir = tempProject({
      'repo/base.txt': 'base\n',
      'script.yaml': `conversations:
  - match: "^Task (\\\\w+)"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'x\\\\n' > {{match.1}}.txt" } }]
      - text: "done"
`,
      'recipe.yaml': `name: train-order-slots
provider: scripted
script: script.yaml
sandbox: none
concurrency: 1
agents:
  editor: { tools: [bash] }
defaults: { isolation: worktree, merge: apply, land_order: task, agent: editor, cwd: repo }
tasks:
  - id: one
    needs: [pre]
    prompt: "Task one"
  - id: two
    prompt: "Task two"
  - id: pre
    prompt: "Task pre"
`,
    });
    gitInit(join(dir, 'repo'));
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    const log = events(r.outcome.dir);
    const steps = ofType(log, 'train_step');
    expect(steps.filter((s) => s.phase === 'landed').map((s) => s.key)).toEqual(['pre', 'one', 'two']);
    const waiting = steps.filter((s) => s.phase === 'waiting');
    expect(waiting.map((s) => [s.key, s.behind])).toEqual([['two', ['pre', 'one']]]);
    // The slot really went back: pre and one started while two waited, at concurrency 1.
    const at = (pred: (e: (typeof log)[number]) => boolean) => log.findIndex(pred);
    const waited = at((e) => e.type === 'train_step' && e.key === 'two' && e.phase === 'waiting');
    for (const k of ['pre', 'one'])
      expect(
        at((e) => e.type === 'instance_start' && e.key === k),
        k,
      ).toBeGreaterThan(waited);
    expect(ofType(log, 'instance_start').map((e) => e.key)).toEqual(['two', 'pre', 'one']);
    for (const n of ['one', 'two', 'pre']) expect(readFileSync(join(dir, 'repo', `${n}.txt`), 'utf8')).toBe('x\n');
    // Every view says what two waited behind.
    const details = formatRunDetails(loadRunFolder(r.outcome.dir));
    expect(details).toContain('merge train of repo: 3 landed');
    const folded = foldEvents(log);
    expect(folded.train.steps.find((s) => s.phase === 'waiting')?.behind).toEqual(['pre', 'one']);
  });

  it('land_order: task: a wait behind a task that will never run (a failed dependency, so it is skipped) ends, and the work lands', async () => {
    // late finishes first and waits behind bad and after (after needs bad). bad fails only once
    // late's waiting step is in the log (the pattern does not match the logged command itself); after is then skipped (and nothing new starts: bad's
    // on_failure is fail), and late, already under way, lands.
    const dir = tempProject({ 'repo/base.txt': 'base\n' });
    gitInit(join(dir, 'repo'));
    const runs = join(dir, 'runs');
    writeFileSync(
      join(dir, 'script.yaml'),
      `conversations:
  - match: "^Task bad"
    turns:
      - tools: [{ name: bash, args: { command: "until grep -q 'phas[e].:.waiting' ${runs}/*/run.jsonl 2>/dev/null; do sleep 0.1; done" } }]
      - error: "400 invalid_request_error: bad is broken"
  - match: "^Task (\\\\w+)"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'x\\\\n' > {{match.1}}.txt" } }]
      - text: "done"
`,
    );
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: train-order-skipped
provider: scripted
script: script.yaml
sandbox: none
concurrency: 2
agents:
  editor: { tools: [bash] }
defaults: { isolation: worktree, merge: apply, land_order: task, agent: editor, cwd: repo }
tasks:
  - id: bad
    prompt: "Task bad"
  - id: after
    needs: [bad]
    prompt: "Task after"
  - id: late
    prompt: "Task late"
`,
    );
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: runs });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(ofType(log, 'instance_failed').map((e) => e.key)).toEqual(['bad']);
    expect(ofType(log, 'instance_skipped').map((e) => e.key)).toEqual(['after']);
    const steps = ofType(log, 'train_step');
    expect(steps.filter((s) => s.phase === 'waiting').map((s) => [s.key, s.behind])).toEqual([
      ['late', ['bad', 'after']],
    ]);
    expect(steps.filter((s) => s.phase === 'landed').map((s) => s.key)).toEqual(['late']);
    expect(readFileSync(join(dir, 'repo', 'late.txt'), 'utf8')).toBe('x\n');
  });

  it('land_order: task: a cancel ends the wait (not landed, the car failed); Ctrl-C ends it kept for the resume', async () => {
    // two finishes and waits behind one, whose agent works until the test lets it go.
    const setup = () => {
      const dir = tempProject({ 'repo/base.txt': 'base\n' });
      gitInit(join(dir, 'repo'));
      const go = join(dir, 'go');
      writeFileSync(
        join(dir, 'script.yaml'),
        `conversations:
  - match: "^Task one"
    turns:
      - tools: [{ name: bash, args: { command: "until [ -f ${go} ]; do sleep 0.1; done; printf 'one\\\\n' > one.txt" } }]
      - text: "one done"
  - match: "^Task two"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'two\\\\n' > two.txt" } }]
      - text: "two done"
`,
      );
      writeFileSync(
        join(dir, 'recipe.yaml'),
        `name: train-wait-stop
provider: scripted
script: script.yaml
sandbox: none
concurrency: 2
agents:
  editor: { tools: [bash] }
defaults: { isolation: worktree, merge: apply, land_order: task, agent: editor, cwd: repo }
tasks:
  - id: one
    prompt: "Task one"
  - id: two
    prompt: "Task two"
`,
      );
      return { dir, go };
    };
    /** Runs the recipe; `onWaiting` is called (after the event is recorded) once two's waiting step is logged. */
    const run = (dir: string, onWaiting: (control: RunControl) => void, signal?: AbortSignal) => {
      let control: RunControl | undefined;
      return runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        {
          runsDir: join(dir, 'runs'),
          controlSocket: false,
          onControl: (c) => (control = c),
          onStore: (store) =>
            store.subscribe((e) => {
              if (e.type === 'train_step' && e.phase === 'waiting') setImmediate(() => onWaiting(control!));
            }),
          ...(signal ? { signal } : {}),
        },
      );
    };

    const cancelled = setup();
    const r = await run(cancelled.dir, (control) => {
      void control.send({ action: 'cancel', instance: 'two', by: 't' }).then(() => writeFileSync(cancelled.go, ''));
    });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(ofType(log, 'instance_failed').map((e) => [e.key, e.failure])).toEqual([['two', 'cancelled']]);
    const steps = ofType(log, 'train_step').map((s) => [s.key, s.phase]);
    expect(steps).toEqual([
      ['two', 'waiting'],
      ['two', 'failed'],
      ['one', 'landing'],
      ['one', 'landed'],
    ]);
    expect(existsSync(join(cancelled.dir, 'repo', 'two.txt'))).toBe(false);
    expect(readFileSync(join(cancelled.dir, 'repo', 'one.txt'), 'utf8')).toBe('one\n');

    // Ctrl-C while two waits: the run ends interrupted (the wait does not hold it), two's car
    // stays waiting with its answer kept, and nothing landed.
    const interrupted = setup();
    const abort = new AbortController();
    const i = await run(interrupted.dir, () => abort.abort(), abort.signal);
    if (!i.ok) throw new Error(JSON.stringify(i));
    expect(i.outcome.status).toBe('interrupted');
    const train = foldEvents(events(i.outcome.dir)).train;
    expect(train.cars.two).toMatchObject({ status: 'waiting', behind: ['one'], kept: { text: 'two done' } });
    expect(existsSync(join(interrupted.dir, 'repo', 'two.txt'))).toBe(false);
  });

  it('with max_repairs: 0 a conflict fails patch_conflict, naming the conflicting file', async () => {
    const dir = project('    max_repairs: 0\n');
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const failed = ofType(events(r.outcome.dir), 'instance_failed');
    expect(failed.map((e) => [e.failure, e.final])).toEqual([['patch_conflict', true]]);
    expect(['five', 'six']).toContain(failed[0]!.key);
    expect(failed[0]!.error).toContain('same.txt');
    expect(ofType(events(r.outcome.dir), 'train_step').filter((s) => s.phase === 'landed')).toHaveLength(5);
  });
});

/** verify of the semantic conflict: every name used in use*.txt is defined in defs.txt. */
const VERIFY_NAMES = 'for w in $(cat use*.txt); do grep -qx "$w" defs.txt || { echo "undefined: $w"; exit 1; }; done';

/**
 * A semantic conflict: `rename` renames foo to bar where it is defined and used; `extra` (started
 * from the same tip) adds a use of foo. Each passes verify alone; merged, a name is undefined.
 * The repair of either keeps both changes: everything says bar.
 */
function renameProject(maxRepairs: number): string {
  const dir = tempProject({
    'recipe.yaml': `name: train-verify
provider: scripted
script: script.yaml
concurrency: 2
agents:
  editor: { tools: [bash] }
defaults:
  agent: editor
  cwd: repo
  isolation: worktree
  land: train
  max_repairs: ${maxRepairs}
  verify: '${VERIFY_NAMES}'
tasks:
  - id: rename
    prompt: "Task rename"
  - id: extra
    prompt: "Task extra"
`,
    'script.yaml': `conversations:
  - match: "^Repair 1 of 1[\\\\s\\\\S]*Task extra"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'bar\\\\n' > use2.txt" } }]
      - text: "extra repaired"
  - match: "^Repair 1 of 1[\\\\s\\\\S]*Task rename"
    turns:
      - tools: [{ name: bash, args: { command: "for f in defs.txt use1.txt use2.txt; do printf 'bar\\\\n' > $f; done" } }]
      - text: "rename repaired"
  - match: "^Task rename"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'bar\\\\n' > defs.txt && printf 'bar\\\\n' > use1.txt" } }]
      - text: "rename done"
  - match: "^Task extra"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'foo\\\\n' > use2.txt" } }]
      - text: "extra done"
`,
    'repo/defs.txt': 'foo\n',
    'repo/use1.txt': 'foo\n',
  });
  gitInit(join(dir, 'repo'));
  return dir;
}
