// The live view in a real pseudo-terminal: tmux runs fixtures/live-demo.ts in an 80x30 pane and
// the test captures the screen at the demo's phase markers. The two tests run at the same time
// (#43): each has its own tmux session, runs folder and sync folder, and waits on its own markers.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/display/terminal-text.js';

const ROOT = resolve(import.meta.dirname, '../..');
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux) console.warn('live-view-tty: skipped because tmux is not installed (apt-get install tmux)');

// A private tmux server (own socket) so the test never touches anyone else's sessions.
const SOCKET = `orchestrate-live-${process.pid}`;
const SESSION = 'live';
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });

// Bounds here only turn a hang into a failure: a loaded machine takes long to start node under tsx.
async function waitForFile(path: string, session = SESSION, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!existsSync(path)) {
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out waiting for ${path}; pane:\n${tmux('capture-pane', '-p', '-t', session)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until the demo's pane title says it reached `phase` (set after that phase's frame). */
async function waitForTitle(session: string, phase: string, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (tmux('display-message', '-p', '-t', session, '#{pane_title}').trim() !== `phase-${phase}`) {
    if (Date.now() - start > timeoutMs)
      throw new Error(
        `timed out waiting for phase ${phase} on screen; pane:\n${tmux('capture-pane', '-p', '-t', session)}`,
      );
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The pane's text without trailing blank lines. */
function capture(): string[] {
  const lines = tmux('capture-pane', '-p', '-t', SESSION).split('\n');
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  return lines;
}

describe.skipIf(!hasTmux)('live view under a pseudo-terminal (tmux, 80x30)', { concurrent: true }, () => {
  // The server exits with its last session: without a session that outlives each test, the next
  // test's new-session could reach a server on its way out ("server exited unexpectedly").
  beforeAll(() => {
    tmux('new-session', '-d', '-s', 'keep-alive', 'sleep 600');
  });
  afterAll(() => {
    spawnSync('tmux', ['-L', SOCKET, 'kill-session', '-t', SESSION]);
    spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
  });

  it('rows appear, update in place and collapse; nothing wraps at 80 columns', async () => {
    const sync = mkdtempSync(join(tmpdir(), 'live-sync-'));
    const runs = mkdtempSync(join(tmpdir(), 'live-runs-'));
    const cmd = `node --import tsx test/display/fixtures/live-demo.ts ${runs} ${sync}`;
    tmux('new-session', '-d', '-s', SESSION, '-x', '80', '-y', '30', '-c', ROOT, cmd);
    const shots: Record<string, string[]> = {};
    const cursorVisible: Record<string, string> = {};
    for (const phase of ['fanout-running', 'after-failure', 'final']) {
      await waitForFile(join(sync, `phase-${phase}`));
      await waitForTitle(SESSION, phase);
      shots[phase] = capture();
      cursorVisible[phase] = tmux('display-message', '-p', '-t', SESSION, '#{cursor_flag}').trim();
      writeFileSync(join(sync, `go-${phase}`), '');
    }

    // The cursor is hidden while the view is live and shown again once it stops.
    expect(cursorVisible).toEqual({ 'fanout-running': '0', 'after-failure': '0', final: '1' });
    for (const [phase, lines] of Object.entries(shots)) {
      for (const l of lines) expect(displayWidth(l), `${phase}: ${l}`).toBeLessThanOrEqual(80);
    }

    // Fan-out running: header (3), the collapsed finished rows, three running rows, the queue.
    const a = shots['fanout-running']!;
    expect(a[1]).toMatch(/9\/13 · 9 done · 3 running · 1 queued/);
    expect(a[3]).toMatch(/^✓ 9 done \(rows collapsed\)/);
    expect(a.slice(4, 7).map((l) => l.slice(0, 16))).toEqual([
      '▸ apply.repo-a  ',
      '▸ apply.repo-b  ',
      '▸ apply.repo-c  ',
    ]);
    expect(a[7]).toBe('· 1 queued: review');
    expect(a).toHaveLength(8); // exactly one frame on screen: earlier frames were overwritten, not scrolled

    // After the failure: the same screen region, repo-c failed with its class, repo-b waiting to retry.
    const b = shots['after-failure']!;
    expect(b).toHaveLength(7);
    expect(b[3]).toMatch(/^✓ 10 done \(rows collapsed\)/);
    expect(b[4]).toMatch(/^✗ apply\.repo-c\s+timeout: no pro/);
    expect(b[5]).toMatch(/^↻ apply\.repo-b\s+retry in 0\.3s/);

    // Finished: the final frame stays, then the summary (stdout) follows below it.
    const c = shots.final!;
    expect(c[0]).toMatch(/· failed$/);
    expect(c[1]).toMatch(/13\/13 · 11 done · 1 failed · 1 skipped/);
    expect(c[3]).toMatch(/^✓ 11 done \(rows collapsed\)/);
    expect(c[4]).toMatch(/^✗ apply\.repo-c/);
    expect(c[5]).toMatch(/^- review\s+skipped/);
    expect(c[6]).toMatch(/^run demo-run \(rename-logger\): failed in/);
    expect(c.slice(6).join('\n')).toMatch(/apply: 11 instances \(10 done, 1 failed\)/);
    expect(c[c.length - 2]).toMatch(/^report: orchestrate report \/.*demo-run$/);
    expect(c[c.length - 1]).toMatch(/^resume: orchestrate resume \/.*demo-run$/);
  }, 150_000);

  it('Ctrl-C while live restores the cursor and still ends the process by SIGINT (exit 130)', async () => {
    const sync = mkdtempSync(join(tmpdir(), 'live-sync-'));
    const runs = mkdtempSync(join(tmpdir(), 'live-runs-'));
    const name = 'ctrl-c';
    // A shell keeps the pane alive after node dies so the cursor state can be read; its INT trap
    // lets it survive the Ctrl-C (a trapped signal is reset to default in the child, so node
    // still gets a plain SIGINT).
    const demo = `node --import tsx test/display/fixtures/live-demo.ts ${runs} ${sync}`;
    tmux(
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      '80',
      '-y',
      '30',
      '-c',
      ROOT,
      `sh -c "trap true INT; ${demo}; echo exit=\\$?; sleep 60"`,
    );
    await waitForFile(join(sync, 'phase-fanout-running'), name);
    await waitForTitle(name, 'fanout-running');
    expect(tmux('display-message', '-p', '-t', name, '#{cursor_flag}').trim()).toBe('0');
    tmux('send-keys', '-t', name, 'C-c');
    const start = Date.now();
    while (!/exit=\d+/.test(tmux('capture-pane', '-p', '-t', name)) && Date.now() - start < 60_000)
      await new Promise((r) => setTimeout(r, 25));
    expect(tmux('capture-pane', '-p', '-t', name)).toMatch(/exit=130/);
    expect(tmux('display-message', '-p', '-t', name, '#{cursor_flag}').trim()).toBe('1');
    spawnSync('tmux', ['-L', SOCKET, 'kill-session', '-t', name]);
  }, 150_000);
});
