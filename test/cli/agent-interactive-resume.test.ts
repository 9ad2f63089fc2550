// `orchestrate agent --continue` in interactive mode (the real CLI in tmux, 80x24, scripted
// provider) on a session whose last turn a kill cut off: the UI says the turn was interrupted and
// finishes it (the cut-off bash call is answered as interrupted, not run again) before taking
// prompts. Every step waits on what the screen shows (bounded polling), never on a fixed sleep.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli } from '../runtime/helpers/agent-cli.js';
import { CLI_SHELL } from '../helpers/cli-entry.js';

const ROOT = resolve(import.meta.dirname, '../..');
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux) console.warn('agent-interactive-resume: skipped because tmux is not installed (apt-get install tmux)');

// A private tmux server (own socket) so the test never touches anyone else's sessions.
const SOCKET = `orchestrate-resume-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const WAIT_MS = 30_000;
const screen = (pane: string): string => tmux('capture-pane', '-p', '-t', pane);
/** The screen with wrapped lines joined. */
const flat = (s: string): string => s.replace(/\s+/g, ' ');

async function waitFor(pane: string, ok: (s: string) => boolean, what: string): Promise<string> {
  const t0 = Date.now();
  for (;;) {
    const s = screen(pane);
    if (ok(s)) return s;
    if (Date.now() - t0 > WAIT_MS) throw new Error(`timed out waiting for ${what}; screen:\n${s}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}
const IDLE = /^scripted · ctx .* \/help$/m;
const editorArea = (s: string): string => s.split('─'.repeat(80)).at(-1) ?? '';

describe.skipIf(!hasTmux)('orchestrate agent --continue, interactive, on a cut-off session (tmux, 80x24)', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'interactive-resume-home-'));
    tmux('new-session', '-d', '-s', 'keep-alive', 'sleep 600');
  });
  afterAll(() => {
    spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    rmSync(home, { recursive: true, force: true });
  });

  it('says the last turn was interrupted, finishes it, then takes the next prompt', async () => {
    const work = mkdtempSync(join(home, 'work-'));
    const file = join(work, 'chat.jsonl');
    const script = join(work, 'script.yaml');
    writeFileSync(
      script,
      [
        '- tools: [{ name: bash, id: call-1, args: { command: "echo run >> runs.txt" } }]',
        '- text: "Finished the interrupted turn."',
        '- text: "Answer to the next prompt."',
      ].join('\n'),
    );
    const args = ['--script', script, '--session', file, '--cwd', work, '--tools', 'bash', '--sandbox', 'none'];
    // The real CLI writes the whole turn; the file cut after the reply with the call is what a
    // kill -9 while the tool ran leaves (that reply is written before the tool starts).
    const first = await runAgentCli([...args, 'start the work'], {
      env: { ORCHESTRATE_HOME: home, ANTHROPIC_API_KEY: undefined, ORCHESTRATE_MODEL: undefined },
    });
    expect(first).toMatchObject({ code: 0, stdout: 'Finished the interrupted turn.\n' });
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const callAt = lines.findIndex((l) => l.includes('"toolCall"'));
    writeFileSync(file, `${lines.slice(0, callAt + 1).join('\n')}\n`);
    expect(readFileSync(join(work, 'runs.txt'), 'utf8')).toBe('run\n');

    const cli = `env -u CI -u CONTINUOUS_INTEGRATION -u ANTHROPIC_API_KEY -u ORCHESTRATE_MODEL ORCHESTRATE_HOME='${home}' NO_COLOR=1 ${CLI_SHELL} agent ${[...args, '--continue'].join(' ')}`;
    tmux(
      'new-session',
      '-d',
      '-s',
      'again',
      '-x',
      '80',
      '-y',
      '24',
      '-c',
      ROOT,
      `sh -c "${cli}; echo exit=\\$?; sleep 600"`,
    );
    const s = await waitFor(
      'again',
      (x) => x.includes('Finished the interrupted turn.') && IDLE.test(x),
      'the finished turn',
    );
    expect(flat(s)).toContain(
      'The last turn of this session was interrupted (its bash call has no result): finishing it now. Esc stops.',
    );
    expect(s).toMatch(/› start the work/);
    expect(s).toMatch(/✗ bash \$ echo run >> runs\.txt\n\s+⎿ This bash call was interrupted/);
    // Not run a second time.
    expect(readFileSync(join(work, 'runs.txt'), 'utf8')).toBe('run\n');

    tmux('send-keys', '-t', 'again', '-l', 'next');
    await waitFor('again', (x) => editorArea(x).includes('next'), '"next" in the editor');
    tmux('send-keys', '-t', 'again', 'Enter');
    await waitFor(
      'again',
      (x) => x.includes('Answer to the next prompt.') && IDLE.test(x),
      'the answer to the next prompt',
    );
    tmux('send-keys', '-t', 'again', '-l', '/exit');
    await waitFor('again', (x) => editorArea(x).includes('/exit'), '"/exit" in the editor');
    tmux('send-keys', '-t', 'again', 'Enter');
    await waitFor('again', (x) => x.includes('exit=0'), 'exit=0');

    const roles = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { type: string; message?: { role: string } })
      .flatMap((e) => (e.type === 'message' && e.message ? [e.message.role] : []));
    expect(roles).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']);
  }, 120_000);
});
