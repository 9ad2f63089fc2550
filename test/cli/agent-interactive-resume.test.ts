// `orchestrate agent --continue` in interactive mode (the real CLI in tmux, 80x24, scripted
// provider) on a session whose last turn a kill cut off: the UI says the turn was interrupted and
// finishes it (the cut-off bash call is answered as interrupted, not run again) before taking
// prompts. Every step waits on what the screen shows (bounded polling), never on a fixed sleep.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli } from '../runtime/helpers/agent-cli.js';
import { sessionFileLines, sessionMessages } from '../helpers/session-file.js';
import { editorArea, hasTmux, IDLE, tmuxServer } from './helpers/tmux-agent.js';

if (!hasTmux) console.warn('agent-interactive-resume: skipped because tmux is not installed (apt-get install tmux)');

const { tmux, waitFor, start, stop, launchAgent } = tmuxServer(`orchestrate-resume-${process.pid}`);
/** The screen with wrapped lines joined. */
const flat = (s: string): string => s.replace(/\s+/g, ' ');

describe.skipIf(!hasTmux)('orchestrate agent --continue, interactive, on a cut-off session (tmux, 80x24)', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'interactive-resume-home-'));
    start();
  });
  afterAll(() => {
    stop();
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
    const lines = sessionFileLines(file);
    const callAt = lines.findIndex((l) => l.includes('"toolCall"'));
    writeFileSync(file, `${lines.slice(0, callAt + 1).join('\n')}\n`);
    expect(readFileSync(join(work, 'runs.txt'), 'utf8')).toBe('run\n');

    launchAgent('again', [...args, '--continue'], { ORCHESTRATE_HOME: home, NO_COLOR: '1' });
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

    const roles = sessionMessages(file).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']);
  }, 120_000);
});
