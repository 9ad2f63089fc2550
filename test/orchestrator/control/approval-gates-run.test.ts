// Approval gates in a real run (issue 29): a real coordinator, worker threads and the scripted
// model. A gated task waits at its gate with nothing queued and no model call while an
// independent branch goes on; approve (over the control socket) runs it and its dependant, reject
// skips both; a timeout follows on_timeout; an interrupted run answered offline (under the lease)
// obeys the answer on resume, and a deadline that passed while nobody ran answers at once.
// Every wait is on run.jsonl, never on the clock.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHtmlReport } from '../../../src/display/html-report.js';
import { formatRunDetails } from '../../../src/display/run-details-text.js';
import { loadRunFolder } from '../../../src/display/run-folder.js';
import { runJson } from '../../../src/display/run-json.js';
import { answerApprovalOffline } from '../../../src/orchestrator/control/approval-offline.js';
import { resumeRunDir, runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { connectRunControl } from '../../../src/run/run-control-client.js';
import { foldEvents, getInstance } from '../../../src/run/run-fold.js';
import { listRuns } from '../../../src/run/run-store.js';
import { formatRunsTable } from '../../../src/display/runs-table.js';
import type { RunEvent } from '../../../src/run/run-events.js';
import type { ResultFile } from '../../../src/run/run-state.js';
import { cleanupTempDirs, logOf, ofType, tempProject, until } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

/** Model calls and queueing of one instance, as the log records them. */
const touched = (log: RunEvent[], key: string) =>
  log.filter(
    (e) =>
      (e.type === 'call_usage' || e.type === 'instance_queued' || e.type === 'instance_start') &&
      'key' in e &&
      e.key === key,
  ).length;

function project(gate: string, extraTasks = ''): string {
  const dir = tempProject({
    'recipe.yaml': `name: gates
provider: scripted
script: script.yaml
concurrency: 3
tasks:
  - id: first
    prompt: "FIRST task"
  - id: gated
    needs: [first]
    prompt: "GATED task"
    approve: ${gate}
  - id: after
    needs: [gated]
    prompt: "AFTER task"
  - id: side
    prompt: "SIDE task"
${extraTasks}`,
    'script.yaml': `conversations:
  - match: "FIRST"
    turns: [{ text: "first done" }]
  - match: "GATED"
    turns: [{ text: "gated done" }]
  - match: "AFTER"
    turns: [{ text: "after done" }]
  - match: "SIDE"
    turns: [{ text: "side done" }]
  - match: "OTHER"
    turns: [{ text: "other done" }]
`,
  });
  return dir;
}

function start(dir: string, runId: string, signal?: AbortSignal) {
  const runsDir = join(dir, 'runs');
  const runDir = join(runsDir, runId);
  const done = runRecipeFile(
    join(dir, 'recipe.yaml'),
    { cwd: dir },
    { runsDir, runId, ...(signal ? { signal } : {}) },
  ).then((r) => {
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.outcome;
  });
  return { runDir, runsDir, done };
}

const statuses = (runDir: string) =>
  Object.fromEntries(
    (JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as ResultFile).instances.map((i) => [
      i.id,
      i.status,
    ]),
  );

/** Waits until the gate of `key` is requested and the independent branch has finished. */
async function waitingAtGate(runDir: string, key = 'gated') {
  await until('the gate request', () => ofType(logOf(runDir), 'approval_requested').find((e) => e.key === key));
  await until('the side branch to finish', () => ofType(logOf(runDir), 'instance_done').some((e) => e.key === 'side'));
}

describe('approval gates in a run', () => {
  it('waits spending nothing while the rest goes on; approve over the socket runs it, logged with who, how and the note', async () => {
    const dir = project('{ prompt: "Ship it?" }');
    const { runDir, done } = start(dir, 'gate-approve');
    await waitingAtGate(runDir);
    // The views fold it as waiting, with the prompt.
    const fold = foldEvents(logOf(runDir));
    const gated = getInstance(fold, 'gated', 'gated')!;
    expect(gated.status).toBe('waiting');
    expect(gated.approval).toMatchObject({ state: 'waiting', prompt: 'Ship it?', onTimeout: 'reject' });
    expect(gated.activity).toBe('waiting for approval: Ship it?');
    expect(touched(logOf(runDir), 'gated')).toBe(0);

    const control = connectRunControl(runDir);
    const wrong = await control.send({ action: 'approve', task: 'gatd', by: 'alice' });
    expect(wrong).toEqual({ ok: false, code: 'refused', error: expect.stringContaining('did you mean "gated"?') });
    const notGated = await control.send({ action: 'approve', task: 'after', by: 'alice' });
    expect(notGated).toEqual({
      ok: false,
      code: 'refused',
      error: 'task after has no approval gate (approve:); gated tasks: gated',
    });
    expect(touched(logOf(runDir), 'gated')).toBe(0);
    const reply = await control.send({ action: 'approve', task: 'gated', by: 'alice', via: 'cli', note: 'looks good' });
    expect(reply).toEqual({ ok: true, message: 'approved gated: queued now' });
    const out = await done;
    expect(out.status).toBe('succeeded');
    expect(statuses(runDir)).toMatchObject({ first: 'done', gated: 'done', after: 'done', side: 'done' });
    const log = logOf(runDir);
    expect(ofType(log, 'approval_given')).toEqual([
      expect.objectContaining({
        task: 'gated',
        key: 'gated',
        decision: 'approved',
        by: 'alice',
        via: 'cli',
        note: 'looks good',
      }),
    ]);
    // The refused answers are logged like any refused action.
    expect(ofType(log, 'control').map((c) => [c.action, c.ok])).toEqual([
      ['approve', false],
      ['approve', false],
    ]);
    const given = log.findIndex((e) => e.type === 'approval_given');
    expect(log.findIndex((e) => e.type === 'instance_queued' && e.key === 'gated')).toBeGreaterThan(given);
    expect(getInstance(foldEvents(log), 'gated', 'gated')!.approval).toMatchObject({ state: 'approved', by: 'alice' });
    // show, show --json and the report say who approved.
    const folder = loadRunFolder(runDir);
    expect(formatRunDetails(folder)).toMatch(/\n {4}approval: approved by alice via cli at \S+: looks good\n/);
    const json = runJson(folder) as { instances: { key: string; approval?: { state: string; by: string } }[] };
    expect(json.instances.find((i) => i.key === 'gated')?.approval).toMatchObject({ state: 'approved', by: 'alice' });
    expect(buildHtmlReport(folder)).toContain('approved by alice via cli at ');
  }, 120_000);

  it('reject skips the task and its dependant; the run goes on and a second answer is refused', async () => {
    const dir = project('{ prompt: "Ship it?" }');
    const { runDir, done } = start(dir, 'gate-reject');
    await waitingAtGate(runDir);
    const control = connectRunControl(runDir);
    const reply = await control.send({ action: 'reject', task: 'gated', by: 'bob', note: 'not now' });
    expect(reply).toEqual({ ok: true, message: 'rejected gated: skipped, with the tasks that need it' });
    const out = await done;
    expect(out.status).toBe('succeeded');
    expect(statuses(runDir)).toMatchObject({ first: 'done', gated: 'skipped', after: 'skipped', side: 'done' });
    const log = logOf(runDir);
    expect(touched(log, 'gated')).toBe(0);
    expect(touched(log, 'after')).toBe(0);
    const skipped = ofType(log, 'instance_skipped');
    expect(skipped.find((e) => e.key === 'gated')?.reason).toMatch(
      /^not approved: rejected by bob via cli at .*: not now$/,
    );
    expect(skipped.find((e) => e.key === 'after')?.reason).toBe('gated was skipped');
  }, 120_000);

  it('a timeout answers with on_timeout: approve runs the task, reject (the default) skips it', async () => {
    const dir = project(
      '{ timeout: 300ms, on_timeout: approve }',
      `  - id: other
    needs: [first]
    prompt: "OTHER task"
    approve: { prompt: "Other?", timeout: 300ms }
`,
    );
    const { runDir, done } = start(dir, 'gate-timeout');
    const out = await done;
    expect(out.status).toBe('succeeded');
    expect(statuses(runDir)).toMatchObject({ gated: 'done', after: 'done', other: 'skipped' });
    const given = ofType(logOf(runDir), 'approval_given');
    expect(given.map((g) => [g.key, g.decision, g.by, g.via])).toEqual(
      expect.arrayContaining([
        ['gated', 'approved', 'timeout', 'timeout'],
        ['other', 'rejected', 'timeout', 'timeout'],
      ]),
    );
    // The deadline is absolute (about the request's time plus the timeout) and the answer came no earlier.
    for (const req of ofType(logOf(runDir), 'approval_requested')) {
      expect(req.deadline! - req.ts).toBeGreaterThan(200);
      expect(given.find((g) => g.key === req.key)!.ts).toBeGreaterThanOrEqual(req.deadline!);
    }
  }, 120_000);

  it('interrupted while waiting: answered offline under the lease, the resume obeys; a passed deadline answers at once', async () => {
    const dir = project(
      '{ prompt: "Ship it?" }',
      `  - id: other
    needs: [first]
    prompt: "OTHER task"
    approve: { prompt: "Other?", timeout: 3s, on_timeout: approve }
`,
    );
    const stop = new AbortController();
    const { runDir, runsDir, done } = start(dir, 'gate-offline', stop.signal);
    // Interrupted as soon as both gates wait (well before the other's deadline, whatever the load).
    const otherReq = await until('both gates', () => {
      const reqs = ofType(logOf(runDir), 'approval_requested');
      return reqs.some((e) => e.key === 'gated') && reqs.find((e) => e.key === 'other');
    });
    stop.abort();
    expect((await done).status).toBe('interrupted');
    expect(ofType(logOf(runDir), 'approval_given').filter((g) => g.key === 'other')).toEqual([]);
    // orchestrate runs: the run stopped at both gates.
    expect(formatRunsTable(listRuns(runsDir))).toMatch(
      /gate-offline .* interrupted · waiting: (gated, other|other, gated)/,
    );

    const bad = await answerApprovalOffline(runDir, { action: 'approve', task: 'after' }, 'carol');
    expect(bad).toEqual({ ok: false, error: 'task after has no approval gate (approve:); gated tasks: gated, other' });
    const ok = await answerApprovalOffline(runDir, { action: 'approve', task: 'gated', note: 'go' }, 'carol');
    expect(ok).toMatchObject({ ok: true, message: expect.stringContaining('orchestrate resume gate-offline') });
    const again = await answerApprovalOffline(runDir, { action: 'reject', task: 'gated' }, 'dave');
    expect(again).toEqual({
      ok: false,
      error: expect.stringMatching(/^gated was already approved by carol via cli \(offline\)/),
    });
    expect(touched(logOf(runDir), 'gated')).toBe(0);

    // The other gate's deadline passes while nobody runs the run.
    await until('the other deadline to pass', () => Date.now() > otherReq.deadline! + 10, 15_000);
    const resumed = await resumeRunDir(runDir, { cwd: dir, runsDir });
    if (!resumed.ok) throw new Error(JSON.stringify(resumed));
    expect(resumed.outcome.status).toBe('succeeded');
    expect(statuses(runDir)).toMatchObject({ gated: 'done', after: 'done', other: 'done', first: 'done' });
    const log = logOf(runDir);
    expect(ofType(log, 'approval_given').map((g) => [g.key, g.decision, g.by, g.offline ?? false])).toEqual([
      ['gated', 'approved', 'carol', true],
      ['other', 'approved', 'timeout', false],
    ]);
    // The resume asked again with the deadline it had, not a new one.
    const otherReqs = ofType(log, 'approval_requested').filter((e) => e.key === 'other');
    expect(otherReqs.map((r) => r.deadline)).toEqual([otherReq.deadline, otherReq.deadline]);
    // first was not run again.
    expect(ofType(log, 'instance_start').filter((e) => e.key === 'first')).toHaveLength(1);
  }, 120_000);
});
