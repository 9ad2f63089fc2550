// `orchestrate watch` shows the reply an agent is still writing (issue 21): a run goes on in the
// background (a child process, the scripted provider writing its reply slowly with
// stream_delay_ms), watch in a tmux pane of 80x24 with NO_COLOR opens the instance's conversation
// and, through `peek` on the run's control socket, shows the text before the session file has the
// message; once it has, the message replaces it. Bash calls that wait for files the test creates
// hold the agent where the test needs it. Every wait is on the screen or a file.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasTmux, TmuxScreens } from '../display/tmux-screen.js';
import { runFolderName } from '../helpers/run-folder.js';
import { CLI_NODE_ARGS, CLI_SHELL } from '../helpers/cli-entry.js';

const ROOT = resolve(import.meta.dirname, '../..');
const screens = new TmuxScreens();
const children: ChildProcess[] = [];
const releases: string[] = [];

afterEach(() => {
  for (const r of releases.splice(0)) writeFileSync(r, 'x');
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

// A hang bound only: a loaded machine takes long to start the CLI under tsx.
async function waitUntil<T>(get: () => T | undefined | false, what: string, timeoutMs = 90_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** 60 words, 24 characters a chunk every 150 ms: about 2.7 s of writing. */
const TEXT = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

const hold = (file: string) => {
  releases.push(file);
  return JSON.stringify(`while [ ! -f '${file}' ]; do sleep 0.05; done; echo released`);
};

/** The text under "assistant (writing…)" on a screen, unwrapped; undefined when none is shown. */
function writingOn(lines: string[]): string | undefined {
  const at = lines.indexOf('assistant (writing…)');
  if (at < 0) return undefined;
  const body: string[] = [];
  for (const l of lines.slice(at + 1, -1)) {
    if (!l.startsWith('  ')) break;
    body.push(l.trim());
  }
  return body.join(' ');
}

describe.skipIf(!hasTmux)('orchestrate watch: the reply being written (tmux, 80x24, NO_COLOR)', () => {
  beforeAll(() => screens.open());
  afterAll(() => screens.close());

  it('the open conversation shows the text while the model writes it, then the finished message in its place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-writing-'));
    const project = join(dir, 'recipe');
    mkdirSync(project);
    const start = join(project, 'start');
    const finish = join(project, 'finish');
    writeFileSync(
      join(project, 'recipe.yaml'),
      `name: writing
provider: scripted
script: script.yaml
agents:
  w: { tools: [bash] }
tasks:
  - id: poem
    agent: w
    prompt: "Write the poem"
`,
    );
    writeFileSync(
      join(project, 'script.yaml'),
      `turns:
  - tools: [{ name: bash, args: { command: ${hold(start)} } }]
  - stream_delay_ms: 150
    text: ${JSON.stringify(TEXT)}
    tools: [{ name: bash, args: { command: ${hold(finish)} } }]
  - text: "the end"
`,
    );
    const runs = join(dir, 'runs');
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, join(project, 'recipe.yaml'), '--run-dir', runs], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: 'ignore',
    });
    children.push(child);
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const runDir = await waitUntil(() => {
      const id = runFolderName(runs);
      return id && existsSync(join(runs, id, 'control.sock')) ? join(runs, id) : undefined;
    }, 'the run to listen on its control socket');
    const session = join(runDir, 'sessions', 'poem.jsonl');
    const sessionHasText = () => existsSync(session) && readFileSync(session, 'utf8').includes(TEXT);

    const pane = 'writing';
    screens.start(pane, `env NO_COLOR=1 ${CLI_SHELL} watch ${runDir}; echo exit=$?; sleep 600`, {
      cwd: ROOT,
    });
    try {
      await screens.waitForLine(pane, /^> ▸ poem/);
      screens.keys(pane, 'Enter');
      await screens.waitForLine(pane, /^poem · running/);
      await screens.waitForLine(pane, /→ bash\(/);
      // The model starts writing only now, with the conversation open.
      writeFileSync(start, 'x');

      const first = await screens.waitFor(pane, (l) => (writingOn(l) ?? '').length > 0, 'the text being written');
      const shown = writingOn(first)!;
      // Still being written: the session file does not have the message yet (read after the screen).
      expect(sessionHasText()).toBe(false);
      expect(TEXT.startsWith(shown), shown).toBe(true);
      expect(shown.length).toBeLessThan(TEXT.length);
      // It grows on the screen as the model writes.
      const more = await screens.waitFor(pane, (l) => (writingOn(l) ?? '').length > shown.length, 'more of the text');
      expect(TEXT.startsWith(writingOn(more)!)).toBe(true);
      expect(sessionHasText()).toBe(false);

      // Complete: the message from the session file takes its place.
      await waitUntil(sessionHasText, 'the message in the session file');
      const done = await screens.waitFor(
        pane,
        (l) => writingOn(l) === undefined && l.some((x) => x.includes('word59')),
        'the finished message',
      );
      expect(done.filter((l) => /^assistant \(/.test(l)).length).toBeGreaterThan(0);
      expect(done.some((l) => l.includes('writing…'))).toBe(false);

      writeFileSync(finish, 'x');
      expect(await exit).toBe(0);
      await screens.waitFor(
        pane,
        (l) => l.some((x) => /read-only/.test(x)),
        'watch to go read-only once the run ended',
      );
      screens.keys(pane, 'Escape');
      await screens.waitForLine(pane, /^> ✓ poem/);
      screens.keys(pane, 'q');
      await screens.waitForLine(pane, /^exit=0$/);
    } finally {
      screens.kill(pane);
    }
  }, 240_000);
});
