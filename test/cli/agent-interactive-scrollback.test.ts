// `orchestrate agent` in interactive mode prints the conversation into the terminal's own
// scrollback: the real CLI in tmux (80x24, scripted provider). After a conversation longer than
// the screen, the pane's history (capture-pane -S) holds every prompt and reply exactly once, in
// order, and the screen ends with the editor and status line; a resize does not print anything
// again; --continue prints the reopened history once; /new goes on below a separator line. Every
// step waits on what the pane shows (bounded polling), never on a fixed sleep.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editorArea, hasTmux, IDLE, tmuxServer } from './helpers/tmux-agent.js';

if (!hasTmux)
  console.warn('agent-interactive-scrollback: skipped because tmux is not installed (apt-get install tmux)');

const { tmux, screen, history, waitFor, start, stop, launchAgent } = tmuxServer(
  `orchestrate-scrollback-${process.pid}`,
);
/** How many rows of `text` are exactly `row`. */
const rowCount = (text: string, row: string): number => text.split('\n').filter((l) => l === row).length;

async function prompt(pane: string, text: string, reply: string, width = 80): Promise<string> {
  tmux('send-keys', '-t', pane, '-l', text);
  await waitFor(pane, (s) => editorArea(s, width).includes(text), `"${text}" in the editor`);
  tmux('send-keys', '-t', pane, 'Enter');
  return waitFor(
    pane,
    (s) => s.includes(reply) && IDLE.test(s) && !editorArea(s, width).includes(text),
    `"${reply}" and the idle status`,
  );
}

const TURNS = 8;
const reply = (n: number) => `Reply number ${n}.`;

describe.skipIf(!hasTmux)(
  'orchestrate agent, interactive: the conversation in the terminal scrollback (tmux, 80x24)',
  () => {
    let home: string;
    beforeAll(() => {
      home = mkdtempSync(join(tmpdir(), 'interactive-scrollback-home-'));
      start();
    });
    afterAll(() => {
      stop();
      rmSync(home, { recursive: true, force: true });
    });

    function launch(pane: string, args: string[]): void {
      launchAgent(pane, args, { ORCHESTRATE_HOME: home, NO_COLOR: '1' });
    }

    it('prompts and replies are printed once each into the scrollback; resize, --continue and /new print nothing twice', async () => {
      const work = mkdtempSync(join(home, 'work-'));
      const file = join(work, 'chat.jsonl');
      const script = join(work, 'script.yaml');
      // Each reply is a few rows of markdown: eight turns are far more than a 24-row screen.
      const turns = Array.from(
        { length: TURNS },
        (_, i) => `- text: "${reply(i + 1)}\\n\\n- point a of ${i + 1}\\n- point b of ${i + 1}"`,
      );
      turns.push('- text: "After the resize."', '- text: "Continued after reopening."');
      writeFileSync(script, `${turns.join('\n')}\n`);
      const args = ['--script', script, '--session', file, '--cwd', work, '--tools', 'none'];
      launch('long', args);
      await waitFor('long', (s) => IDLE.test(s), 'the idle status line');
      for (let i = 1; i <= TURNS; i++) await prompt('long', `prompt ${i}`, reply(i));

      let all = history('long');
      for (let i = 1; i <= TURNS; i++) {
        expect(rowCount(all, `› prompt ${i}`), `prompt ${i}`).toBe(1);
        expect(rowCount(all, reply(i)), `reply ${i}`).toBe(1);
        expect(rowCount(all, `• point b of ${i}`), `list of reply ${i}`).toBe(1);
      }
      // In order, and the first turn is above the screen: in the terminal's scrollback.
      expect(all.indexOf(reply(1))).toBeLessThan(all.indexOf('› prompt 2'));
      const visible = screen('long');
      expect(visible).not.toContain('› prompt 1\n');
      const rows = visible.split('\n').slice(0, 24);
      expect(rows[22]).toMatch(IDLE);
      expect(rows[21]).toMatch(/^> /);
      expect(rows[20]).toBe('─'.repeat(80));
      expect(rows[19]).toBe('• point b of 8');
      // The editor and status line are drawn once, at the bottom: not left behind in the scrollback.
      expect(rowCount(all, '─'.repeat(80))).toBe(1);

      // Narrower: the live part is drawn at the new width; nothing printed is printed again.
      tmux('resize-window', '-t', 'long', '-x', '60', '-y', '24');
      await waitFor('long', (s) => s.includes(`\n${'─'.repeat(60)}\n`), 'the editor border at 60 columns');
      await prompt('long', 'after resize', 'After the resize.', 60);
      all = history('long');
      for (let i = 1; i <= TURNS; i++) expect(rowCount(all, reply(i)), `reply ${i} after the resize`).toBe(1);
      expect(rowCount(all, '› after resize')).toBe(1);
      tmux('send-keys', '-t', 'long', '-l', '/exit');
      await waitFor('long', (s) => editorArea(s, 60).includes('/exit'), '"/exit" in the editor');
      tmux('send-keys', '-t', 'long', 'Enter');
      await waitFor('long', (s) => s.includes('exit=0'), 'exit=0');

      // Reopened: the history is printed once into the scrollback, then the conversation goes on.
      launch('again', [...args, '--continue']);
      await waitFor('again', (s) => s.includes('After the resize.') && IDLE.test(s), 'the reopened conversation');
      await prompt('again', 'once more', 'Continued after reopening.');
      all = history('again');
      for (let i = 1; i <= TURNS; i++) {
        expect(rowCount(all, `› prompt ${i}`), `reopened prompt ${i}`).toBe(1);
        expect(rowCount(all, reply(i)), `reopened reply ${i}`).toBe(1);
      }
      expect(rowCount(all, '› once more')).toBe(1);

      // /new: what is printed stays; the new session goes on below a separator.
      tmux('send-keys', '-t', 'again', '-l', '/new');
      await waitFor('again', (s) => editorArea(s).includes('/new'), '"/new" in the editor');
      tmux('send-keys', '-t', 'again', 'Enter');
      await waitFor(
        'again',
        (s) => s.includes('── new session ──') && /^New session:/m.test(s) && IDLE.test(s),
        'the separator',
      );
      // The new session's scripted provider starts its script again: the first reply once more.
      tmux('send-keys', '-t', 'again', '-l', 'fresh start');
      await waitFor('again', (x) => editorArea(x).includes('fresh start'), '"fresh start" in the editor');
      tmux('send-keys', '-t', 'again', 'Enter');
      const below = (x: string) => x.split('── new session ──')[1] ?? '';
      const s = await waitFor(
        'again',
        (x) => below(x).includes(reply(1)) && IDLE.test(x),
        'the reply in the new session',
      );
      expect(below(s)).toMatch(/\n› fresh start\n\nReply number 1\.\n/);
      expect(below(s)).not.toContain('Continued after reopening.');
      all = history('again');
      expect(rowCount(all, 'Continued after reopening.')).toBe(1);
      expect(rowCount(all, '── new session ──')).toBe(1);
      expect(rowCount(all, reply(1))).toBe(2);
      expect(all.indexOf(reply(1))).toBeLessThan(all.indexOf('── new session ──'));
      expect(all.lastIndexOf(reply(1))).toBeGreaterThan(all.indexOf('── new session ──'));
      tmux('send-keys', '-t', 'again', '-l', '/exit');
      await waitFor('again', (x) => editorArea(x).includes('/exit'), '"/exit" in the editor');
      tmux('send-keys', '-t', 'again', 'Enter');
      await waitFor('again', (x) => x.includes('exit=0'), 'exit=0');
    }, 120_000);
  },
);
