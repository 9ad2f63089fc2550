// Overlap prediction on resume, with real runs (the scripted provider on real worker threads, a
// real git repository, worktrees, the merge train): a run whose two instances both edited
// shared.txt in their worktrees and then failed. `orchestrate resume --dry-run` names the pair
// from their earlier work, says which instances are kept and which run again, and writes not a
// byte of the run folder; the resume itself, with `serialize: overlapping`, runs the two one after
// another (read from the order of the run log's events), where before it started both at once.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/run/run-events.js';
import { takeRunLease } from '../../src/run/run-lease.js';
import { previewResume, type ResumePreview, resumePreviewText } from '../../src/service/resume-preview.js';
import { prepareRun, startRun } from '../../src/service/start-run.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, events, gitInit, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const env = { PATH: process.env.PATH };
const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');

/** Each agent edits its own end of shared.txt, then its second turn is `second`. */
const script = (second: string) => `turns:
  - text: done
conversations:
  - match: "Edit the top"
    turns:
      - tools: [{ name: edit, args: { path: shared.txt, edits: [{ oldText: "line 1\\n", newText: "top\\n" }] } }]
      - ${second}
  - match: "Edit the bottom"
    turns:
      - tools: [{ name: edit, args: { path: shared.txt, edits: [{ oldText: "line 20\\n", newText: "bottom\\n" }] } }]
      - ${second}
`;
const FAIL = '{ error: "invalid_request_error: the request is malformed" }';

function project(): string {
  const dir = tempProject({
    'repo/shared.txt': `${lines}\n`,
    'repo/other.txt': 'other\n',
    'recipe.yaml': `name: overlap
provider: scripted
script: script.yaml
concurrency: 2
tasks:
  - id: edit
    for_each: [top, bottom]
    cwd: repo
    isolation: worktree
    merge: apply
    land: train
    serialize: overlapping
    retries: 0
    prompt: "Edit the \${{ item }} of shared.txt"
  - id: note
    cwd: repo
    writes: ["other.txt"]
    prompt: "Leave other.txt alone"
`,
    'script.yaml': script(FAIL),
  });
  gitInit(join(dir, 'repo'));
  return dir;
}

/** Every file under `dir` with its bytes (what a dry run must leave as it is). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(p, `${statSync(p).mtimeMs} ${readFileSync(p).toString('base64')}`);
    }
  };
  walk(dir);
  return out;
}

const runDirOf = (dir: string): string => {
  const ids = readdirSync(join(dir, 'runs'));
  expect(ids).toHaveLength(1);
  return join(dir, 'runs', ids[0]!);
};

/** The lifecycle of the edit instances in the last session, as `start:key` / `end:key`. */
function lastSessionOrder(log: RunEvent[]): string[] {
  const from = log.map((e) => e.type).lastIndexOf('run_resume');
  return log
    .slice(from)
    .flatMap((e) =>
      (e.type === 'instance_start' || e.type === 'instance_done' || e.type === 'instance_failed') && e.task === 'edit'
        ? [`${e.type === 'instance_start' ? 'start' : 'end'}:${e.key}`]
        : [],
    );
}

describe('resume: overlap prediction from earlier patches', { timeout: 180_000 }, () => {
  it('--dry-run names the pair whose earlier work touched the same file and writes nothing; the resume runs them one after another', async () => {
    const dir = project();
    const first = await runCli(['recipe.yaml', '--run-dir', 'runs'], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(1);
    const runDir = runDirOf(dir);
    const failed = events(runDir).filter((e) => e.type === 'instance_failed' && e.final);
    expect(failed.map((e) => (e as { key: string }).key).sort()).toEqual(['edit.bottom', 'edit.top']);

    const before = snapshot(runDir);
    const human = await runCli(['resume', runDirOf(dir), '--dry-run'], { cwd: dir, env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('kept (done, not run again): note');
    expect(human.stdout).toMatch(/edit\.top {2}\(failed\) {2}earlier work: repo\/shared\.txt/);
    expect(human.stdout).toContain(
      'edit.top and edit.bottom: their earlier work touched repo/shared.txt; they run one after another',
    );
    const json = await runCli(['resume', runDirOf(dir), '--dry-run', '--json'], { cwd: dir, env });
    expect(json.code, json.stderr).toBe(0);
    const preview = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(preview).toMatchObject({
      ok: true,
      dryRun: true,
      kept: [{ key: 'note', status: 'done' }],
      overlaps: [{ a: 'edit.top', b: 'edit.bottom', from: 'patches', files: ['repo/shared.txt'], how: 'serialized' }],
    });
    expect((preview.runs as { key: string }[]).map((r) => r.key).sort()).toEqual(['edit.bottom', 'edit.top']);
    expect((preview.spent as { tokens: number }).tokens).toBeGreaterThan(0);
    // Not a byte of the run folder changed (nor a file's time), and no session began.
    expect(snapshot(runDir)).toEqual(before);

    // The resume with a script whose second turns answer: the two run one after another.
    writeFileSync(join(dir, 'script.yaml'), script('{ text: done }'));
    const resumed = await runCli(['resume', runDir, '--reload-recipe'], { cwd: dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    const order = lastSessionOrder(events(runDir));
    expect(order).toHaveLength(4);
    const [a, b] = [
      order[0]!.slice('start:'.length),
      order[0]!.startsWith('start:edit.top') ? 'edit.bottom' : 'edit.top',
    ];
    expect(order).toEqual([`start:${a}`, `end:${a}`, `start:${b}`, `end:${b}`]);
    // Both landed through the train: the checkout holds the two ends.
    const shared = readFileSync(join(dir, 'repo', 'shared.txt'), 'utf8');
    expect(shared.startsWith('top\n')).toBe(true);
    expect(shared.endsWith('bottom\n')).toBe(true);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: join(dir, 'repo') }).toString()).toContain(
      'shared.txt',
    );
  });

  it('a run that is not there, and a folder that is not a run, are the usual errors (exit 2, no stack)', async () => {
    const dir = project();
    const missing = await runCli(['resume', 'nope', '--dry-run', '--run-dir', 'runs'], { cwd: dir, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no run "nope"');
    expect(missing.stderr).toContain('orchestrate runs lists them');
    const notRun = await runCli(['resume', join(dir, 'repo'), '--dry-run', '--run-dir', 'runs'], { cwd: dir, env });
    expect(notRun.code).toBe(2);
    expect(notRun.stderr).toContain(`${join(dir, 'repo')} is a folder but not a run folder`);
    expect(`${missing.stderr}${notRun.stderr}`).not.toMatch(/\n\s+at /);
  });

  it('a run interrupted before anything started: every instance runs, none kept; with its coordinator live the preview says a resume waits for it', async () => {
    const dir = project();
    const prepared = prepareRun({ recipe: 'recipe.yaml', runsDir: 'runs' }, { cwd: dir, env });
    if (!prepared.ok) throw new Error('the recipe loads');
    const stop = new AbortController();
    const result = await startRun(prepared, { cwd: dir, env, signal: stop.signal, onStore: () => stop.abort() });
    if (!result.ok) throw new Error(JSON.stringify(result));
    const r = await previewResume({ run: result.outcome.runId, runsDir: 'runs' }, { cwd: dir, env });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.preview.kept).toEqual([]);
    expect(r.preview.runs.map((x) => x.key).sort()).toEqual(['edit.bottom', 'edit.top', 'note']);
    expect(r.preview.overlaps).toEqual([]);
    expect(r.preview.runningNow).toBeUndefined();
    const held = takeRunLease(result.outcome.dir, result.outcome.runId);
    if (!held.ok) throw new Error(held.message);
    try {
      const live = await previewResume({ run: result.outcome.runId, runsDir: 'runs' }, { cwd: dir, env });
      expect(live.ok && live.preview.runningNow).toContain(`pid ${process.pid}`);
    } finally {
      await held.lease.release();
    }
  });
  it("words a stopped run's cut-off instances as interrupted (not running) and counts tokens as the other views do", () => {
    const preview: ResumePreview = {
      runId: 'r1',
      dir: '/runs/r1',
      status: 'interrupted',
      kept: [{ key: 'a', status: 'done' }],
      runs: [
        { key: 'b', was: 'running', earlierFiles: [] },
        { key: 'c', was: 'retrying', earlierFiles: [] },
        { key: 'd', was: 'failed', earlierFiles: [] },
        { key: 'e', was: 'not started', earlierFiles: [] },
      ],
      spent: { usd: 0.5, tokens: 1_234_567 },
      budget: { tokens: 2_000_000 },
      overlaps: [],
      retryProblems: [],
    };
    const text = resumePreviewText(preview);
    // It said "b  (running)" of a run nobody holds, and "1234567 tokens".
    expect(text).toContain('    b  (interrupted)\n');
    expect(text).toContain('    c  (interrupted before its retry)\n');
    expect(text).toContain('    d  (failed)\n');
    expect(text).toContain('    e  (not started)\n');
    expect(text).toContain('spent so far: $0.5000, 1,234,567 tokens of a budget of 2,000,000 tokens');
    // While a coordinator holds the run, running is what it is.
    expect(resumePreviewText({ ...preview, runningNow: 'pid 1 on host h' })).toContain('    b  (running)\n');
  });
});
