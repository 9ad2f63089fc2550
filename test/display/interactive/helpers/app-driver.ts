// The interactive app driven like a user through ink-testing-library (ink's debug mode: every
// frame is the whole output): keys go in through its stdin, waits and assertions read the frame.
// One driver for the app's tests; each test builds its own session and controller.
import { render } from 'ink-testing-library';
import React from 'react';
import { InteractiveApp, type InteractiveController } from '../../../../src/display/interactive/run-interactive.js';
import { makeTheme } from '../../../../src/display/interactive/theme.js';
import type { AgentSession } from '../../../../src/runtime/index.js';

export interface AppDriver {
  app: ReturnType<typeof render>;
  frame: () => string;
  /** Waits (bounded) until the frame satisfies `ok`; fails with the frame. */
  until: (ok: (f: string) => boolean, what: string) => Promise<void>;
  /** Types text (waits until the editor shows it). */
  type: (text: string) => Promise<void>;
  /** Sends a key and lets the app take it. */
  key: (k: string) => Promise<void>;
  /** The run is over (status line back to idle). */
  idle: (f: string) => boolean;
}

/** Renders the app around `controller`; unmounting it and disposing `session` go to `cleanups`. */
export function mountApp(
  controller: InteractiveController,
  session: AgentSession,
  cleanups: (() => unknown)[],
  color = false,
): AppDriver {
  const app = render(React.createElement(InteractiveApp, { controller, theme: makeTheme(color) }));
  cleanups.push(
    () => app.unmount(),
    () => session.dispose(),
  );
  const frame = () => app.lastFrame() ?? '';
  const until = async (ok: (f: string) => boolean, what: string) => {
    const t0 = Date.now();
    while (!ok(frame())) {
      if (Date.now() - t0 > 20_000) throw new Error(`timed out waiting for ${what}; frame:\n${frame()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const type = async (text: string) => {
    app.stdin.write(text);
    await until((f) => f.split('─'.repeat(10)).at(-1)!.includes(text), `"${text}" in the editor`);
  };
  const key = async (k: string) => {
    app.stdin.write(k);
    await new Promise((r) => setImmediate(r));
  };
  const idle = (f: string) => /\/help\s*$/.test(f.trimEnd());
  return { app, frame, until, type, key, idle };
}
