// The run view you can drive, in a real pseudo-terminal: tmux runs `orchestrate <recipe>` (the
// scripted provider, instances that stay busy) in an 80x24 pane with NO_COLOR=1, and the test
// types keys and waits on what the screen shows. Actions go through the run's real control socket.
// The three tests run at the same time (#43): each has its own pane, project and run on the file's
// tmux server, and each waits only on its own pane and run folder.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/display/terminal-text.js';
import { writeDriveRecipe } from './fixtures/drive-recipe.js';
import { hasTmux, TmuxScreens } from './tmux-screen.js';
import { runFolderName } from '../helpers/run-folder.js';
import { CLI_SHELL } from '../helpers/cli-entry.js';

const ROOT = resolve(import.meta.dirname, '../..');
if (!hasTmux) console.warn('run-view-tty: skipped because tmux is not installed (apt-get install tmux)');

const screens = new TmuxScreens();
const orchestrate = (args: string) => `env NO_COLOR=1 ${CLI_SHELL} ${args}`;
const user = (() => {
  try {
    return spawnSync('id', ['-un'], { encoding: 'utf8' }).stdout.trim();
  } catch {
    return '';
  }
})();

function controlEvents(
  runsDir: string,
): { action: string; instance?: string; by: string; ok: boolean; text?: string }[] {
  const run = runFolderName(runsDir);
  if (!run) return [];
  return readFileSync(join(runsDir, run, 'run.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"type":"control"'))
    .map((l) => JSON.parse(l));
}

function expectFits(lines: string[], rows = 24): void {
  expect(lines.length).toBeLessThanOrEqual(rows);
  for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(80);
}

describe.skipIf(!hasTmux)('run view under a pseudo-terminal (tmux, 80x24, NO_COLOR)', { concurrent: true }, () => {
  beforeAll(() => screens.open());
  afterAll(() => screens.close());

  it('open an instance and follow it live, steer it, cancel another, retry it; every action is a control event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-view-'));
    // 2000 slow turns: the agents are still at work whenever the test acts, however slow the
    // machine (the test ends them with Ctrl-C).
    const recipe = writeDriveRecipe(join(dir, 'recipe'), { items: ['alpha', 'beta', 'gamma'], turns: 2000 });
    const runs = join(dir, 'runs');
    const pane = 'drive';
    screens.start(pane, `${orchestrate(`${recipe} --run-dir ${runs}`)}; echo exit=$?; sleep 600`, { cwd: ROOT });
    try {
      // All three at work; the first row is selected.
      let s = await screens.waitFor(
        pane,
        (l) => l.filter((x) => /▸ apply\.(alpha|beta|gamma)/.test(x)).length === 3,
        'three running rows',
      );
      expect(s.find((l) => l.startsWith('> '))).toMatch(/^> ▸ apply\.alpha/);
      expect(s.some((l) => /↑↓ select · Enter open · s steer · c cancel · r retry/.test(l))).toBe(true);
      expectFits(s);

      // Enter on beta: its conversation, growing as the session file grows.
      screens.keys(pane, 'Down', 'Enter');
      s = await screens.waitForLine(pane, /^apply\.beta · running/);
      s = await screens.waitForLine(pane, /→ ls\(\{"path":"\."\}\)/);
      const tokensOf = (lines: string[]) => lines.filter((l) => /^assistant \(/.test(l)).join('|');
      const before = tokensOf(s);
      await screens.waitFor(
        pane,
        (l) => tokensOf(l) !== before && tokensOf(l) !== '',
        'the conversation to move on live',
      );
      expectFits(screens.capture(pane));

      // s: the prompt, typed text, Enter: the agent gets it (a message from the user in its
      // session) and the conversation shows who steered.
      screens.keys(pane, 's');
      screens.text(pane, 'please focus on the tests');
      await screens.waitForLine(pane, /^steer apply\.beta> please focus on the tests_$/);
      screens.keys(pane, 'Enter');
      await screens.waitForLine(pane, /^steer apply\.beta: delivered/);
      expect(controlEvents(runs).find((c) => c.action === 'steer')).toMatchObject({
        instance: 'apply.beta',
        text: 'please focus on the tests',
        ok: true,
        by: `view (${user})`,
      });
      // In the conversation: who steered (the control event) and the message the agent got. New
      // turns keep coming, so page from the top (Home, PgDn: the page stays put while it grows).
      screens.keys(pane, 'Home');
      await screens.waitForLine(pane, / {2}\d+ more below$/);
      // Where a page ends depends on how far the agents got by then, so the control line, the
      // message's heading and its text may fall on different pages: each is looked for page by page.
      const steerLine = new RegExp(
        `^⚑ \\d\\d:\\d\\d:\\d\\d steer: "please focus on the tests" by view \\(${user}\\): ok`,
      );
      const found = { steer: false, heading: false, message: false };
      const steerShown = (l: string[]): boolean => {
        if (l.some((x) => steerLine.test(x))) found.steer = true;
        const heading = l.indexOf('message from user');
        const text = l.indexOf('  please focus on the tests');
        // The text right under its heading, or at the top of the page after the heading's.
        if (text >= 0 && (heading >= 0 ? heading === text - 1 : found.heading)) found.message = true;
        if (heading >= 0) found.heading = true;
        return found.steer && found.message;
      };
      for (let page = 0; page < 40 && !steerShown(screens.capture(pane)); page++) {
        const top = screens.capture(pane)[1];
        screens.keys(pane, 'PageDown');
        await screens.waitFor(pane, (l) => l[1] !== top || steerShown(l), 'the next page');
      }
      s = screens.capture(pane);
      expect(steerShown(s), s.join('\n')).toBe(true);
      expectFits(s);
      screens.keys(pane, 'End');
      await screens.waitFor(pane, (l) => !/more below/.test(l.at(-1) ?? ''), 'following the end again');

      // Esc back; gamma; c: cancelled, the others keep running.
      screens.keys(pane, 'Escape');
      await screens.waitForLine(pane, /^> ▸ apply\.beta/);
      screens.keys(pane, 'Down', 'c');
      s = await screens.waitForLine(pane, /^> ⊘ apply\.gamma\s+cancelled/);
      expect(s[1]).toMatch(/2 running · 1 queued · 1 cancelled/);
      expect(s.filter((l) => /▸ apply\.(alpha|beta)/.test(l))).toHaveLength(2);
      expectFits(s);

      // r: gamma runs again (attempt 2, from its session).
      screens.keys(pane, 'r');
      s = await screens.waitForLine(pane, /^> ▸ apply\.gamma\s+#2 /);
      expect(s.some((l) => /^retry apply\.gamma: /.test(l))).toBe(true);
      // r on a running one is refused by the view itself, with the reason.
      screens.keys(pane, 'r');
      await screens.waitForLine(pane, /^retry: only a failed or cancelled instance; apply\.gamma is running/);

      const actions = controlEvents(runs).map((c) => `${c.action} ${c.instance} ${c.by} ${c.ok}`);
      expect(actions).toEqual([
        `steer apply.beta view (${user}) true`,
        `cancel apply.gamma view (${user}) true`,
        `retry apply.gamma view (${user}) true`,
      ]);

      // Ctrl-C still interrupts the run (raw mode turns it into a key; the view sends SIGINT).
      screens.keys(pane, 'C-c');
      await screens.waitForLine(pane, /^exit=130$/, 60_000);
      s = screens.capture(pane);
      expect(s.join('\n')).toMatch(/interrupted/);
    } finally {
      screens.kill(pane);
    }
  }, 300_000);

  it('as a background job (&) it runs and shows without taking the keyboard; fg gives it the keys; Ctrl-Z suspends it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-view-jobs-'));
    // 2000 slow turns: the agents are still at work whenever the test acts, however slow the
    // machine (the test ends them with Ctrl-C).
    const recipe = writeDriveRecipe(join(dir, 'recipe'), { items: ['alpha', 'beta', 'gamma'], turns: 2000 });
    const runs = join(dir, 'runs');
    const pidFile = join(dir, 'pid');
    const pane = 'jobs';
    screens.start(pane, "env PS1='$ ' bash --norc --noprofile -i", { cwd: ROOT });
    const state = () =>
      spawnSync('ps', ['-o', 'stat=', '-p', readFileSync(pidFile, 'utf8').trim()], { encoding: 'utf8' }).stdout.trim();
    const eventsLogged = () => {
      const run = runFolderName(runs);
      return run ? readFileSync(join(runs, run, 'run.jsonl'), 'utf8').split('\n').length : 0;
    };
    try {
      await screens.waitForLine(pane, /^\$\s*$/);
      screens.text(pane, `${orchestrate(`${recipe} --run-dir ${runs}`)} & echo $! > ${pidFile}`);
      screens.keys(pane, 'Enter');
      await screens.waitFor(
        pane,
        (l) => l.filter((x) => /▸ apply\.(alpha|beta|gamma)/.test(x)).length === 3,
        'the view of the background job',
      );
      // It goes on working in the background: not stopped for touching the terminal.
      const before = eventsLogged();
      await waitUntil(() => eventsLogged() > before + 30, 'the background run to go on');
      expect(state()).not.toMatch(/T/);

      // fg: the keys drive it (fg of a running job sends no signal; the view notices in a moment,
      // so press until the selection moves, waiting for the screen between presses).
      // The label of the selected row of the newest frame (the lowest: older frames, drawn while
      // the shell wrote its prompt and job lines, may still be above it).
      const selected = () =>
        /^> . (\S+)/.exec(
          screens
            .capture(pane)
            .filter((x) => x.startsWith('> '))
            .at(-1) ?? '',
        )?.[1] ?? '';
      const pressUntilMoved = async (key: string, what: string) => {
        const from = selected();
        const start = Date.now();
        while (selected() === from) {
          if (Date.now() - start > 90_000)
            throw new Error(`timed out waiting for ${what}:\n${screens.capture(pane).join('\n')}`);
          screens.keys(pane, key);
          const pressed = Date.now();
          while (selected() === from && Date.now() - pressed < 1_000) await new Promise((r) => setTimeout(r, 50));
        }
        return selected();
      };
      screens.text(pane, 'fg');
      screens.keys(pane, 'Enter');
      expect(await pressUntilMoved('Down', 'Down to move the selection after fg')).toMatch(
        /^(apply\.(beta|gamma)|review)$/,
      );

      screens.keys(pane, 'C-z');
      await waitUntil(() => /T/.test(state()), 'Ctrl-Z to stop the job');
      screens.text(pane, 'fg');
      screens.keys(pane, 'Enter');
      await waitUntil(() => !/T/.test(state()), 'fg to continue it');
      await screens.waitFor(pane, (l) => l.some((x) => x.startsWith('> ')), 'the view drawn again');
      expect(await pressUntilMoved('Up', 'Up to move the selection after Ctrl-Z and fg')).toMatch(/^apply\./);
      screens.keys(pane, 'C-c');
      await waitUntil(() => state() === '', 'the run to end on Ctrl-C');
    } finally {
      screens.kill(pane);
    }
  }, 300_000);

  it('a hundred instances: the list scrolls to keep the selection in view on 24 rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-view-100-'));
    const items = Array.from({ length: 100 }, (_, i) => `item-${String(i).padStart(3, '0')}`);
    const recipe = writeDriveRecipe(join(dir, 'recipe'), { items, concurrency: 4 });
    const runs = join(dir, 'runs');
    const pane = 'hundred';
    screens.start(pane, `${orchestrate(`${recipe} --run-dir ${runs}`)}; echo exit=$?; sleep 600`, { cwd: ROOT });
    try {
      let s = await screens.waitForLine(pane, /^> . apply\.item-000/);
      expect(s.at(-1)).toMatch(/1\/101$/); // and the review task
      expectFits(s);
      screens.keys(pane, 'End');
      s = await screens.waitForLine(pane, /^> . review/);
      expect(s.at(-1)).toMatch(/101\/101$/);
      expect(s.at(-3)).toMatch(/^ {2}. apply\.item-099/);
      expect(s.some((l) => /item-000/.test(l))).toBe(false);
      expectFits(s);
      screens.keys(pane, 'PageUp');
      s = await screens.waitFor(
        pane,
        (l) => /\d+\/101$/.test(l.at(-1) ?? '') && !/101\/101$/.test(l.at(-1) ?? ''),
        'a page up',
      );
      const at = Number(/(\d+)\/101$/.exec(s.at(-1)!)![1]);
      expect(s.find((l) => l.startsWith('> '))).toContain(`item-${String(at - 1).padStart(3, '0')}`);
      for (let i = 0; i < 5; i++) screens.keys(pane, 'Up');
      s = await screens.waitForLine(pane, new RegExp(`${at - 5}/101$`));
      expect(s.find((l) => l.startsWith('> '))).toContain(`item-${String(at - 6).padStart(3, '0')}`);
      expectFits(s);
      screens.keys(pane, 'Home');
      s = await screens.waitForLine(pane, /^> . apply\.item-000/);
      expect(s[3]).toMatch(/^> /); // first row under the header
      screens.keys(pane, 'C-c');
      await screens.waitForLine(pane, /^exit=130$/, 60_000);
    } finally {
      screens.kill(pane);
    }
  }, 300_000);
});

async function waitUntil(test: () => boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const start = Date.now();
  while (!test()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
