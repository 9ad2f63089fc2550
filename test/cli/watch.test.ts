// `orchestrate watch` from a second process: a run goes on in the background (a child process
// without a terminal, the scripted provider), and watch, in a tmux pane of 80x24 with NO_COLOR,
// shows it, steers, cancels and retries its instances over the run's real control socket. A run
// that has ended opens read-only; without a terminal watch prints the log lines until the end.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/display/terminal-text.js';
import { writeDriveRecipe } from '../display/fixtures/drive-recipe.js';
import { hasTmux, TmuxScreens } from '../display/tmux-screen.js';
import { runCli } from './run-cli.js';
import { runFolderName } from '../helpers/run-folder.js';
import { CLI_NODE_ARGS, CLI_SHELL } from '../helpers/cli-entry.js';

const ROOT = resolve(import.meta.dirname, '../..');
const user = spawnSync('id', ['-un'], { encoding: 'utf8' }).stdout.trim();
const screens = new TmuxScreens();
const children: ChildProcess[] = [];

/** `orchestrate <args>` as a child process without a terminal. */
function orchestrate(args: string[]): { child: ChildProcess; out: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, out: () => out, exit };
}

// The bound only turns a hang into a failure: a loaded machine takes long to start the CLI under tsx.
async function waitUntil<T>(get: () => T | undefined | false, what: string, timeoutMs = 90_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The run folder once its coordinator listens on the control socket. */
const liveRunDir = (runs: string) =>
  waitUntil(() => {
    const id = runFolderName(runs);
    return id && existsSync(join(runs, id, 'control.sock')) ? join(runs, id) : undefined;
  }, 'the run to listen on its control socket');

const controls = (runDir: string) =>
  readFileSync(join(runDir, 'run.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"type":"control"'))
    .map((l) => JSON.parse(l) as { action: string; instance?: string; by: string; ok: boolean; text?: string });

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

describe.skipIf(!hasTmux)('orchestrate watch in a second terminal (tmux, 80x24, NO_COLOR)', () => {
  beforeAll(() => screens.open());
  afterAll(() => screens.close());

  it('shows the live run, steers, cancels and retries through the control socket; q quits; an ended run opens read-only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-'));
    const recipe = writeDriveRecipe(join(dir, 'recipe'), { items: ['alpha', 'beta', 'gamma'] });
    const runs = join(dir, 'runs');
    const run = orchestrate([recipe, '--run-dir', runs]);
    const runDir = await liveRunDir(runs);
    const runId = runDir.split('/').pop()!;

    const pane = 'watch';
    const watch = `env NO_COLOR=1 ${CLI_SHELL} watch ${runId.slice(0, 17)} --run-dir ${runs}; echo exit=$?; sleep 600`;
    screens.start(pane, watch, { cwd: ROOT });
    try {
      let s = await screens.waitFor(
        pane,
        (l) => l.filter((x) => /▸ apply\.(alpha|beta|gamma)/.test(x)).length === 3,
        'three running rows',
      );
      expect(s[0]).toContain(`run ${runId}`);
      expect(s.at(-1)).toMatch(/↑↓ select · Enter open · s steer · c cancel · r retry · q quit/);
      for (const l of s) expect(displayWidth(l)).toBeLessThanOrEqual(80);

      // Open beta's conversation (read from its session file) and steer it.
      screens.keys(pane, 'Down', 'Enter');
      await screens.waitForLine(pane, /^apply\.beta · running/);
      await screens.waitForLine(pane, /→ ls\(\{"path":"\."\}\)/);
      screens.keys(pane, 's');
      screens.text(pane, 'from the other terminal');
      await screens.waitForLine(pane, /^steer apply\.beta> from the other terminal_$/);
      screens.keys(pane, 'Enter');
      await screens.waitForLine(pane, /^steer apply\.beta: delivered/);
      const steer = controls(runDir).find((c) => c.action === 'steer');
      expect(steer).toMatchObject({ instance: 'apply.beta', text: 'from the other terminal', ok: true });
      expect(steer!.by).toMatch(new RegExp(`^watch \\(pid \\d+, ${user}\\)$`));
      // The agent got it: a message from the user in its session.
      await waitUntil(
        () =>
          readFileSync(join(runDir, 'sessions', 'apply.beta.jsonl'), 'utf8').includes(
            '"from":"user","text":"from the other terminal"',
          ),
        'the steer in the session',
      );

      // Back, gamma, cancel: the run's own log says cancelled, and watch shows it.
      screens.keys(pane, 'Escape');
      await screens.waitForLine(pane, /^> ▸ apply\.beta/);
      screens.keys(pane, 'Down', 'c');
      s = await screens.waitForLine(pane, /^> ⊘ apply\.gamma\s+cancelled/);
      expect(s[1]).toMatch(/1 cancelled/);
      screens.keys(pane, 'r');
      await screens.waitForLine(pane, /^> ▸ apply\.gamma\s+#2 /);
      expect(controls(runDir).map((c) => `${c.action} ${c.instance} ${c.ok}`)).toEqual([
        'steer apply.beta true',
        'cancel apply.gamma true',
        'retry apply.gamma true',
      ]);
      expect(new Set(controls(runDir).map((c) => c.by)).size).toBe(1);

      screens.keys(pane, 'q');
      await screens.waitForLine(pane, /^exit=0$/);
    } finally {
      screens.kill(pane);
    }

    // The run is interrupted; watching it now is read-only.
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(130);
    screens.start(pane, watch, { cwd: ROOT });
    try {
      let s = await screens.waitForLine(pane, /^read-only: the run has ended \(interrupted\)/);
      expect(s[0]).toMatch(/· interrupted$/);
      screens.keys(pane, 'c');
      s = await screens.waitFor(
        pane,
        (l) => /^read-only: the run has ended \(interrupted\)$/.test(l.at(-1) ?? ''),
        'the refusal',
      );
      expect(s.find((l) => l.startsWith('> '))).toMatch(/^> · apply\.alpha\s+interrupted/);
      expect(s.find((l) => /review/.test(l))).toMatch(/never started/);
      screens.keys(pane, 'Enter');
      s = await screens.waitForLine(pane, /^apply\.alpha · interrupted · run /);
      expect(s.some((l) => /→ ls\(/.test(l))).toBe(true); // its conversation, from the session file
      screens.keys(pane, 'Escape', 'q');
      await screens.waitForLine(pane, /^exit=0$/);
    } finally {
      screens.kill(pane);
    }
    expect(controls(runDir)).toHaveLength(3); // the read-only watch sent nothing
  }, 240_000);
});

describe('orchestrate watch without a terminal', () => {
  it('prints the log lines of a live run as they come, history first, and ends with the run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-plain-'));
    const recipe = writeDriveRecipe(join(dir, 'recipe'), { items: ['alpha', 'beta'], turns: 8, turnDelayMs: 150 });
    const runs = join(dir, 'runs');
    const run = orchestrate([recipe, '--run-dir', runs]);
    const runDir = await liveRunDir(runs);
    const watch = orchestrate(['watch', runDir]);
    const [runCode, watchCode] = await Promise.all([run.exit, watch.exit]);
    expect(runCode).toBe(0);
    expect(watchCode).toBe(0);
    const lines = watch.out().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d run \S+ started: drive/);
    expect(lines.some((l) => /apply\.alpha: done in/.test(l))).toBe(true);
    expect(lines.some((l) => /review: done in/.test(l))).toBe(true);
    expect(lines.filter((l) => l.trim() !== '').at(-1)).toMatch(/run \S+ succeeded in/);
  }, 180_000);

  it('an unknown run is a usage error that lists the runs there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-none-'));
    const r = await runCli(['watch', 'nope', '--run-dir', dir], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no run "nope"/);
  }, 90_000);
});
