// A private tmux server for pseudo-terminal tests: start programs in panes of a given size, type
// keys, read the screen, wait (bounded polling) for what it shows. One keep-alive session lives
// for the whole suite: the server exits with its last session, and a new-session reaching a
// server on its way out fails ("server exited unexpectedly").
import { execFileSync, spawnSync } from 'node:child_process';

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;

export class TmuxScreens {
  private readonly socket = `orchestrate-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  open(): void {
    this.tmux('new-session', '-d', '-s', 'keep-alive', 'sleep 3600');
  }

  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }

  /** A pane of `cols` x `rows` running `command` (a shell command line) in `cwd`. */
  start(name: string, command: string, opts: { cwd: string; cols?: number; rows?: number }): void {
    this.tmux(
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      String(opts.cols ?? 80),
      '-y',
      String(opts.rows ?? 24),
      '-c',
      opts.cwd,
      command,
    );
  }

  kill(name: string): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-session', '-t', name]);
  }

  /** The pane's lines, trailing blank lines dropped. */
  capture(name: string): string[] {
    const lines = this.tmux('capture-pane', '-p', '-t', name).split('\n');
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
    return lines;
  }

  /** Keys as tmux names them ('Down', 'Enter', 'Escape', 'C-c') or literal text with `literal`. */
  keys(name: string, ...keys: string[]): void {
    this.tmux('send-keys', '-t', name, ...keys);
  }

  text(name: string, text: string): void {
    this.tmux('send-keys', '-t', name, '-l', text);
  }

  /**
   * Polls the screen until `test` passes; throws with the screen after `timeoutMs`. The bound only
   * turns a hang into a failure: on a loaded machine starting the CLI under tsx alone can take
   * longer than the 30 s this was, so it is well above that.
   */
  async waitFor(name: string, test: (lines: string[]) => boolean, what: string, timeoutMs = 90_000): Promise<string[]> {
    const start = Date.now();
    let lines: string[] = [];
    for (;;) {
      try {
        lines = this.capture(name);
      } catch {
        lines = ['(pane gone)'];
      }
      if (test(lines)) return lines;
      if (Date.now() - start > timeoutMs)
        throw new Error(`timed out waiting for ${what}; screen:\n${lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits for a line matching `re` on the screen. */
  waitForLine(name: string, re: RegExp, timeoutMs?: number): Promise<string[]> {
    return this.waitFor(name, (lines) => lines.some((l) => re.test(l)), String(re), timeoutMs);
  }
}
