// Driving a live run through its control socket (issue 21): a real coordinator, real worker
// threads and the scripted model; agents are held inside a bash call that waits for a file the
// test creates, so an instance stays running exactly as long as the test needs. Every wait is on
// run.jsonl or the file system, never on the clock.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRunControl } from '../../src/run/run-control-client.js';
import { RunControlServer } from '../../src/orchestrator/control/run-control-server.js';
import { CONTROL_PATH_NAME, controlSocketPath } from '../../src/run/run-control-socket.js';
import { resumeRunDir, runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { RunControl } from '../../src/run/run-control.js';
import type { RunEvent } from '../../src/run/run-events.js';
import type { ResultFile } from '../../src/run/run-state.js';
import { foldEvents, getInstance } from '../../src/run/run-fold.js';
import { bashAgentRecipe, conversationsScript, holdUntil, writeRecipeAndScript } from '../helpers/held-agents.js';
import { cleanupTempDirs, events, ofType, sessionLines, tempProject, until } from './helpers/run-fixtures.js';

const releases: string[] = [];
afterAll(() => {
  // Never leave a bash loop behind, whatever a failed test did.
  for (const r of releases) writeFileSync(r, 'x');
  cleanupTempDirs();
});

/** A bash call that holds the agent until `file` exists (created after all tests if a test did not). */
function hold(file: string): string {
  releases.push(file);
  return holdUntil(file);
}

function logOf(runDir: string): RunEvent[] {
  return existsSync(join(runDir, 'run.jsonl')) ? events(runDir) : [];
}

/** Waits for an event of `type` about `key` (and passing `extra`). */
function waitEvent<T extends RunEvent['type']>(
  runDir: string,
  type: T,
  key: string,
  extra: (e: Extract<RunEvent, { type: T }>) => boolean = () => true,
) {
  return until(`${type} of ${key}`, () =>
    ofType(logOf(runDir), type).find((e) => 'key' in e && e.key === key && extra(e)),
  );
}

/** Waits until `key`'s agent is inside its (holding) bash call. */
function waitInTool(runDir: string, key: string) {
  return waitEvent(runDir, 'agent_event', key, (e) => e.event.type === 'tool_execution_start');
}

function startRun(dir: string, runId: string, runsDir = join(dir, 'runs')) {
  const runDir = join(runsDir, runId);
  const done = runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir, runId }).then((r) => {
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.outcome;
  });
  return { runDir, done };
}

function result(runDir: string): ResultFile {
  return JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as ResultFile;
}

/** A recipe of one holding task `slow` and a dependant `after` (and optionally more tasks). */
function holdingProject(slowFailure: 'fail' | 'continue', releaseName = 'release-slow') {
  const dir = tempProject({});
  const release = join(dir, releaseName);
  writeRecipeAndScript(
    dir,
    bashAgentRecipe(
      'ctl',
      3,
      `  - id: slow
    agent: w
    prompt: "SLOW task"
    on_failure: ${slowFailure}
  - id: after
    needs: [slow]
    agent: w
    prompt: "AFTER task"
`,
    ),
    conversationsScript({
      SLOW: [{ bash: hold(release) }, { text: 'slow finished' }],
      AFTER: [{ text: 'after finished' }],
    }),
  );
  return { dir, release };
}

describe('driving a live run over its control socket', () => {
  it('cancel ends a running instance `cancelled`, logs who did it, and its dependant runs under on_failure: continue', async () => {
    const { dir } = holdingProject('continue');
    const { runDir, done } = startRun(dir, 'cancel-continue');
    await waitInTool(runDir, 'slow');
    const socket = join(runDir, 'control.sock');
    // Owner-only: no other user may drive the run.
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    const control = connectRunControl(runDir);
    const reply = await control.send({ action: 'cancel', instance: 'slow', by: 'test (pid 1)' });
    expect(reply).toEqual({
      ok: true,
      message: 'cancelled slow: its agent stopped with its session kept; the run goes on',
    });
    // The reply comes once the attempt has ended: the log already says cancelled (issue 38).
    expect(getInstance(foldEvents(events(runDir)), 'slow', 'slow')?.status).toBe('cancelled');
    const out = await done;
    const log = events(runDir);
    const ctl = ofType(log, 'control');
    expect(ctl).toEqual([
      expect.objectContaining({ action: 'cancel', instance: 'slow', by: 'test (pid 1)', ok: true }),
    ]);
    const failed = ofType(log, 'instance_failed').filter((e) => e.key === 'slow');
    expect(failed).toEqual([
      expect.objectContaining({ failure: 'cancelled', final: true, error: 'cancelled by test (pid 1)' }),
    ]);
    // Never retried, and the control event comes before its effect.
    expect(ofType(log, 'instance_retry')).toEqual([]);
    expect(log.indexOf(ctl[0]!)).toBeLessThan(log.indexOf(failed[0]!));
    expect(ofType(log, 'instance_done').map((e) => e.key)).toEqual(['after']);
    const r = result(runDir);
    expect(r.instances.find((i) => i.id === 'slow')).toMatchObject({ status: 'cancelled', failure: 'cancelled' });
    expect(r.instances.find((i) => i.id === 'after')?.status).toBe('done');
    // Cancelled by a user, nothing failed: partial (exit 1 from the CLI), in the log and result.json too.
    expect(out.status).toBe('partial');
    expect(r.status).toBe('partial');
    expect(ofType(log, 'run_end')[0]?.status).toBe('partial');
    const plan = readFileSync(out.planFile, 'utf8');
    expect(plan).toContain('#### slow — cancelled\n');
    expect(plan).toContain('- slow was cancelled by test (pid 1)');
    // The socket goes with the run; a client then says the run is not live.
    expect(existsSync(socket)).toBe(false);
    const late = await control.send({ action: 'cancel', instance: 'after' });
    expect(late).toEqual({
      ok: false,
      code: 'not_live',
      error: expect.stringMatching(
        /^run cancel-continue is not live: no coordinator listens on .*control\.sock \(ENOENT\)/,
      ),
    });
  }, 120_000);

  it('under on_failure: fail a cancelled instance skips its dependant; refused actions are logged too', async () => {
    const { dir } = holdingProject('fail');
    const { runDir, done } = startRun(dir, 'cancel-fail');
    await waitInTool(runDir, 'slow');
    const control = connectRunControl(runDir);
    const unknown = await control.send({ action: 'cancel', instance: 'slwo', by: 't' });
    expect(unknown).toEqual({
      ok: false,
      code: 'refused',
      error: expect.stringContaining('no instance "slwo"; did you mean "slow"?'),
    });
    const notRunning = await control.send({ action: 'retry', instance: 'slow', by: 't' });
    expect(notRunning).toEqual({
      ok: false,
      code: 'refused',
      error: 'slow is running; only a failed or cancelled instance can be retried',
    });
    const waiting = await control.send({ action: 'steer', instance: 'after', text: 'hi', by: 't' });
    expect(waiting).toEqual({
      ok: false,
      code: 'refused',
      error: expect.stringContaining('task after has not started yet'),
    });
    expect(await control.send({ action: 'cancel', instance: 'slow', by: 't' })).toMatchObject({ ok: true });
    const out = await done;
    const log = events(runDir);
    expect(ofType(log, 'control').map((e) => [e.action, e.instance, e.ok])).toEqual([
      ['cancel', 'slwo', false],
      ['retry', 'slow', false],
      ['steer', 'after', false],
      ['cancel', 'slow', true],
    ]);
    expect(ofType(log, 'instance_skipped').map((e) => e.key)).toEqual(['after']);
    // Only the user's cancel (and what needed it) is missing: partial, not failed.
    expect(out.status).toBe('partial');
  }, 120_000);

  it('steer delivers a message into the running agent: its session holds it and the next model call reads it', async () => {
    const { dir, release } = holdingProject('fail');
    const { runDir, done } = startRun(dir, 'steer');
    await waitInTool(runDir, 'slow');
    const control = connectRunControl(runDir);
    const reply = await control.send({
      action: 'steer',
      instance: 'slow',
      text: 'Also mention PINEAPPLE.',
      by: 'steer (pid 2, user t)',
    });
    expect(reply).toEqual({ ok: true, message: expect.stringContaining('delivered to slow') });
    writeFileSync(release, 'go');
    const out = await done;
    expect(out.status).toBe('succeeded');
    const lines = sessionLines(join(runDir, 'sessions', 'slow.jsonl')) as {
      type?: string;
      message?: { role?: string; from?: string; text?: string; content?: unknown };
    }[];
    const peerAt = lines.findIndex((l) => l.message?.role === 'peer' && l.message.text === 'Also mention PINEAPPLE.');
    expect(peerAt).toBeGreaterThan(0);
    expect(lines[peerAt]!.message!.from).toBe('user');
    // The steering message came after the tool result and before the final reply.
    const finalAt = lines.findIndex(
      (l) => l.message?.role === 'assistant' && JSON.stringify(l.message.content).includes('slow finished'),
    );
    expect(finalAt).toBeGreaterThan(peerAt);
    const ctl = ofType(events(runDir), 'control');
    expect(ctl).toEqual([
      expect.objectContaining({
        action: 'steer',
        instance: 'slow',
        text: 'Also mention PINEAPPLE.',
        by: 'steer (pid 2, user t)',
        ok: true,
      }),
    ]);
  }, 120_000);

  it('retry runs a failed and a cancelled instance again from their sessions; the run then succeeds', async () => {
    const dir = tempProject({});
    const r1 = join(dir, 'release-1');
    const r2 = join(dir, 'release-2');
    writeRecipeAndScript(
      dir,
      bashAgentRecipe(
        'retry',
        3,
        `  - id: flaky
    agent: w
    prompt: "FLAKY task"
    max_turns: 1
    on_failure: continue
  - id: hold1
    agent: w
    prompt: "HOLD1 task"
    on_failure: continue
  - id: hold2
    agent: w
    prompt: "HOLD2 task"
`,
      ),
      conversationsScript({
        FLAKY: [{ bash: 'echo one' }, { text: 'flaky finished' }],
        HOLD1: [{ bash: hold(r1) }, { text: 'hold1 finished' }],
        HOLD2: [{ bash: hold(r2) }, { text: 'hold2 finished' }],
      }),
    );
    const { runDir, done } = startRun(dir, 'retry');
    const control = connectRunControl(runDir);
    // flaky uses up its one turn on a tool call and fails (max_turns is not retried by itself).
    await waitEvent(runDir, 'instance_failed', 'flaky', (e) => e.final && e.failure === 'max_turns');
    expect(await control.send({ action: 'retry', instance: 'flaky', by: 't' })).toEqual({
      ok: true,
      message: 'retrying flaky: attempt 2 continues from its session',
    });
    const flakyDone = await waitEvent(runDir, 'instance_done', 'flaky');
    expect(flakyDone.attempt).toBe(2);
    // hold1: cancelled inside its bash call, then retried; it continues from its session.
    await waitInTool(runDir, 'hold1');
    expect(await control.send({ action: 'cancel', instance: 'hold1', by: 't' })).toMatchObject({ ok: true });
    await waitEvent(runDir, 'instance_failed', 'hold1', (e) => e.failure === 'cancelled');
    expect(await control.send({ action: 'cancel', instance: 'hold1', by: 't' })).toEqual({
      ok: false,
      code: 'refused',
      error: 'hold1 has already ended (cancelled); nothing to cancel',
    });
    expect(await control.send({ action: 'retry', instance: 'hold1', by: 't' })).toMatchObject({ ok: true });
    writeFileSync(r1, 'go');
    const hold1Done = await waitEvent(runDir, 'instance_done', 'hold1');
    expect(hold1Done.attempt).toBe(2);
    writeFileSync(r2, 'go');
    const out = await done;
    expect(out.status).toBe('succeeded');
    const r = result(runDir);
    expect(r.instances.map((i) => [i.id, i.status, i.attempts])).toEqual([
      ['flaky', 'done', 2],
      ['hold1', 'done', 2],
      ['hold2', 'done', 1],
    ]);
    expect(
      ofType(events(runDir), 'instance_start')
        .filter((e) => e.key !== 'hold2')
        .every((e) => e.attempt === 1 || e.resumedFromLeaf === true),
    ).toBe(true);
  }, 120_000);

  it('a resume keeps a cancelled instance cancelled; resume with retry runs it again from its session', async () => {
    const { dir, release } = holdingProject('continue');
    const runsDir = join(dir, 'runs');
    const { runDir, done } = startRun(dir, 'resume-cancelled');
    await waitInTool(runDir, 'slow');
    expect(await connectRunControl(runDir).send({ action: 'cancel', instance: 'slow', by: 't' })).toMatchObject({
      ok: true,
    });
    expect((await done).status).toBe('partial');
    const startsBefore = ofType(events(runDir), 'instance_start').length;
    const again = await resumeRunDir(runDir, { runsDir });
    if (!again.ok) throw new Error(JSON.stringify(again));
    expect(again.outcome.status).toBe('partial');
    expect(ofType(events(runDir), 'instance_start').length).toBe(startsBefore);
    expect(result(runDir).instances.find((i) => i.id === 'slow')?.status).toBe('cancelled');
    writeFileSync(release, 'go');
    const retried = await resumeRunDir(runDir, { runsDir, retry: ['slow', 'after', 'nope'], retryBy: 'resume (test)' });
    if (!retried.ok) throw new Error(JSON.stringify(retried));
    expect(retried.outcome.status).toBe('succeeded');
    const log = events(runDir);
    expect(
      ofType(log, 'control')
        .slice(-3)
        .map((e) => [e.instance, e.ok, e.message]),
    ).toEqual([
      ['slow', true, 'slow runs again with this resume'],
      ['after', false, 'after is done; nothing to retry'],
      ['nope', false, 'run resume-cancelled has no instance "nope" in its log'],
    ]);
    expect(
      ofType(log, 'instance_start')
        .filter((e) => e.key === 'slow')
        .at(-1),
    ).toMatchObject({ attempt: 2, resumedFromLeaf: true });
    expect(result(runDir).instances.find((i) => i.id === 'slow')).toMatchObject({ status: 'done', attempts: 2 });
  }, 120_000);

  it('a queued instance is cancelled without ever starting', async () => {
    const dir = tempProject({});
    const ra = join(dir, 'release-a');
    const rb = join(dir, 'release-b');
    writeRecipeAndScript(
      dir,
      bashAgentRecipe(
        'queued',
        1,
        `  - { id: a, agent: w, prompt: "HOLDA task", on_failure: continue }
  - { id: b, agent: w, prompt: "HOLDB task", on_failure: continue }
`,
      ),
      conversationsScript({
        HOLDA: [{ bash: hold(ra) }, { text: 'a finished' }],
        HOLDB: [{ bash: hold(rb) }, { text: 'b finished' }],
      }),
    );
    const { runDir, done } = startRun(dir, 'queued');
    // concurrency 1: one of them runs, the other waits in the queue.
    const first = await until(
      'one agent in its bash call',
      () => ofType(logOf(runDir), 'agent_event').find((e) => e.event.type === 'tool_execution_start')?.key,
    );
    const waiting = first === 'a' ? 'b' : 'a';
    const reply = await connectRunControl(runDir).send({ action: 'cancel', instance: waiting, by: 't' });
    expect(reply).toEqual({ ok: true, message: `cancelled ${waiting} (not started); the run goes on` });
    writeFileSync(ra, 'go');
    writeFileSync(rb, 'go');
    expect((await done).status).toBe('partial');
    const log = events(runDir);
    expect(ofType(log, 'instance_start').map((e) => e.key)).toEqual([first]);
    expect(ofType(log, 'instance_failed')).toEqual([
      expect.objectContaining({ key: waiting, failure: 'cancelled', final: true }),
    ]);
    expect(result(runDir).instances.find((i) => i.id === waiting)).toMatchObject({ status: 'cancelled', attempts: 0 });
  }, 120_000);

  it('a pair is steered through its worker and cancelled as a whole (both agents stop)', async () => {
    const dir = tempProject({});
    const release = join(dir, 'release-pair');
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: pair
provider: scripted
script: script.yaml
agents:
  planner: { system: "You are the PLANNER of this pair.", tools: [read] }
  worker: { system: "You are the WORKER of this pair.", tools: [bash] }
tasks:
  - id: build
    pair: { planner: planner, worker: worker, max_rounds: 3 }
    prompt: "Build it."
`,
    );
    writeFileSync(
      join(dir, 'script.yaml'),
      conversationsScript({
        'You are the PLANNER': [{ text: 'APPROVED' }],
        'You are the WORKER': [{ bash: hold(release) }, { text: 'built' }],
      }),
    );
    const { runDir, done } = startRun(dir, 'pair');
    await waitInTool(runDir, 'build@worker');
    const control = connectRunControl(runDir);
    expect(await control.send({ action: 'steer', instance: 'build', text: 'hurry', by: 't' })).toEqual({
      ok: true,
      message: expect.stringContaining('delivered to build@worker'),
    });
    expect(await control.send({ action: 'cancel', instance: 'build', by: 't' })).toEqual({
      ok: true,
      message: 'cancelled build: its agent stopped with its session kept; the run goes on',
    });
    const out = await done;
    expect(out.status).toBe('partial');
    expect(ofType(events(runDir), 'instance_failed')).toEqual([
      expect.objectContaining({ key: 'build', failure: 'cancelled', final: true }),
    ]);
    expect(result(runDir).instances[0]).toMatchObject({ id: 'build', status: 'cancelled' });
  }, 120_000);

  it('a running run: step is cancelled alone: its command stops, the run goes on', async () => {
    const dir = tempProject({});
    const started = join(dir, 'started');
    const release = join(dir, 'release-step');
    releases.push(release);
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: step
provider: scripted
script: script.yaml
agents:
  w: {}
tasks:
  - id: step
    run: "touch '${started}'; while [ ! -f '${release}' ]; do sleep 0.05; done"
    on_failure: continue
  - id: next
    needs: [step]
    agent: w
    prompt: "NEXT task"
`,
    );
    writeFileSync(join(dir, 'script.yaml'), 'turns:\n  - text: "next finished"\n');
    const { runDir, done } = startRun(dir, 'step');
    await until('the step running', () => existsSync(started));
    const control = connectRunControl(runDir);
    expect(await control.send({ action: 'steer', instance: 'step', text: 'hi', by: 't' })).toEqual({
      ok: false,
      code: 'refused',
      error: 'step is a run: step, not an agent; it cannot be steered',
    });
    expect(await control.send({ action: 'cancel', instance: 'step', by: 't' })).toEqual({
      ok: true,
      message: 'cancelled step: its command was stopped; the run goes on',
    });
    const out = await done;
    expect(out.status).toBe('partial');
    expect(ofType(events(runDir), 'instance_failed')).toEqual([
      expect.objectContaining({ key: 'step', failure: 'cancelled', error: 'cancelled by t' }),
    ]);
    expect(result(runDir).instances.map((i) => [i.id, i.status])).toEqual([
      ['step', 'cancelled'],
      ['next', 'done'],
    ]);
  }, 120_000);

  it('in-process control (onControl) works without a socket (controlSocket: false)', async () => {
    const { dir } = holdingProject('continue');
    const runsDir = join(dir, 'runs');
    let control: RunControl | undefined;
    const done = runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { runsDir, runId: 'inproc', controlSocket: false, onControl: (c) => (control = c) },
    );
    const runDir = join(runsDir, 'inproc');
    await waitInTool(runDir, 'slow');
    expect(existsSync(join(runDir, 'control.sock'))).toBe(false);
    expect(await control!.send({ action: 'cancel', instance: 'slow', by: 'view (t)' })).toMatchObject({ ok: true });
    const r = await done;
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(ofType(events(runDir), 'control')).toEqual([
      expect.objectContaining({ action: 'cancel', by: 'view (t)', ok: true }),
    ]);
    // Once the run has ended the same control refuses, and says how to go on.
    expect(await control!.send({ action: 'retry', instance: 'slow' })).toEqual({
      ok: false,
      error:
        'run inproc has ended; failed instances run again with: orchestrate resume inproc (a cancelled one: orchestrate resume inproc --retry slow)',
    });
  }, 120_000);

  it('cancel_run interrupts the run like Ctrl-C (sessions kept, resumable)', async () => {
    const { dir } = holdingProject('fail');
    const { runDir, done } = startRun(dir, 'cancel-run');
    await waitInTool(runDir, 'slow');
    const reply = await connectRunControl(runDir).send({ action: 'cancel_run', by: 't' });
    expect(reply).toEqual({ ok: true, message: expect.stringContaining('orchestrate resume cancel-run') });
    const out = await done;
    expect(out.status).toBe('interrupted');
    expect(ofType(events(runDir), 'control')).toEqual([
      expect.objectContaining({ action: 'cancel_run', ok: true, by: 't' }),
    ]);
    expect(ofType(events(runDir), 'control')[0]).not.toHaveProperty('instance');
  }, 120_000);

  it('a malformed request gets an error reply and the coordinator carries on', async () => {
    const { dir, release } = holdingProject('fail');
    const { runDir, done } = startRun(dir, 'malformed');
    await waitInTool(runDir, 'slow');
    const replies = await new Promise<string[]>((resolve, reject) => {
      const s = createConnection(join(runDir, 'control.sock'));
      let buf = '';
      s.setEncoding('utf8');
      s.on('error', reject);
      s.on('connect', () =>
        s.write('not json\n{"action":"explode","instance":"slow"}\n{"action":"steer","instance":"slow"}\n'),
      );
      s.on('data', (c: string) => {
        buf += c;
        const lines = buf.split('\n').filter(Boolean);
        if (lines.length === 3) {
          s.destroy();
          resolve(lines);
        }
      });
    });
    const parsed = replies.map((l) => JSON.parse(l) as { ok: boolean; error: string });
    expect(parsed.every((p) => p.ok === false)).toBe(true);
    expect(parsed[0]!.error).toBe('malformed request: not a JSON line');
    expect(parsed[1]!.error).toMatch(/^malformed request \(action\)/);
    expect(parsed[2]!.error).toMatch(/^malformed request \(text\)/);
    // Still live and answering.
    expect(
      await connectRunControl(runDir).send({ action: 'steer', instance: 'slow', text: 'still there?' }),
    ).toMatchObject({ ok: true });
    writeFileSync(release, 'go');
    expect((await done).status).toBe('succeeded');
  }, 120_000);

  it('a run folder whose socket path would be too long listens in a private temp folder named by control.path', async () => {
    const { dir, release } = holdingProject('fail');
    const runsDir = join(dir, 'r'.repeat(60), 's'.repeat(60));
    const { runDir, done } = startRun(dir, 'long', runsDir);
    await waitInTool(runDir, 'slow');
    expect(Buffer.byteLength(join(runDir, 'control.sock'))).toBeGreaterThan(107);
    expect(existsSync(join(runDir, 'control.sock'))).toBe(false);
    const path = controlSocketPath(runDir);
    expect(path).not.toBe(join(runDir, 'control.sock'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(statSync(join(runDir, CONTROL_PATH_NAME)).mode & 0o077).toBe(0);
    expect(await connectRunControl(runDir).send({ action: 'steer', instance: 'slow', text: 'hello' })).toMatchObject({
      ok: true,
    });
    writeFileSync(release, 'go');
    await done;
    expect(existsSync(join(runDir, CONTROL_PATH_NAME))).toBe(false);
    expect(existsSync(join(path, '..'))).toBe(false);
  }, 120_000);
});

describe('the control server on its own', () => {
  it('removes a stale socket file left by a dead coordinator, and a client gets a reply within its time limit or a clear error', async () => {
    const runDir = join(tempProject({}), 'run-x');
    mkdirSync(runDir);
    writeFileSync(join(runDir, 'control.sock'), 'stale');
    let release: () => void = () => {};
    const stuck = new Promise<void>((r) => (release = r));
    const server = await RunControlServer.start({
      runDir,
      handle: async (a) => {
        if (a.action === 'cancel_run') await stuck;
        return { ok: true, message: `did ${a.action}` };
      },
    });
    try {
      expect(statSync(join(runDir, 'control.sock')).isSocket()).toBe(true);
      expect(await connectRunControl(runDir).send({ action: 'retry', instance: 'a' })).toEqual({
        ok: true,
        message: 'did retry',
      });
      const slow = await connectRunControl(runDir, { timeoutMs: 200 }).send({ action: 'cancel_run' });
      expect(slow).toEqual({
        ok: false,
        code: 'timeout',
        error: expect.stringMatching(/^run run-x did not answer within 0s/),
      });
    } finally {
      release();
      await server.close();
    }
    expect(existsSync(join(runDir, 'control.sock'))).toBe(false);
    expect(tmpdir()).toBeTruthy();
  });
});
