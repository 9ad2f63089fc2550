// The interactive app rendered by ink-testing-library around a real AgentSession on the scripted
// provider: keys go in through its stdin, assertions read the rendered frame.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/ai/models.js';
import type { ScriptedTurn } from '../../../src/ai/scripted.js';
import { InteractiveController } from '../../../src/display/interactive/run-interactive.js';
import { makeTheme } from '../../../src/display/interactive/theme.js';
import { createAgentSession, type AgentSession, type CreateAgentSessionOptions } from '../../../src/runtime/index.js';
import { mountApp } from './helpers/app-driver.js';
import { releasedSteps, textDeltaStream } from './helpers/stepped-stream.js';
import { QUIET_SESSION } from './helpers/quiet-session.js';

const KEYS = {
  enter: '\r',
  altEnter: '\x1b\r',
  esc: '\x1b',
  up: '\x1b[A',
  down: '\x1b[B',
  ctrlO: '\x0f',
  ctrlC: '\x03',
  backspace: '\x7f',
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function start(
  turns: ScriptedTurn[],
  color = false,
  sessionDir?: string,
  extra: Partial<CreateAgentSessionOptions> = {},
) {
  const cwd = mkdtempSync(join(tmpdir(), 'interactive-app-'));
  writeFileSync(join(cwd, 'notes.txt'), Array.from({ length: 25 }, (_, i) => `note line ${i + 1}`).join('\n'));
  const open = () =>
    createAgentSession({
      cwd,
      ...(sessionDir ? { sessionDir } : { inMemory: true }),
      provider: 'scripted',
      script: turns,
      tools: ['read'],
      ...QUIET_SESSION,
      ...extra,
    });
  const session: AgentSession = await open();
  let exited = false;
  const opened: AgentSession[] = [];
  const controller = new InteractiveController(session, {
    onExit: () => (exited = true),
    newSession: async () => {
      const s = await open();
      opened.push(s);
      cleanups.push(() => s.dispose());
      return s;
    },
  });
  const driver = mountApp(controller, session, cleanups, color);
  return { ...driver, session, controller, opened, exited: () => exited };
}

describe('interactive app (ink-testing-library)', () => {
  it('sends prompts, shows replies and the status line with model, context and cost', async () => {
    const t = await start([{ text: 'First reply.' }, { text: 'Second reply.' }]);
    await t.until((f) => /scripted · ctx 0\/200k \(0%\) · \$0\.0000\s+\/help/.test(f), 'the idle status line');
    await t.type('hello');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('First reply.') && t.idle(f), 'the first reply');
    expect(t.frame()).toContain('› hello');
    await t.type('again');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Second reply.') && t.idle(f), 'the second reply');
    expect(t.frame()).toMatch(/scripted · ctx [\d.]+k?\/200k \([\d.]+%\) · \$0\.0000/);
    expect(t.session.messages).toHaveLength(4);
  });

  it('a reply is drawn as it streams, before it is complete', async () => {
    // A stream the test releases step by step.
    const { release, next } = releasedSteps();
    const streamFn = textDeltaStream(() => ({ deltas: ['The first half', ' and the second half.'], stepped: true }), {
      next,
    });
    const t = await start([], false, undefined, {
      provider: undefined,
      script: undefined,
      model: scriptedModel(),
      streamFn,
    });
    await t.type('stream please');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('working · Esc aborts'), 'the run');
    release();
    await t.until(
      (f) => f.includes('The first half') && f.includes('working · Esc aborts'),
      'the first half while it streams',
    );
    expect(t.frame()).not.toContain('second half');
    release();
    await t.until((f) => f.includes('The first half and the second half.') && t.idle(f), 'the whole reply');
  });

  it('while a reply streams, each frame is the printed conversation, unchanged, then the live part with the reply so far', async () => {
    const { release, next } = releasedSteps();
    const deltas = Array.from({ length: 8 }, (_, i) => `${i === 0 ? '' : '\n'}streamed line ${i + 1}`);
    const streamFn = textDeltaStream(
      (asked) =>
        asked === 'stream please'
          ? { deltas, stepped: true }
          : { deltas: [`Quick reply to ${asked}.`], stepped: false },
      { next },
    );
    const t = await start([], false, undefined, {
      provider: undefined,
      script: undefined,
      model: scriptedModel(),
      streamFn,
    });
    for (let i = 1; i <= 6; i++) {
      await t.type(`question ${i}`);
      await t.key(KEYS.enter);
      await t.until((f) => f.includes(`Quick reply to question ${i}.`) && t.idle(f), `reply ${i}`);
    }
    await t.type('stream please');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('› stream please') && f.includes('working · Esc aborts'), 'the run');
    // ink-testing-library draws in ink's debug mode: a frame is all Static output so far, then
    // the live part. The printed part is the same text in every frame while the reply streams.
    const printed = t.frame().slice(0, t.frame().indexOf('› stream please') + '› stream please\n'.length);
    const from = t.app.frames.length;
    for (let i = 1; i <= deltas.length; i++) {
      release();
      await t.until((f) => f.includes(`streamed line ${i}\n`), `line ${i}`);
    }
    await t.until((f) => t.idle(f), 'the end of the run');
    const during = t.app.frames.slice(from, -1).filter((f) => f.includes('streamed line'));
    expect(during.length).toBeGreaterThanOrEqual(deltas.length);
    for (const f of during) {
      expect(f.startsWith(printed)).toBe(true);
      // Nothing printed is drawn a second time in the live part below it.
      for (let i = 1; i <= 6; i++) expect(f.split(`Quick reply to question ${i}.`)).toHaveLength(2);
    }
    // The finished reply is printed once, whole.
    const last = t.frame();
    expect(last.split('streamed line 1\n')).toHaveLength(2);
    expect(last).toContain(deltas.join(''));
  });

  it('a conversation taller than the screen is printed once, item by item, with the live part (editor, status line) below it', async () => {
    const turns = Array.from({ length: 12 }, (_, i) => ({ text: `Reply number ${i + 1}.` }));
    const t = await start(turns);
    for (let i = 1; i <= 12; i++) {
      await t.type(`prompt ${i}`);
      await t.key(KEYS.enter);
      await t.until((f) => f.includes(`Reply number ${i}.`) && t.idle(f), `reply ${i}`);
    }
    // ink-testing-library draws in ink's debug mode: each frame is everything printed (Static)
    // so far followed by the live part. Each item is in it once, in order: printed, not redrawn.
    const f = t.frame();
    for (let i = 1; i <= 12; i++) {
      expect(f.match(new RegExp(`› prompt ${i}\\n`, 'g')), `prompt ${i}`).toHaveLength(1);
      expect(f.match(new RegExp(`Reply number ${i}\\.`, 'g')), `reply ${i}`).toHaveLength(1);
    }
    expect(f.indexOf('Reply number 1.')).toBeLessThan(f.indexOf('› prompt 2'));
    const lines = f.split('\n');
    expect(lines.length).toBeGreaterThan(24); // taller than the screen: the rest is in the scrollback
    expect(lines.at(-1)).toMatch(/^scripted · ctx .* \/help$/);
    expect(lines.at(-2)).toMatch(/^> /);
    expect(lines.at(-3)).toBe('─'.repeat(100));
    expect(lines.at(-4)).toBe('Reply number 12.');
    expect(lines.at(-5)).toBe('');
    expect(lines.at(-6)).toBe('› prompt 12');
    // Everything is printed: nothing of the conversation is left in the live part.
    expect(t.controller.state.printedUpTo).toBe(t.controller.state.transcript.items.length);
    expect(t.controller.state.printed).toHaveLength(24);
    // PageUp no longer scrolls anything (the terminal scrolls): the frame stays as it is.
    await t.key('\x1b[5~');
    await t.type('still here');
    expect(t.frame().split('\n').slice(0, -2)).toEqual(lines.slice(0, -2));
    expect(t.frame()).not.toContain('more below');
  });

  it('the editor continues a line after "\\", and Up brings back the last prompt', async () => {
    const t = await start([{ text: 'Got two lines.' }, { text: 'ok' }]);
    await t.type('line one\\');
    await t.key(KEYS.enter);
    await t.type('line two');
    expect(t.frame()).toMatch(/> line one\n\s+line two/);
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Got two lines.') && t.idle(f), 'the reply');
    const user = t.session.messages[0]!;
    expect(user.role === 'user' && user.content).toEqual([{ type: 'text', text: 'line one\nline two' }]);
    await t.key(KEYS.up);
    await t.until((f) => /> line one\n\s+line two/.test(f), 'the prompt back from history');
  });

  it('under the kitty keyboard protocol Shift+Enter adds a line and Alt+Enter is told apart from Enter', async () => {
    const t = await start([{ text: 'Slow.', delayMs: 600_000 }]);
    await t.type('top');
    await t.key('\x1b[13;2u'); // Shift+Enter
    await t.type('bottom');
    expect(t.frame()).toMatch(/> top\n {2}bottom/);
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('working · Esc aborts'), 'the run');
    await t.type('later');
    await t.key('\x1b[13;3u'); // Alt+Enter
    await t.until((f) => f.includes('queued follow-up: later'), 'the follow-up');
    await t.key(KEYS.esc);
    await t.until((f) => f.includes('Aborted.'), 'the abort');
  });

  it('a tool call shows as name + arguments with a collapsed result; Ctrl+O expands what is printed after it', async () => {
    const read = { name: 'read', args: { path: 'notes.txt' } };
    const t = await start([
      { text: 'Reading.', tools: [read] },
      { text: 'Read it.' },
      { text: 'Again.', tools: [read] },
      { text: 'Read again.' },
      { text: 'Once more.', tools: [read] },
      { text: 'Read once more.' },
    ]);
    await t.type('read the notes');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Read it.') && t.idle(f), 'the final reply');
    expect(t.frame()).toMatch(/✓ read notes\.txt\n\s+⎿ 25 lines: note line 1\n/);
    expect(t.frame()).not.toContain('note line 2\n');
    // Ctrl+O: what is printed from now on is expanded; the call printed above stays as printed.
    await t.key(KEYS.ctrlO);
    await t.until(() => t.controller.state.expanded, 'expanded on');
    await t.type('again');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Read again.') && t.idle(f), 'the second reply');
    const calls = t.frame().split('✓ read notes.txt');
    expect(calls).toHaveLength(3);
    expect(calls[1]).toMatch(/^\n\s+⎿ 25 lines: note line 1\n/);
    expect(calls[2]).toMatch(/^\n\s+⎿ note line 1\n\s+note line 2\n/);
    expect(calls[2]).toContain('note line 20\n');
    expect(calls[2]).toContain('… 5 more lines');
    // Off again: the next call is printed collapsed.
    await t.key(KEYS.ctrlO);
    await t.until(() => !t.controller.state.expanded, 'expanded off');
    await t.type('once more');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Read once more.') && t.idle(f), 'the third reply');
    expect(t.frame().split('✓ read notes.txt')[3]).toMatch(/^\n\s+⎿ 25 lines: note line 1\n/);
    expect(t.frame().match(/note line 12/g)).toHaveLength(1);
  });

  it('Esc aborts a run; Enter while working queues a steering message; Alt+Enter a follow-up', async () => {
    const t = await start([{ text: 'Slow reply.', delayMs: 600_000 }]);
    await t.type('go slow');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('working · Esc aborts'), 'the working status');
    await t.type('steer this');
    await t.key(KEYS.enter);
    await t.type('and then this');
    await t.key(KEYS.altEnter);
    await t.until(
      (f) =>
        f.includes('queued steering: steer this') &&
        f.includes('queued follow-up: and then this') &&
        f.includes('2 queued'),
      'both queued',
    );
    expect(t.session.getState().pendingMessageCount).toBe(2);
    await t.key(KEYS.esc);
    await t.until((f) => f.includes('Aborted.') && /\/help\s*$/.test(f.trimEnd()), 'the abort notice and idle status');
    expect(t.session.isStreaming).toBe(false);
  });

  it('Ctrl+C asks once, quits on the second press; /exit quits too', async () => {
    const t = await start([{ text: 'x' }]);
    await t.type('draft');
    await t.key(KEYS.ctrlC);
    await t.until(
      (f) => f.includes('Ctrl+C again to quit') && !f.includes('> draft'),
      'the confirmation, editor cleared',
    );
    await t.key(KEYS.ctrlC);
    await t.until(() => t.exited(), 'the exit');
    const u = await start([{ text: 'x' }]);
    await u.type('/exit');
    await u.key(KEYS.enter);
    await u.until(() => u.exited(), 'the exit');
  });

  it('quitting while the agent works stops the run first', async () => {
    const t = await start([{ text: 'Slow.', delayMs: 600_000 }]);
    await t.type('go');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('working · Esc aborts'), 'the run');
    await t.key(KEYS.ctrlC);
    await t.key(KEYS.ctrlC);
    await t.until(() => t.exited(), 'the exit');
    expect(t.session.isStreaming).toBe(false);
  });

  it('/help, /session and an unknown command answer in the conversation', async () => {
    const t = await start([{ text: 'x' }]);
    await t.type('/session');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('file:     (in memory)') && f.includes('cost:     $0.0000'), '/session');
    await t.type('/nope');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Unknown command /nope') && t.idle(f), 'the unknown command');
    await t.type('/help');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Ctrl+C twice') && t.idle(f), '/help');
    expect(t.session.messages).toHaveLength(0);
  });

  it('a run stopped by a cap says so once', async () => {
    const loop = { text: 'Reading again.', tools: [{ name: 'read', args: { path: 'notes.txt' } }] };
    const t = await start([loop, loop, loop], false, undefined, { limits: { maxTurns: 2 } });
    await t.type('read forever');
    await t.key(KEYS.enter);
    await t.until((f) => /max-turns/.test(f) && t.idle(f), 'the stop');
    const stops = t.frame().match(/--max-turns/g) ?? [];
    expect(stops).toHaveLength(1);
  });

  it('/compact on a session shorter than the kept part summarizes all of it (the skip reason, not its wording, decides)', async () => {
    const t = await start([{ text: 'Short answer.' }, { text: '## Goal\nA short question.' }]);
    await t.type('a short question');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Short answer.') && t.idle(f), 'the reply');
    await t.type('/compact');
    await t.key(KEYS.enter);
    await t.until(
      (f) =>
        f.replace(/\s+/g, ' ').includes('(all of it: the session was shorter than the part normally kept)') &&
        t.idle(f),
      'the whole-session compaction',
    );
    expect(t.session.store.currentPath().some((e) => e.type === 'compaction')).toBe(true);
  });

  it('/model shows and switches the model; the status line follows', async () => {
    const t = await start([{ text: 'x' }]);
    await t.type('/model');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Model: scripted (scripted). Switch with /model ID.'), '/model');
    await t.type('/model claude-haiku-4-5');
    await t.key(KEYS.enter);
    await t.until(
      (f) => f.includes('Model: claude-haiku-4-5 from the next prompt on.') && /^claude-haiku-4-5 · ctx/m.test(f),
      'the switch',
    );
    expect(t.session.model.id).toBe('claude-haiku-4-5');
  });

  it('/fork continues from an earlier prompt in a new session file; /new starts an empty session', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interactive-sessions-'));
    const t = await start([{ text: 'Answer A.' }, { text: 'Answer B.' }], false, dir);
    for (const [p, a] of [
      ['prompt A', 'Answer A.'],
      ['prompt B', 'Answer B.'],
    ]) {
      await t.type(p!);
      await t.key(KEYS.enter);
      await t.until((f) => f.includes(a!) && t.idle(f), a!);
    }
    const firstFile = t.session.sessionFile;
    await t.type('/fork');
    await t.key(KEYS.enter);
    await t.until(
      (f) => f.includes('Fork from prompt') && /^>\* user: prompt B$/m.test(f),
      'the fork picker on the last prompt',
    );
    await t.key(KEYS.up);
    await t.until((f) => /^>\* user: prompt A$/m.test(f), 'prompt A selected');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Forked into a new session') && t.idle(f), 'the fork');
    expect(t.session.sessionFile).not.toBe(firstFile);
    // What was printed stays in the scrollback; the fork goes on below a separator.
    const below = t.frame().split('── forked from user: prompt A ──');
    expect(below).toHaveLength(2);
    expect(below[0]).toContain('Answer A.');
    expect(below[1]).not.toContain('Answer A.');
    expect(below[1]).toMatch(/^\n\nForked into a new session:/);
    expect(below[1]!.replace(/\s+/g, ' ')).toContain('. The prompt is in the editor.');
    expect(t.frame()).toMatch(/> prompt A/); // the prompt is back in the editor
    // Clear the editor (Ctrl+U) and start a new session.
    await t.key('\x15');
    await t.until((f) => !f.includes('> prompt A'), 'the editor cleared');
    await t.type('/new');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('New session:') && t.idle(f), '/new');
    expect(t.frame().split('── new session ──')[1]).toMatch(/^\n\nNew session:/);
    expect(t.opened).toHaveLength(1);
    expect(t.controller.currentSession).toBe(t.opened[0]);
    expect(t.controller.currentSession.messages).toHaveLength(0);
  });

  it('without colour every role is unstyled (NO_COLOR); with colour roles have colours', () => {
    const plain = makeTheme(false);
    const coloured = makeTheme(true);
    for (const role of ['user', 'tool', 'toolError', 'error', 'warn', 'status', 'border', 'selected'] as const) {
      expect(plain.style(role)).toEqual({});
      expect(Object.keys(coloured.style(role)).length).toBeGreaterThan(0);
    }
  });
});
