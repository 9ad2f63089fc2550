// `orchestrate agent` in interactive mode in a real pseudo-terminal: a private tmux server (its
// own socket, so a test never touches anyone else's sessions) with 80x24 panes, the screen read
// with capture-pane, and every wait a bounded poll of what the screen shows, never a fixed sleep.
// One setup (issue #43) for the interactive CLI tests.
import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { CLI_SHELL } from '../../helpers/cli-entry.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const WAIT_MS = 30_000;

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;

/** The status line of an idle session on the scripted model. */
export const IDLE = /^scripted · ctx .* \/help$/m;

/** What is below the editor's top border (`width` wide): the editor lines and the status line. */
export const editorArea = (s: string, width = 80): string => s.split('─'.repeat(width)).at(-1) ?? '';

/** A tmux server of the test's own on socket `socket`. */
export function tmuxServer(socket: string) {
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  /** The pane's rows (24), or with `escapes` its text with the escape sequences as drawn. */
  const screen = (pane: string, escapes = false): string =>
    tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', pane);
  /** The scrollback and the screen: the last 200 rows of history, then the visible rows. */
  const history = (pane: string): string => tmux('capture-pane', '-p', '-S', '-200', '-t', pane);
  async function waitFor(pane: string, ok: (s: string) => boolean, what: string): Promise<string> {
    const t0 = Date.now();
    for (;;) {
      const s = screen(pane);
      if (ok(s)) return s;
      if (Date.now() - t0 > WAIT_MS) throw new Error(`timed out waiting for ${what}; screen:\n${s}`);
      await new Promise((r) => setTimeout(r, 30));
    }
  }
  /** A session that keeps the server up between panes (call before the first launch). */
  const start = () => void tmux('new-session', '-d', '-s', 'keep-alive', 'sleep 600');
  const stop = () => void spawnSync('tmux', ['-L', socket, 'kill-server']);
  /** Starts `orchestrate agent <args>` with `vars` in a new 80x24 pane; the shell prints its exit code and stays. */
  function launchAgent(pane: string, args: string[], vars: Record<string, string>): void {
    const set = Object.entries(vars).map(([k, v]) => `${k}='${v}'`);
    // CI would make ink print only final frames; an API key must not matter offline.
    const cli = `env -u CI -u CONTINUOUS_INTEGRATION -u ANTHROPIC_API_KEY -u ORCHESTRATE_MODEL ${set.join(' ')} ${CLI_SHELL} agent ${args.join(' ')}`;
    tmux(
      'new-session',
      '-d',
      '-s',
      pane,
      '-x',
      '80',
      '-y',
      '24',
      '-c',
      ROOT,
      `sh -c "${cli}; echo exit=\\$?; sleep 600"`,
    );
  }
  return { tmux, screen, history, waitFor, start, stop, launchAgent };
}
