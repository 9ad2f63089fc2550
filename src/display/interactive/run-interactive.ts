// Entry of the interactive mode (`orchestrate agent` on a terminal): renders the Screen with ink
// and resolves with the exit code once the user quits. The CLI imports this module lazily, so
// ink and React load only in this mode.
import { render, useInput, useStdout } from 'ink';
import React, { useEffect, useState, useSyncExternalStore } from 'react';
import type { AgentSession } from '../../runtime/agent-session.js';
import { shouldUseColor } from '../terminal-text.js';
import { InteractiveController } from './controller.js';
import { makeTheme, type Theme } from './theme.js';
import { Screen } from './views.js';

const h = React.createElement;

export interface InteractiveOptions {
  /** Sent as the first prompt once the screen is up (after finishing a turn a kill cut off). */
  initialPrompt?: string;
  /** Opens a fresh session for /new. */
  newSession?: () => Promise<AgentSession>;
  env?: NodeJS.ProcessEnv;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  /** Called with the controller once it exists (tests). */
  onController?: (c: InteractiveController) => void;
}

/** Terminal size, following resizes. ink-testing-library's stdout has no rows: 24 then. */
function useTerminalSize(): { width: number; height: number } {
  const { stdout } = useStdout();
  const read = () => ({ width: stdout.columns || 80, height: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => void stdout.off('resize', onResize);
  }, [stdout]);
  return size;
}

export function InteractiveApp(props: { controller: InteractiveController; theme: Theme }): React.ReactElement {
  const { controller, theme } = props;
  const state = useSyncExternalStore(controller.subscribe, controller.getState);
  const { width, height } = useTerminalSize();
  useInput((input, key) => controller.handleKey(input, key));
  // The live part stays shorter than the terminal: ink clears the screen and the scrollback to
  // redraw a frame as tall as it.
  return h(Screen, { state, theme, width, height: Math.max(6, height - 1) });
}

/** Runs the interactive mode on `session` until the user quits; resolves with the exit code. */
export async function runInteractiveMode(session: AgentSession, options: InteractiveOptions = {}): Promise<number> {
  const theme = makeTheme(shouldUseColor({ isTTY: true, env: options.env ?? process.env }));
  let exit: () => void = () => undefined;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  const controller = new InteractiveController(session, { newSession: options.newSession, onExit: () => exit() });
  options.onController?.(controller);
  const app = render(h(InteractiveApp, { controller, theme }), {
    stdin: options.stdin ?? process.stdin,
    stdout: options.stdout ?? process.stdout,
    exitOnCtrlC: false,
    patchConsole: true,
    // Shift+Enter is its own key only under the kitty keyboard protocol; 'auto' turns it on in
    // terminals known to support it (kitty, WezTerm, ghostty) and leaves others alone.
    kittyKeyboard: { mode: 'auto' },
  });
  // A turn a kill cut off is finished before the initial prompt goes out.
  void controller.start(options.initialPrompt);
  await exited;
  app.unmount();
  await app.waitUntilExit().catch(() => undefined);
  return 0;
}

export { InteractiveController };
