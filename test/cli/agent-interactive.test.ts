// `orchestrate agent` in interactive mode, end to end: the real CLI in a real pseudo-terminal
// (tmux, 80x24) on the scripted provider. Keys go in with send-keys; every step waits on what
// the screen shows (capture-pane polling with a generous limit), never on a fixed sleep. The
// terminal tests run at the same time (#43): each has its own panes, work folder and session
// file on the file's tmux server, and each waits only on its own panes.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { displayWidth } from '../../src/display/terminal-text.js';
import { editorArea, hasTmux, IDLE, tmuxServer } from './helpers/tmux-agent.js';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(ROOT, 'test/fixtures/agent');
if (!hasTmux) console.warn('agent-interactive: skipped because tmux is not installed (apt-get install tmux)');

const { tmux, screen, history, waitFor, start, stop, launchAgent } = tmuxServer(
  `orchestrate-interactive-${process.pid}`,
);
const waitText = (pane: string, text: string | RegExp) =>
  waitFor(pane, (s) => (typeof text === 'string' ? s.includes(text) : text.test(s)), String(text));

/** Types text literally and waits until the editor shows it (keys are not sent ahead of the UI). */
async function typeText(pane: string, text: string): Promise<void> {
  tmux('send-keys', '-t', pane, '-l', text);
  await waitFor(pane, (s) => editorArea(s).includes(text), `"${text}" in the editor`);
}
const key = (pane: string, ...keys: string[]) => tmux('send-keys', '-t', pane, ...keys);

/** Sends a prompt and waits for the reply and for the run to be over. */
async function prompt(pane: string, text: string, reply: string): Promise<string> {
  await typeText(pane, text);
  key(pane, 'Enter');
  return waitFor(pane, (s) => s.includes(reply) && IDLE.test(s), `"${reply}" and the idle status`);
}

/** Every line of a session file parses (nothing half-written). */
function sessionLines(file: string): { type: string; [k: string]: unknown }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { type: string });
}

/** Modules src/cli/main.ts loads by static imports (relative ones followed, packages listed). */
function staticImports(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    // `import ... from 'x'` and `export ... from 'x'`, not `await import('x')` (loaded on demand).
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'/gm)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.')) todo.push(resolve(file, '..', spec.replace(/\.js$/, '.ts')));
      else
        packages.add(spec.split('/')[0]!.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return { files, packages };
}

describe('orchestrate agent, choosing the interactive mode', () => {
  it('--mode interactive without a terminal is a usage error that says what to do', async () => {
    let stderr = '';
    const code = await main(['agent', '--mode', 'interactive', '--script', join(FIXTURES, 'interactive.yaml')], {
      stdout: () => undefined,
      stderr: (t) => (stderr += t),
      cwd: tmpdir(),
      env: { PATH: process.env.PATH },
      isTTY: false,
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /--mode interactive needs a terminal on stdin and stdout; give a prompt \(or pipe it\) for --mode text/,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('ink and React load only in the interactive mode (the agent command imports it on demand)', () => {
    // main.ts loads each command on demand; the agent command's own graph is what text, json
    // and rpc modes (and --help) load.
    for (const entry of ['src/cli/main.ts', 'src/cli/commands/agent.ts']) {
      const { files, packages } = staticImports(join(ROOT, entry));
      expect(
        [...files].filter((f) => f.includes('/display/interactive/')),
        entry,
      ).toEqual([]);
      expect(packages.has('ink'), entry).toBe(false);
      expect(packages.has('react'), entry).toBe(false);
    }
    const agent = staticImports(join(ROOT, 'src/cli/commands/agent.ts'));
    expect(agent.files.has(join(ROOT, 'src/runtime/agent-session.ts'))).toBe(true); // the walker follows imports
    expect(agent.packages.has('yargs')).toBe(true);
    expect(staticImports(join(ROOT, 'src/display/interactive/run-interactive.ts')).packages.has('ink')).toBe(true);
  });
});

describe.skipIf(!hasTmux)(
  'orchestrate agent, interactive mode in a pseudo-terminal (tmux, 80x24)',
  { concurrent: true },
  () => {
    let home: string;
    // The server exits with its last session: a session that outlives each test keeps the next
    // test's new-session from reaching a server on its way out (see live-view-tty.test.ts).
    beforeAll(() => {
      home = mkdtempSync(join(tmpdir(), 'interactive-home-'));
      start();
    });
    afterAll(() => {
      stop();
    });

    /** Starts the CLI in a new 80x24 pane; the shell prints its exit code and stays. */
    function launch(pane: string, args: string[], env: Record<string, string> = {}): void {
      launchAgent(pane, args, { ORCHESTRATE_HOME: home, ...env });
    }

    it('turns, Esc abort, a steering message, /exit, then --continue shows the conversation and goes on; Ctrl+C twice quits', async () => {
      const work = mkdtempSync(join(tmpdir(), 'interactive-work-'));
      const file = join(work, 'chat.jsonl');
      const args = [
        '--script',
        join(FIXTURES, 'interactive.yaml'),
        '--session',
        file,
        '--cwd',
        work,
        '--tools',
        'bash',
        '--sandbox',
        'none',
      ];
      launch('chat', args, { NO_COLOR: '1' });
      const first = await waitText('chat', /\/help\s*$/m);
      expect(first).toMatch(/^scripted · ctx 0\/200k \(0%\) · \$0\.0000 +\/help$/m);

      // Several turns; a reply with a thought shows the thought compactly above it.
      await prompt('chat', 'hello', 'Hello! I am the scripted model.');
      let s = await prompt('chat', 'second question', 'Here is the second answer.');
      expect(s).toContain('thinking: A second question; answer briefly.');
      expect(s).toMatch(/› second question\n\nthinking: .*\nHere is the second answer\./);

      // Esc while a tool runs: the run stops, the tool call shows as aborted, the file stays whole.
      await typeText('chat', 'slow');
      key('chat', 'Enter');
      s = await waitFor(
        'chat',
        (x) => x.includes('▸ bash $ sleep 600') && x.includes('working · Esc aborts'),
        'the running tool',
      );
      key('chat', 'Escape');
      s = await waitText('chat', 'Aborted.');
      expect(s).toMatch(/✗ bash \$ sleep 600\n\s+⎿ .*abort/i);
      await waitText('chat', /\/help\s*$/m);
      const afterAbort = sessionLines(file);
      expect(afterAbort.filter((e) => e.type === 'message').length).toBeGreaterThanOrEqual(7);
      await prompt('chat', 'after the abort', 'Back after the abort.');

      // Enter while the agent works queues a steering message; it reaches the model after the tool.
      await typeText('chat', 'open the gate');
      key('chat', 'Enter');
      await waitFor(
        'chat',
        (x) => x.includes('▸ bash $ while [ ! -f gate ]') && x.includes('working · Esc aborts'),
        'the gate tool running',
      );
      await typeText('chat', 'change course');
      key('chat', 'Enter');
      s = await waitFor(
        'chat',
        (x) => x.includes('queued steering: change course') && x.includes('1 queued'),
        'the queued steering message',
      );
      writeFileSync(join(work, 'gate'), '');
      s = await waitFor(
        'chat',
        (x) => x.includes('Steering received: I will change course.') && IDLE.test(x),
        'the reply to the steering message',
      );
      expect(s).toMatch(
        /✓ bash \$ while[^\n]*\n\s+⎿ gate open\n\n› change course\n\nSteering received: I will change course\./,
      );
      expect(s).not.toContain('queued steering');

      // The screen is the terminal's: 24 rows, nothing wider than 80 columns, the status line last.
      const rows = screen('chat').split('\n').slice(0, 24);
      for (const row of rows) expect(displayWidth(row), row).toBeLessThanOrEqual(80);
      expect(rows[rows.length - 2]).toMatch(/^scripted · ctx [\d.]+k?\/200k \([\d.]+%\) · \$0\.0000 +\/help$/);
      // NO_COLOR: no colour codes on screen (the cursor cell is inverse video, which is not a colour).
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) starts every ANSI colour sequence
      expect(screen('chat', true)).not.toMatch(/\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;|4[0-7]|10[0-7]|48;)[0-9;]*m/);

      await typeText('chat', '/exit');
      key('chat', 'Enter');
      await waitText('chat', 'exit=0');
      const steering = sessionLines(file).filter(
        (e) => e.type === 'message' && (e.message as { role: string }).role === 'user',
      );
      expect(steering.map((e) => JSON.stringify((e.message as { content: unknown }).content))).toEqual(
        ['hello', 'second question', 'slow', 'after the abort', 'open the gate', 'change course'].map((t) =>
          JSON.stringify([{ type: 'text', text: t }]),
        ),
      );

      // --continue reopens the session in the UI: the conversation is on screen and goes on.
      launch('again', [...args, '--continue'], { NO_COLOR: '1' });
      s = await waitText('again', 'Steering received: I will change course.');
      expect(s).toContain('› change course');
      // The reopened history is printed once into the scrollback (the first prompt is above the screen).
      const reopened = history('again');
      expect(reopened.split('\n').filter((l) => l === '› hello')).toHaveLength(1);
      expect(reopened.split('\n').filter((l) => l === 'Hello! I am the scripted model.')).toHaveLength(1);
      // Up recalls the prompts of the reopened session.
      key('again', 'Up');
      await waitFor('again', (x) => editorArea(x).includes('change course'), 'the last prompt recalled');
      key('again', 'C-u');
      await waitFor('again', (x) => !editorArea(x).includes('change course'), 'the editor cleared');
      await prompt('again', 'one more', 'Continued in the reopened session.');
      key('again', 'C-c');
      await waitText('again', 'Ctrl+C again to quit');
      key('again', 'C-c');
      await waitText('again', 'exit=0');
      expect(existsSync(file)).toBe(true);
    }, 120_000);

    it('on a terminal a prompt still means text mode; --mode interactive with a prompt sends it first', async () => {
      const work = mkdtempSync(join(tmpdir(), 'interactive-work-'));
      launch('text', ['--script', join(FIXTURES, 'hello.yaml'), '--no-session', '--cwd', work, 'Say', 'hello'], {
        NO_COLOR: '1',
      });
      let s = await waitText('text', 'exit=0');
      expect(s).toMatch(/^Hello from the scripted model\.\nexit=0$/m);
      launch(
        'first',
        [
          '--mode',
          'interactive',
          '--script',
          join(FIXTURES, 'hello.yaml'),
          '--no-session',
          '--cwd',
          work,
          'Say',
          'hello',
        ],
        { NO_COLOR: '1' },
      );
      s = await waitFor(
        'first',
        (x) => x.includes('Hello from the scripted model.') && IDLE.test(x),
        'the first reply in the UI',
      );
      expect(s).toMatch(/› Say hello\n\nHello from the scripted model\./);
      await typeText('first', '/exit');
      key('first', 'Enter');
      await waitText('first', 'exit=0');
    }, 60_000);

    it('/compact summarizes the conversation; /tree rewinds to before a prompt with a branch summary (in colour)', async () => {
      const work = mkdtempSync(join(tmpdir(), 'interactive-work-'));
      const file = join(work, 'tree.jsonl');
      launch(
        'tree',
        ['--script', join(FIXTURES, 'interactive-tree.yaml'), '--session', file, '--cwd', work, '--tools', 'none'],
        { TERM: 'xterm-256color' },
      );
      await waitText('tree', /\/help\s*$/m);
      await prompt('tree', 'one', 'Answer one.');
      await prompt('tree', 'two', 'Answer two.');
      await prompt('tree', 'three', 'Answer three.');

      await typeText('tree', '/compact');
      key('tree', 'Enter');
      let s = await waitText('tree', /Compacted [\d,]+ tokens of conversation into a summary/);
      expect(s).toMatch(/── compacted \([\d,]+ tokens before\) ──\n## Goal/);
      expect(sessionLines(file).some((e) => e.type === 'compaction')).toBe(true);

      await typeText('tree', '/tree');
      key('tree', 'Enter');
      s = await waitText('tree', 'Rewind to');
      // The current leaf (the compaction) is selected first; the path is marked with *.
      expect(s).toMatch(/^>\* \[compaction\]/m);
      expect(s).toMatch(/^ \* user: one$/m);
      for (let i = 0; i < 10 && !/^>\* user: two$/m.test(screen('tree')); i++) {
        const before = screen('tree');
        key('tree', 'Up');
        await waitFor('tree', (x) => x !== before, 'the selection to move');
      }
      await waitText('tree', /^>\* user: two$/m);
      key('tree', 'Enter');
      s = await waitText('tree', 'Rewound before that prompt');
      // The branch left stays in the scrollback above a separator; below it, only its summary.
      const below = (x: string) => x.split('── rewound to before user: two ──')[1] ?? '';
      expect(below(s)).toContain('── summary of the branch left ──');
      expect(below(s)).not.toContain('Answer three.');
      expect(editorArea(s)).toMatch(/^> two/m);
      const entries = sessionLines(file);
      expect(entries.some((e) => e.type === 'branch_summary')).toBe(true);

      // The prompt handed back is sent again from the earlier point.
      key('tree', 'Enter');
      s = await waitFor(
        'tree',
        (x) =>
          (below(x).match(/Answer two\./g) ?? []).length === 1 &&
          /› two\n\nAnswer two\./.test(below(x)) &&
          /\/help\s*$/m.test(x),
        'the new answer',
      );

      // Colour is on without NO_COLOR (the prompt line is cyan).
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) starts every ANSI colour sequence
      expect(screen('tree', true)).toMatch(/\x1b\[[0-9;]*36m› two/);
      await typeText('tree', '/exit');
      key('tree', 'Enter');
      await waitText('tree', 'exit=0');
    }, 120_000);
  },
);
