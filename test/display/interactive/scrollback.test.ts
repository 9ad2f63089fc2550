// The interactive app drawn by ink as on a terminal (not ink's debug mode, which
// ink-testing-library uses and which redraws everything every frame): a fake 80x24 TTY stdout
// records every byte ink writes. Finished items are written once (Static) and never again, however
// many frames the live part below them is redrawn; a streamed reply taller than the screen is
// shown by its tail while it streams (ink would clear the terminal, scrollback included, to redraw
// a frame as tall as the screen) and printed whole once finished; a resize changes the width of
// what is printed next, not what is printed. Every wait is on the written output (bounded).
import { EventEmitter } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import React from 'react';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/ai/models.js';
import { makeTheme } from '../../../src/display/interactive/theme.js';
import { stripAnsi } from '../../../src/display/terminal-text.js';
import { createAgentSession } from '../../../src/runtime/index.js';
import { releasedSteps, textDeltaStream } from './helpers/stepped-stream.js';
import { QUIET_SESSION } from './helpers/quiet-session.js';

// ink decides when it is imported whether it runs in CI (CI=true: it writes only Static output and
// the last frame, nothing here to observe). This test is about a terminal, so the CI variables are
// cleared before ink (and the app, which imports it) is loaded, and put back afterwards for the
// test files that run later in this process (each file loads its own ink).
const ciVars = ['CI', 'CONTINUOUS_INTEGRATION'] as const;
const savedCi = ciVars.map((k) => [k, process.env[k]] as const);
for (const k of ciVars) delete process.env[k];
afterAll(() => {
  for (const [k, v] of savedCi) if (v !== undefined) process.env[k] = v;
});
const { render } = await import('ink');
const { InteractiveApp, InteractiveController } = await import('../../../src/display/interactive/run-interactive.js');

class FakeTty extends EventEmitter {
  isTTY = true;
  columns = 80;
  rows = 24;
  written = '';
  write = (chunk: string): boolean => {
    this.written += chunk;
    return true;
  };
}

/** Enough of a TTY stdin for ink's useInput (raw mode on, nothing typed). */
class FakeStdin extends EventEmitter {
  isTTY = true;
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read(): null {
    return null;
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Replies: `Reply number N.` for plain prompts; "tall" streams 40 lines, one delta each, each released by the test. */
async function start() {
  const { release, next } = releasedSteps();
  const streamFn = textDeltaStream(
    (prompt) =>
      prompt === 'tall'
        ? { deltas: Array.from({ length: 40 }, (_, i) => `${i === 0 ? '' : '\n'}tall line ${i + 1}`), stepped: true }
        : { deltas: [`Reply number ${prompt.replace('prompt ', '')}.`], stepped: false },
    { next },
  );
  const session = await createAgentSession({
    cwd: mkdtempSync(join(tmpdir(), 'interactive-scrollback-')),
    inMemory: true,
    model: scriptedModel(),
    streamFn,
    tools: [],
    ...QUIET_SESSION,
  });
  const controller = new InteractiveController(session, { onExit: () => undefined });
  const stdout = new FakeTty();
  const app = render(React.createElement(InteractiveApp, { controller, theme: makeTheme(false) }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: new FakeStdin() as unknown as NodeJS.ReadStream,
    stderr: new FakeTty() as unknown as NodeJS.WriteStream,
    debug: false,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  cleanups.push(
    () => app.unmount(),
    () => session.dispose(),
  );
  const text = () => stripAnsi(stdout.written);
  const until = async (ok: () => boolean, what: string) => {
    const t0 = Date.now();
    while (!ok()) {
      if (Date.now() - t0 > 20_000) throw new Error(`timed out waiting for ${what}; output:\n${text().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const idle = () => controller.state.activity === 'idle';
  const count = (s: string) => text().split(s).length - 1;
  return { controller, stdout, text, until, idle, count, release };
}

describe('the conversation in the terminal scrollback (ink on a fake 80x24 terminal)', () => {
  it('prints each finished item once; later deltas redraw only the live part; a reply taller than the screen shows its tail, then is printed whole', async () => {
    const t = await start();
    for (let i = 1; i <= 8; i++) {
      t.controller.submit(`prompt ${i}`);
      await t.until(() => t.text().includes(`Reply number ${i}.`) && t.idle(), `reply ${i}`);
    }
    const written = t.stdout.written.length;
    t.controller.submit('tall');
    for (let i = 1; i <= 40; i++) {
      t.release();
      await t.until(
        () => t.stdout.written.slice(written).includes(`tall line ${i}\n`) || (i === 40 && t.idle()),
        `tall line ${i} drawn`,
      );
    }
    await t.until(
      () => t.idle() && t.controller.state.printedUpTo === t.controller.state.transcript.items.length,
      'the tall reply printed',
    );
    await t.until(() => /\/help\s*$/.test(t.text()), 'the idle status line');

    // The live part was redrawn for every delta (the first line of the reply many times, while it
    // was on screen), but nothing printed before it was written again: a prompt is printed at once
    // and only once, a reply is drawn live while it streams and then printed once.
    const later = stripAnsi(t.stdout.written.slice(written));
    expect(later.split('tall line 1\n').length - 1).toBeGreaterThan(5);
    for (let i = 1; i <= 8; i++) {
      expect(t.count(`› prompt ${i}\n`), `prompt ${i}`).toBe(1);
      expect(later, `prompt ${i}`).not.toContain(`› prompt ${i}\n`);
      expect(later, `reply ${i}`).not.toContain(`Reply number ${i}.`);
    }
    expect(t.count('› tall\n')).toBe(1);
    // While streaming, the reply showed its tail under a line saying how much is above it; the
    // frame never filled the screen, so ink never cleared the terminal (and its scrollback).
    expect(t.text()).toMatch(/… \d+ rows above \(printed in full once finished\)/);
    expect(t.stdout.written).not.toContain('\x1b[2J');
    expect(t.stdout.written).not.toContain('\x1b[3J');
    // Once finished, the whole reply is printed, every line in order, once.
    const whole = Array.from({ length: 40 }, (_, i) => `tall line ${i + 1}`).join('\n');
    expect(t.text().split(whole)).toHaveLength(2);
  });

  it('after a resize what is printed next has the new width; what is printed stays as it was, not written again', async () => {
    const t = await start();
    const long = `prompt ${'x'.repeat(60)} end`;
    t.controller.submit(long);
    await t.until(() => t.idle() && t.controller.state.printedUpTo === 2, 'the first reply printed');
    expect(t.count(`› ${long}\n`)).toBe(1); // 72 cells: one row at 80 columns
    t.stdout.columns = 40;
    t.stdout.emit('resize');
    // The editor's top border, 40 wide, is the sign of a frame drawn at the new width.
    await t.until(() => t.text().includes(`\n${'─'.repeat(40)}\n`), 'the live part redrawn at 40 columns');
    t.controller.submit(long);
    await t.until(() => t.idle() && t.controller.state.printedUpTo === 4, 'the second reply printed');
    await t.until(() => /\/help\s*$/.test(t.text()), 'the idle status line');
    // The first prompt was not printed again; the second is wrapped at 40 columns.
    expect(t.count(`› ${long}\n`)).toBe(1);
    expect(t.text()).toContain(`› prompt\n${'x'.repeat(40)}\n${'x'.repeat(20)} end\n`);
  });
});
