// `orchestrate cancel` and `orchestrate steer` from a second process against a run in a first one
// (issue 21): real CLI processes, the scripted model, agents held in a bash call that waits for a
// file the test creates. Exit codes: 0 accepted, 1 refused, 2 not live (or bad usage).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../orchestrator/helpers/run-fixtures.js';
import { readRunLog } from '../../src/run/run-store.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { runFolderName } from '../helpers/run-folder.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';
import { bashAgentRecipe, conversationsScript, holdUntil, writeRecipeAndScript } from '../helpers/held-agents.js';

const ROOT = join(import.meta.dirname, '..', '..');
const made: string[] = [];
const releases: string[] = [];
afterAll(() => {
  for (const r of releases) writeFileSync(r, 'x');
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `orchestrate ...` as its own process; `dir` stands for the project (relative paths in args resolve there). */
function cli(args: string[], dir: string): { done: Promise<Done>; output: () => string } {
  const abs = args.map((a) => (a === 'runs' || a === 'recipe.yaml' ? join(dir, a) : a));
  // tsx resolves from the working folder: run from the repository, every path absolute.
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, ...abs], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return {
    done: new Promise((res, rej) => {
      child.on('error', rej);
      child.on('close', (code) => res({ code, stdout, stderr }));
    }),
    output: () => `exit ${child.exitCode ?? 'not yet'}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
  };
}

function log(runDir: string): RunEvent[] {
  return existsSync(join(runDir, 'run.jsonl')) ? readRunLog(join(runDir, 'run.jsonl')).events : [];
}

/** A project whose `slow` and `other` agents each wait in bash for their release file. */
function project(): { dir: string; releaseSlow: string; releaseOther: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orch-ctl-cli-'));
  made.push(dir);
  const releaseSlow = join(dir, 'release-slow');
  const releaseOther = join(dir, 'release-other');
  releases.push(releaseSlow, releaseOther);
  writeRecipeAndScript(
    dir,
    bashAgentRecipe(
      'ctl-cli',
      3,
      `  - id: slow
    agent: w
    prompt: "SLOW task"
    on_failure: continue
  - id: other
    agent: w
    prompt: "OTHER task"
  - id: after
    needs: [slow]
    agent: w
    prompt: "AFTER task"
`,
    ),
    conversationsScript({
      SLOW: [{ bash: holdUntil(releaseSlow) }, { text: 'slow finished' }],
      OTHER: [{ bash: holdUntil(releaseOther) }, { text: 'other finished' }],
      AFTER: [{ text: 'after finished' }],
    }),
  );
  return { dir, releaseSlow, releaseOther };
}

/** Starts `orchestrate recipe.yaml` and waits until both holding agents are inside their bash call. */
async function startHeldRun(dir: string): Promise<{ run: Promise<Done>; runDir: string; runId: string }> {
  const { done: run, output } = cli(['recipe.yaml', '--run-dir', 'runs'], dir);
  const runsDir = join(dir, 'runs');
  // Generous limits: a CLI start and two agents' first turns on a loaded 2-core machine (once
  // over 60 s with the whole distributed suite and two busy loops beside it).
  const runId = await until('the run folder', () => runFolderName(runsDir), 120_000);
  const runDir = join(runsDir, runId);
  for (const key of ['slow', 'other']) {
    await until(
      `${key} inside its bash call`,
      () =>
        log(runDir).some((e) => e.type === 'agent_event' && e.key === key && e.event.type === 'tool_execution_start'),
      120_000,
    ).catch((err: Error) => {
      // Say what the run did, so a failure on a CI machine can be understood from its output.
      const seen = log(runDir).map((e) =>
        e.type === 'agent_event' ? `${e.key}:${e.event.type}` : 'key' in e ? `${e.type}:${String(e.key)}` : e.type,
      );
      throw new Error(`${err.message}\nrun process: ${output()}\nrun.jsonl events: ${seen.join(' ')}`);
    });
  }
  return { run, runDir, runId };
}

describe('orchestrate cancel / steer from a second process', () => {
  it('steers and cancels instances of a live run (exit 0), refuses with the reason (exit 1), and says a finished run is not live (exit 2)', async () => {
    const { dir, releaseOther, releaseSlow } = project();
    const { run, runDir, runId } = await startHeldRun(dir);

    const steer = await cli(
      ['steer', runId, '--instance', 'slow', 'Also', 'mention PINEAPPLE.', '--run-dir', 'runs'],
      dir,
    ).done;
    expect(steer.stderr).toBe('');
    expect(steer.code).toBe(0);
    expect(steer.stdout).toMatch(/^delivered to slow/);

    const typo = await cli(['cancel', runId, '--instance', 'slwo', '--run-dir', 'runs'], dir).done;
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('no instance "slwo"; did you mean "slow"?');

    // Two --instance flags reached the coordinator as a cancel of the whole run; now nothing is sent.
    const twice = await cli(['cancel', runId, '--instance', 'slow', '--instance', 'other', '--run-dir', 'runs'], dir)
      .done;
    expect(twice.stderr).toContain(
      'orchestrate: --instance was given more than once (slow, other); give it once per command',
    );
    expect(twice.code).toBe(2);

    const cancel = await cli(['cancel', runId.slice(0, 12), '--instance', 'slow', '--run-dir', 'runs'], dir).done;
    expect(cancel.code).toBe(0);
    // The reply comes once the attempt has ended: the log says so already, no waiting needed.
    expect(cancel.stdout).toMatch(/^cancelled slow: its agent stopped with its session kept; the run goes on/);
    expect(log(runDir).some((e) => e.type === 'instance_failed' && e.key === 'slow' && e.failure === 'cancelled')).toBe(
      true,
    );
    // ...and so does `show --json` while the run goes on (issue 38: it listed slow as running).
    const live = await cli(['show', runId, '--run-dir', 'runs', '--json'], dir).done;
    const liveJson = JSON.parse(live.stdout) as { status: string; instances: { key: string; status: string }[] };
    expect(liveJson.status).toBe('running');
    expect(liveJson.instances.find((i) => i.key === 'slow')?.status).toBe('cancelled');

    const late = await cli(['steer', runId, '--instance', 'slow', 'too late', '--run-dir', 'runs'], dir).done;
    expect(late.code).toBe(1);
    expect(late.stderr).toBe('orchestrate: slow is not running (cancelled); only a running agent can be steered\n');

    // on_failure: continue: `after` still runs; `other` finishes once released.
    await until('after done', () => log(runDir).some((e) => e.type === 'instance_done' && e.key === 'after'));
    writeFileSync(releaseOther, 'go');
    const ran = await run;
    expect(ran.code).toBe(1); // an instance ended cancelled, none failed: the run is partial (exit 1)
    // The summary says why it is partial: which instance a user cancelled, and who; resume runs it again.
    expect(ran.stdout).toMatch(/^run \S+ \(ctl-cli\): partial in /);
    expect(ran.stderr).toMatch(/ slow: cancelled by cancel \(pid \d+.*\) after /);
    expect(ran.stderr).toMatch(/ run \S+ partial in /);
    expect(ran.stdout).toMatch(/\npartial: nothing failed; cancelled by a user: slow \(by cancel \(pid \d+/);
    expect(ran.stdout).toMatch(/\nresume: orchestrate resume \S+ --retry slow \(runs the cancelled instances again\)/);
    expect(JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8'))).toMatchObject({ status: 'partial' });
    const ended = await cli(['show', runId, '--run-dir', 'runs', '--json'], dir).done;
    expect(JSON.parse(ended.stdout)).toMatchObject({ status: 'partial' });

    const events = log(runDir).filter((e): e is Extract<RunEvent, { type: 'control' }> => e.type === 'control');
    expect(events.map((e) => [e.action, e.instance, e.ok])).toEqual([
      ['steer', 'slow', true],
      ['cancel', 'slwo', false],
      ['cancel', 'slow', true],
      ['steer', 'slow', false],
    ]);
    expect(events[0]!.by).toMatch(/^steer \(pid \d+(, user \S+)?\)$/);
    expect(events[0]!.text).toBe('Also mention PINEAPPLE.');
    expect(events[2]!.by).toMatch(/^cancel \(pid \d+(, user \S+)?\)$/);

    // `show` says who cancelled it and lists the actions on it.
    const show = await cli(['show', runId, '--run-dir', 'runs', '--no-color'], dir).done;
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/slow\s+cancelled/);
    expect(show.stdout).toMatch(/\n\s+cancelled by cancel \(pid \d+/);
    expect(show.stdout).toMatch(/control: steer slow "Also mention PINEAPPLE\." by steer \(pid \d+.*: ok/);
    expect(show.stdout).toMatch(/control: cancel slwo by cancel \(pid \d+.*: refused, .*did you mean/);
    expect(show.stdout).toContain('1 cancelled');
    expect(show.stdout).toMatch(/\nstatus: partial · /);
    expect(show.stdout).toMatch(/\npartial: nothing failed; cancelled by a user: slow \(by cancel \(pid \d+/);
    // The HTML report names who cancelled it and lists every action.
    const report = await cli(['report', runId, '--run-dir', 'runs'], dir).done;
    expect(report.code).toBe(0);
    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html).toMatch(/cancelled by cancel \(pid \d+/);
    expect(html).toContain('Actions on the live run');
    expect(html).toContain('<span class="status partial">partial</span>');
    expect(html).toMatch(/partial: nothing failed; cancelled by a user: slow \(by cancel \(pid \d+/);
    expect(html).toMatch(/control: steer slow &quot;Also mention PINEAPPLE\.&quot; by steer \(pid \d+/);

    const after = await cli(['cancel', runId, '--instance', 'other', '--run-dir', 'runs'], dir).done;
    expect(after.code).toBe(2);
    expect(after.stderr).toMatch(
      new RegExp(
        `^orchestrate: run ${runId} is not running \\(finished partial at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); nothing to cancel\\n$`,
      ),
    );

    // A resume keeps the cancel; `resume --retry slow` runs it again, and the run succeeds.
    writeFileSync(releaseSlow, 'go');
    const resumed = await cli(['resume', runId, '--retry', 'slow', '--run-dir', 'runs'], dir).done;
    expect(resumed.stderr).not.toMatch(/error/i);
    expect(resumed.code).toBe(0);
    const retry = log(runDir)
      .filter((e) => e.type === 'control')
      .at(-1);
    expect(retry).toMatchObject({
      action: 'retry',
      instance: 'slow',
      ok: true,
      by: expect.stringMatching(/^resume \(pid \d+/),
    });
  }, 240_000);

  it('cancel without --instance interrupts the whole run (its process exits 130, resumable)', async () => {
    const { dir } = project();
    const { run, runDir, runId } = await startHeldRun(dir);
    const cancel = await cli(['cancel', runId, '--run-dir', 'runs'], dir).done;
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toContain(`orchestrate resume ${runId}`);
    const ran = await run;
    expect(ran.code).toBe(130);
    const end = log(runDir).find((e) => e.type === 'run_end');
    expect(end).toMatchObject({ status: 'interrupted' });
    expect(existsSync(join(runDir, 'control.sock'))).toBe(false);
  }, 240_000);

  it('a run that no coordinator holds, an unknown run and an empty message are exit 2 with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-ctl-cli-'));
    made.push(dir);
    const runDir = join(dir, 'runs', 'dead-run');
    mkdirSync(runDir, { recursive: true });
    const start = {
      v: 1,
      ts: Date.now(),
      runId: 'dead-run',
      type: 'run_start',
      recipe: 'recipe.yaml',
      name: 'x',
      recipeHash: 'h',
      inputs: {},
      plan: [],
    };
    writeFileSync(join(runDir, 'run.jsonl'), `${JSON.stringify(start)}\n`);
    const dead = await cli(['cancel', 'dead-run', '--instance', 'a', '--run-dir', 'runs'], dir).done;
    expect(dead.code).toBe(2);
    expect(dead.stderr).toBe(
      'orchestrate: run dead-run is not running: no coordinator holds it (it stopped without finishing; `orchestrate resume dead-run` continues it); nothing to cancel\n',
    );
    const unknown = await cli(['steer', 'nope', '--instance', 'a', 'hi', '--run-dir', 'runs'], dir).done;
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^orchestrate: .*nope/);
    const empty = await cli(['steer', 'dead-run', '--instance', 'a', ' ', '--run-dir', 'runs'], dir).done;
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('the steering message is empty');
    const noInstance = await cli(['steer', 'dead-run', 'hi', '--run-dir', 'runs'], dir).done;
    expect(noInstance.code).toBe(2);
    expect(noInstance.stderr).toMatch(/instance/);
  }, 120_000);
});
