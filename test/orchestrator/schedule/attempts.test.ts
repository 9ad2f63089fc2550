// Best-of-N attempts end to end (issue 39 part 2): a task with `attempts: 3` runs three attempts in
// worktrees of their own, scripted models that differ per attempt through `${{ attempt }}`, each
// verified. pick: verify lands the only attempt that passed and `show` says why; pick: first
// cancels the other attempts as soon as one passes (they wait on a gate nobody opens, so the test
// does not race them); pick: judge lands the attempt a scripted judge names, with its reasoning;
// a resume after the pick was logged but before it landed lands it once and re-runs no attempt.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatRunDetails } from '../../../src/display/run-details-text.js';
import { formatFinalSummary } from '../../../src/display/final-summary.js';
import { buildHtmlReport } from '../../../src/display/html-report.js';
import { buildReportData } from '../../../src/display/report/report-data.js';
import { buildFrame, frameHeader } from '../../../src/display/live-frame.js';
import { runJson } from '../../../src/display/run-json.js';
import { runSnapshot } from '../../../src/web/run-snapshot.js';
import { loadRunFolder } from '../../../src/display/run-folder.js';
import { makePainter } from '../../../src/display/terminal-text.js';
import { resumeRunDir, runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { foldEvents } from '../../../src/run/index.js';
import { cleanupTempDirs, events, gitInit, gitWorktrees, ofType, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

/** A recipe whose task `fix` runs three attempts, each attempt's agent running `edits[n - 1]` in bash. */
function project(opts: {
  pick?: string;
  verify: string;
  edits: string[];
  extraConvs?: string;
  merge?: string;
}): string {
  const convs = opts.edits
    .map(
      (cmd, i) => `  - match: "^Attempt ${i + 1}:"
    turns:
      - tools: [{ name: bash, args: { command: "${cmd}" } }]
      - text: "attempt ${i + 1} done"
`,
    )
    .join('');
  const files: Record<string, string> = {
    'recipe.yaml': `name: best-of
provider: scripted
script: script.yaml
concurrency: 4
agents:
  editor: { tools: [bash] }
tasks:
  - id: fix
    agent: editor
    cwd: repo
    attempts: 3
${opts.pick ? `    pick: ${opts.pick}\n` : ''}    merge: ${opts.merge ?? 'apply'}
    verify: "${opts.verify}"
    prompt: "Attempt \${{ attempt }}: fix value.txt"
  - id: after
    needs: [fix]
    agent: editor
    prompt: "After: \${{ tasks.fix.output }}"
`,
    'script.yaml': `conversations:
${convs}  - match: "^After: "
    turns:
      - text: "after saw it"
${opts.extraConvs ?? ''}`,
    'repo/value.txt': 'value=base\n',
  };
  const dir = tempProject(files);
  gitInit(join(dir, 'repo'));
  return dir;
}

/**
 * A pick: judge run over three passing attempts (1 changes the fewest lines); the judge's one
 * reply is `reply` (a YAML scalar).
 */
async function judgedRun(reply: string) {
  const dir = project({
    pick: 'judge',
    verify: 'test -s value.txt',
    edits: [
      "printf 'v=1\\\\n' > value.txt",
      "printf 'v=2\\\\nmore\\\\n' > value.txt",
      "printf 'v=3\\\\n# the value\\\\nmore\\\\n' > value.txt",
    ],
    extraConvs: `  - match: "^You are the judge of 3 independent attempts"
    turns:
      - text: ${reply}
`,
  });
  const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, r };
}

describe('attempts: best of N', { timeout: 240_000 }, () => {
  it('pick: verify lands the only attempt that passed, downstream sees it, show says why', async () => {
    const dir = project({
      verify: 'grep -q good value.txt',
      edits: [
        "printf 'bad one\\\\n' > value.txt",
        "printf 'good\\\\n' > value.txt",
        "printf 'bad three\\\\n' > value.txt",
      ],
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(r.outcome.status).toBe('succeeded');
    // Three attempts ran; 1 and 3 failed their verify, 2 passed.
    expect(
      ofType(log, 'instance_failed')
        .map((e) => [e.key, e.failure])
        .sort(),
    ).toEqual([
      ['fix.attempt-1', 'verify_failed'],
      ['fix.attempt-3', 'verify_failed'],
    ]);
    const picks = ofType(log, 'attempt_pick');
    expect(picks).toHaveLength(1);
    expect(picks[0]!.picked).toBe('fix.attempt-2');
    expect(picks[0]!.rule).toBe('verify');
    expect(picks[0]!.candidates.map((c) => [c.attempt, c.outcome, c.verify?.ok])).toEqual([
      [1, 'failed', false],
      [2, 'passed', true],
      [3, 'failed', false],
    ]);
    expect(picks[0]!.candidates[1]!.lines).toBe(2);
    // Only attempt 2's work is in the checkout; the others' patches stay in the run folder.
    expect(readFileSync(join(dir, 'repo', 'value.txt'), 'utf8')).toBe('good\n');
    const landed = ofType(log, 'attempt_landed');
    expect(landed.map((e) => [e.key, e.ok])).toEqual([['fix.attempt-2', true]]);
    // The dependant saw one result: the picked attempt's (its script matched "attempt 2 done").
    const after = ofType(log, 'instance_done').find((e) => e.key === 'after');
    expect(after?.text).toBe('after saw it');
    expect(ofType(log, 'instance_start').find((e) => e.key === 'after')?.prompt).toBe('After: attempt 2 done');

    // result.json names the pick and why; the live view has a line for it like the train's.
    const result = JSON.parse(readFileSync(join(r.outcome.dir, 'result.json'), 'utf8'));
    expect(result.picks).toEqual([
      {
        task: 'fix',
        instance: 'fix',
        rule: 'verify',
        picked: 'fix.attempt-2',
        reason: picks[0]!.reason,
        landed: true,
        attempts: [
          {
            key: 'fix.attempt-1',
            attempt: 1,
            patchFile: 'patches/fix.attempt-1.diff',
            cost: 0,
            landed: false,
            notLanded: 'its verify failed',
          },
          { key: 'fix.attempt-2', attempt: 2, patchFile: 'patches/fix.attempt-2.diff', cost: 0, landed: true },
          {
            key: 'fix.attempt-3',
            attempt: 3,
            patchFile: 'patches/fix.attempt-3.diff',
            cost: 0,
            landed: false,
            notLanded: 'its verify failed',
          },
        ],
      },
    ]);
    // The losing attempts are no errors of the run, nor failures in plan.md.
    expect(result.errors).toEqual([]);
    const plan = readFileSync(join(r.outcome.dir, 'plan.md'), 'utf8');
    expect(plan).toContain('Status: succeeded — 2 not picked, 2 done across 2 tasks');
    expect(plan).toContain('#### fix.attempt-1 — not picked [verify_failed]');
    expect(plan).toContain('- Patch: patches/fix.attempt-1.diff');
    expect(plan).not.toContain('fix.attempt-1 failed');
    const header = frameHeader(foldEvents(log), {
      width: 200,
      height: 30,
      now: Date.now(),
      painter: makePainter(false),
    });
    expect(header).toContain(`attempt picks of fix: 1 landed (fix.attempt-2: ${picks[0]!.reason})`);

    const show = formatRunDetails(loadRunFolder(r.outcome.dir));
    expect(show).toContain(
      'fix: picked fix.attempt-2 (pick: verify): attempt 2 is the only one of 3 attempts where its verify passed',
    );
    expect(show).toMatch(/\* attempt 2: verify passed, 2 lines, \$/);
    expect(show).toMatch(/ {2}attempt 1: verify failed/);
    // The picked attempt's own record says where its work went, as any landed instance's does.
    expect(show).toMatch(/fix\.attempt-2 {2}done[\s\S]*?applied to the checkout[\s\S]*?fix\.attempt-3/);

    // Every attempt's work stays in the run folder, and show / --json / the report / the web page
    // say where it is and why it did not land.
    expect(
      ofType(log, 'instance_failed')
        .map((e) => [e.key, e.patchFile])
        .sort(),
    ).toEqual([
      ['fix.attempt-1', 'patches/fix.attempt-1.diff'],
      ['fix.attempt-3', 'patches/fix.attempt-3.diff'],
    ]);
    expect(readFileSync(join(r.outcome.dir, 'patches', 'fix.attempt-1.diff'), 'utf8')).toContain('+bad one');
    expect(readFileSync(join(r.outcome.dir, 'patches', 'fix.attempt-3.diff'), 'utf8')).toContain('+bad three');
    // Their worktrees went with the landing (the patches hold their work): git knows only the checkout.
    expect(gitWorktrees(join(dir, 'repo'))).toEqual([join(dir, 'repo')]);
    expect(show).toMatch(
      / {2}attempt 1: verify failed.* · not landed: its verify failed; its work: patches\/fix\.attempt-1\.diff/,
    );
    expect(show).toMatch(/\* attempt 2: .* · landed; its work: patches\/fix\.attempt-2\.diff/);
    const folder = loadRunFolder(r.outcome.dir);
    const json = runJson(folder) as {
      picks: { attempts: unknown[] }[];
      instances: { key: string; status: string; notPicked?: boolean; patchFile?: string }[];
    };
    expect(json.instances.map((i) => [i.key, i.status, i.notPicked ?? false, i.patchFile])).toEqual([
      ['fix.attempt-1', 'failed', true, 'patches/fix.attempt-1.diff'],
      ['fix.attempt-2', 'done', false, 'patches/fix.attempt-2.diff'],
      ['fix.attempt-3', 'failed', true, 'patches/fix.attempt-3.diff'],
      ['after', 'done', false, undefined],
    ]);
    expect(json.picks[0]!.attempts).toEqual([
      {
        key: 'fix.attempt-1',
        attempt: 1,
        patchFile: 'patches/fix.attempt-1.diff',
        cost: 0,
        landed: false,
        notLanded: 'its verify failed',
      },
      { key: 'fix.attempt-2', attempt: 2, patchFile: 'patches/fix.attempt-2.diff', cost: 0, landed: true },
      {
        key: 'fix.attempt-3',
        attempt: 3,
        patchFile: 'patches/fix.attempt-3.diff',
        cost: 0,
        landed: false,
        notLanded: 'its verify failed',
      },
    ]);
    expect(buildHtmlReport(folder)).toContain('not landed: its verify failed; its work: patches/fix.attempt-3.diff');
    // The report's task graph shows fix done (its landed attempt), not failed.
    expect(buildReportData(folder).tasks.find((t) => t.task === 'fix')).toMatchObject({
      instances: 1,
      done: 1,
      failed: 0,
      status: 'done',
    });
    const snap = runSnapshot(folder.state, r.outcome.dir, undefined);
    expect(snap.picks[0]!.candidates.map((c) => [c.key, c.notLanded ?? 'landed', c.patchFile])).toEqual([
      ['fix.attempt-1', 'its verify failed', 'patches/fix.attempt-1.diff'],
      ['fix.attempt-2', 'landed', 'patches/fix.attempt-2.diff'],
      ['fix.attempt-3', 'its verify failed', 'patches/fix.attempt-3.diff'],
    ]);
    // Losing attempts are no failure of the run: every header counts them as not picked.
    expect(snap.counts).toMatchObject({ total: 4, done: 2, failed: 0, notPicked: 2 });
    expect(snap.instances.map((i) => [i.key, i.status, i.notPicked ?? false, i.landed])).toEqual([
      ['fix.attempt-1', 'failed', true, undefined],
      ['fix.attempt-2', 'done', false, 'applied to the checkout'],
      ['fix.attempt-3', 'failed', true, undefined],
      ['after', 'done', false, undefined],
    ]);
    expect(show).toContain('instances: 4 (2 done, 0 failed, 2 attempts not picked, 0 skipped, 0 unfinished)');
    expect(show).toMatch(/fix\.attempt-1 {2}failed, not picked/);
    // The live view's rows mark the losing attempts not picked, not failed.
    const frame = buildFrame(foldEvents(log), { width: 200, height: 30, now: Date.now(), painter: makePainter(false) });
    const row = (key: string) => frame.find((l) => l.includes(` ${key} `)) ?? '';
    expect(row('fix.attempt-1')).toMatch(/^· fix\.attempt-1 +not picked: /);
    expect(row('fix.attempt-2')).toMatch(/^✓ fix\.attempt-2 /);
    const progress = header.find((l) => l.includes('4/4')) ?? '';
    expect(progress).toContain('2 done · 2 not picked');
    expect(progress).not.toContain('failed');
    const summary = formatFinalSummary(foldEvents(log));
    expect(summary).toContain('2 done, 2 not picked');
    expect(summary).toContain('not picked: its verify failed; its work: patches/fix.attempt-3.diff');
    expect(summary).not.toContain('failed ·');
    // The fold's pick is a plain object a web view can reuse.
    const fold = foldEvents(log);
    expect(JSON.parse(JSON.stringify(fold.picks.get('fix')))).toMatchObject({
      picked: 'fix.attempt-2',
      landed: { ok: true, applied: true },
    });
  });

  it('pick: first cancels the other attempts as soon as one passes', async () => {
    // Attempts 2 and 3 wait on a gate file nobody creates: only the cancel ends them.
    const dir = project({
      pick: 'first',
      verify: 'grep -q good value.txt',
      // Attempt 1 passes only once 2 and 3 have changed a file (they mark it in MARKS), so the
      // pick stops attempts whose work must be kept.
      edits: [
        "until [ -e MARKS/2 ] && [ -e MARKS/3 ]; do sleep 0.05; done; printf 'good\\\\n' > value.txt",
        "printf 'partial two\\\\n' > value.txt; touch MARKS/2; while [ ! -e never-opened ]; do sleep 0.05; done",
        "printf 'partial three\\\\n' > value.txt; touch MARKS/3; while [ ! -e never-opened ]; do sleep 0.05; done",
      ],
    });
    mkdirSync(join(dir, 'marks'));
    const script = join(dir, 'script.yaml');
    writeFileSync(script, readFileSync(script, 'utf8').replaceAll('MARKS', join(dir, 'marks')));
    // sandbox: none lets the attempts reach the marks folder outside their worktrees.
    const recipe = join(dir, 'recipe.yaml');
    writeFileSync(
      recipe,
      readFileSync(recipe, 'utf8').replace('script: script.yaml\n', 'script: script.yaml\nsandbox: none\n'),
    );
    const r = await runRecipeFile(recipe, { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(r.outcome.status).toBe('succeeded');
    const picks = ofType(log, 'attempt_pick');
    expect(picks.map((p) => [p.picked, p.rule])).toEqual([['fix.attempt-1', 'first']]);
    expect(picks[0]!.reason).toContain('attempt 1 passed first');
    // The others were cancelled by the pick (logged as control events), not run to their end.
    const cancels = ofType(log, 'control').filter((c) => c.action === 'cancel');
    expect(cancels.map((c) => c.instance).sort()).toEqual(['fix.attempt-2', 'fix.attempt-3']);
    for (const c of cancels) expect(c.by).toContain('pick: first');
    const fold = foldEvents(log);
    const statusOf = (key: string) => [...fold.instances.values()].find((i) => i.key === key)?.status;
    expect([statusOf('fix.attempt-1'), statusOf('fix.attempt-2'), statusOf('fix.attempt-3')]).toEqual([
      'done',
      'cancelled',
      'cancelled',
    ]);
    // The stopped attempts' worktrees went when they ended, after the pick had landed attempt 1.
    expect(gitWorktrees(join(dir, 'repo'))).toEqual([join(dir, 'repo')]);
    expect(readFileSync(join(dir, 'repo', 'value.txt'), 'utf8')).toBe('good\n');
    expect(ofType(log, 'instance_done').some((e) => e.key === 'after')).toBe(true);
    // What the stopped attempts had changed is kept in the run folder, and show says why it did not land.
    expect(
      ofType(log, 'instance_failed')
        .map((e) => [e.key, e.failure, e.patchFile])
        .sort(),
    ).toEqual([
      ['fix.attempt-2', 'cancelled', 'patches/fix.attempt-2.diff'],
      ['fix.attempt-3', 'cancelled', 'patches/fix.attempt-3.diff'],
    ]);
    expect(readFileSync(join(r.outcome.dir, 'patches', 'fix.attempt-2.diff'), 'utf8')).toContain('+partial two');
    const show = formatRunDetails(loadRunFolder(r.outcome.dir));
    expect(show).toMatch(
      /attempt 2: cancelled, .* · not landed: stopped by pick: first once fix\.attempt-1 passed; its work: patches\/fix\.attempt-2\.diff/,
    );
    // Stopped attempts are no cancel of the user's: the run succeeded, and they count as not picked.
    expect(show).toContain('instances: 4 (2 done, 0 failed, 2 attempts not picked, 0 skipped, 0 unfinished)');
  });

  it('pick: judge lands the attempt the judge names and records its reasoning', async () => {
    const { dir, r } = await judgedRun(`'{"attempt": 3, "reasoning": "attempt 3 also documents the value"}'`);
    const log = events(r.outcome.dir);
    expect(r.outcome.status).toBe('succeeded');
    const pick = ofType(log, 'attempt_pick')[0]!;
    // The verify rule would have picked attempt 1 (fewest lines); the judge picked 3.
    expect(pick.picked).toBe('fix.attempt-3');
    expect(pick.reason).toBe('the judge picked attempt 3: attempt 3 also documents the value');
    expect(pick.judge).toBeDefined();
    expect(readFileSync(join(dir, 'repo', 'value.txt'), 'utf8')).toBe('v=3\n# the value\nmore\n');
    // The judge ran as an agent of the run, shown its candidates' diffs.
    const judgeStart = ofType(log, 'instance_start').find((e) => e.key === 'fix.judge');
    expect(judgeStart?.prompt).toContain('+v=2');
    expect(ofType(log, 'instance_done').some((e) => e.key === 'fix.judge')).toBe(true);
    expect(formatRunDetails(loadRunFolder(r.outcome.dir))).toContain('the judge picked attempt 3');
  });

  it('pick: judge whose judge fails falls back to the verify rule; the run counts no failure', async () => {
    // The judge answers no JSON, is asked again, and its script has no second reply: it fails.
    const { dir, r } = await judgedRun('"no JSON here"');
    const log = events(r.outcome.dir);
    expect(r.outcome.status).toBe('succeeded');
    expect(ofType(log, 'instance_failed').map((e) => e.key)).toContain('fix.judge');
    const pick = ofType(log, 'attempt_pick')[0]!;
    expect(pick.picked).toBe('fix.attempt-1');
    expect(pick.reason).toContain('the judge gave no usable verdict');
    expect(readFileSync(join(dir, 'repo', 'value.txt'), 'utf8')).toBe('v=1\n');
    // The judge's failure is part of the pick's story (told there), not a failure of the run.
    const show = formatRunDetails(loadRunFolder(r.outcome.dir));
    expect(show).toContain('instances: 4 (2 done, 0 failed, 2 attempts not picked, 0 skipped, 0 unfinished)');
    const summary = formatFinalSummary(foldEvents(log));
    expect(summary).toMatch(/^2 done, 2 not picked · /m);
    expect(summary).toMatch(/fix\.judge +failed .* no verdict, the verify rule picked: error: scripted provider/);
    expect(runSnapshot(loadRunFolder(r.outcome.dir).state, r.outcome.dir, undefined).counts).toMatchObject({
      done: 2,
      failed: 0,
      notPicked: 2,
    });
  });

  it('a picked attempt the merge train refuses (same line landed meanwhile) is repaired on the new tip and lands', async () => {
    // Attempt 3 ends only once task `other` has landed its change to the same line, so the pick
    // (attempt 2) lands after it and conflicts: it must be repaired, not fail the instance.
    const dir = project({
      verify: 'grep -q good value.txt',
      edits: [
        "printf 'bad one\\\\n' > value.txt",
        "printf 'good\\\\n' > value.txt",
        "until grep -q other REPO/value.txt; do sleep 0.05; done; printf 'bad three\\\\n' > value.txt",
      ],
      extraConvs: `  - match: "^Repair 1 of \\\\d[\\\\s\\\\S]*Attempt 2:"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'good,other\\\\n' > value.txt" } }]
      - text: "attempt 2 repaired"
  - match: "^Other: "
    turns:
      - tools: [{ name: bash, args: { command: "printf 'value=other\\\\n' > value.txt" } }]
      - text: "other done"
`,
    });
    const script = join(dir, 'script.yaml');
    writeFileSync(script, readFileSync(script, 'utf8').replace('REPO', join(dir, 'repo')));
    const recipe = join(dir, 'recipe.yaml');
    // sandbox: none lets attempt 3 look at the checkout outside its worktree.
    writeFileSync(
      recipe,
      `${readFileSync(recipe, 'utf8').replace('script: script.yaml\n', 'script: script.yaml\nsandbox: none\n')}  - id: other
    agent: editor
    cwd: repo
    isolation: worktree
    merge: apply
    prompt: "Other: set the value"
`,
    );
    const r = await runRecipeFile(recipe, { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    expect(r.outcome.status, JSON.stringify(ofType(log, 'train_step'))).toBe('succeeded');
    expect(ofType(log, 'attempt_pick')[0]?.picked).toBe('fix.attempt-2');
    const steps = ofType(log, 'train_step').filter((s) => s.key === 'fix.attempt-2');
    expect(steps.map((s) => s.phase)).toEqual(['conflict', 'repair', 'landing', 'landed']);
    // The repair prompt carries the attempt's handoff summary, as any repair's does (not its final reply).
    const summary = ofType(log, 'instance_done').find((e) => e.key === 'fix.attempt-2')?.summary;
    expect(summary?.trim()).toBeTruthy();
    expect(summary?.trim()).not.toBe('attempt 2 done');
    expect(steps.find((s) => s.phase === 'repair')?.prompt).toContain(
      `Summary of your earlier change:\n${summary!.trim()}`,
    );
    // The repair was a retry of the picked attempt that did not count against retries; it ran in a session of its own.
    expect(ofType(log, 'instance_retry').map((e) => [e.key, e.failure, e.uncharged])).toEqual([
      ['fix.attempt-2', 'patch_conflict', true],
    ]);
    expect(readFileSync(join(r.outcome.dir, 'sessions', 'fix.attempt-2.repair-1.jsonl'), 'utf8')).toContain(
      'attempt 2 repaired',
    );
    // One landing, logged once, ok; the checkout holds the repaired line.
    expect(ofType(log, 'attempt_landed').map((e) => [e.key, e.ok])).toEqual([['fix.attempt-2', true]]);
    expect(readFileSync(join(dir, 'repo', 'value.txt'), 'utf8')).toBe('good,other\n');
    expect(ofType(log, 'instance_done').some((e) => e.key === 'after')).toBe(true);
  });

  it('a resume after the pick was logged lands it once and runs no attempt again', async () => {
    const dir = project({
      verify: 'grep -q good value.txt',
      merge: 'patch',
      edits: [
        "printf 'bad\\\\n' > value.txt",
        "printf 'good\\\\n' > value.txt",
        "printf 'good\\\\nand more\\\\n' > value.txt",
      ],
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    // As a kill -9 right after the pick was logged would leave it: no landing, no dependant, no end.
    const file = join(r.outcome.dir, 'run.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const cut = lines.findIndex((l) => JSON.parse(l).type === 'attempt_pick');
    writeFileSync(file, `${lines.slice(0, cut + 1).join('\n')}\n`);
    const before = events(r.outcome.dir);
    expect(ofType(before, 'attempt_pick')[0]!.picked).toBe('fix.attempt-2');

    const again = await resumeRunDir(r.outcome.dir, { cwd: dir, runsDir: join(dir, 'runs') });
    if (!again.ok) throw new Error(JSON.stringify(again));
    expect(again.outcome.status).toBe('succeeded');
    const after = events(r.outcome.dir).slice(before.length);
    // No attempt started again, the pick was not made again, and the picked attempt landed once.
    expect(ofType(after, 'instance_start').map((e) => e.key)).toEqual(['after']);
    expect(ofType(after, 'attempt_pick')).toEqual([]);
    expect(ofType(after, 'attempt_landed').map((e) => [e.key, e.ok])).toEqual([['fix.attempt-2', true]]);
  });
});
