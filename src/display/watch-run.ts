// `orchestrate watch <run>`: the run view of a run that another process coordinates. It follows
// run.jsonl (and, for an open conversation, the instance's session file) and sends actions over
// the run's control socket while a coordinator holds the run's lease on this host. A finished run,
// or one nobody holds, opens read-only. Without a terminal it prints the plain log lines, the
// history first, as they come, until the run ends or its coordinator goes away, then a campaign's
// changesets and burndown.
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { RunControl } from '../run/run-control.js';
import { readRunLease } from '../run/run-lease.js';
import { RUN_LOG } from '../run/run-store.js';
import { changesetsBlock } from './changesets-text.js';
import type { LiveOutput } from './live-view.js';
import { PlainLog } from './plain-log.js';
import { RunLogFollower } from './run-log-follower.js';
import type { RunState } from '../run/run-fold.js';
import { RunView, type KeyInput } from './run-view.js';

export interface WatchOptions {
  /** Where the view (or the plain lines) goes: stderr on a terminal, stdout otherwise. */
  stream: LiveOutput;
  /** The keyboard; with `interactive` the view is drawn and driven, else plain lines. */
  input?: KeyInput;
  interactive: boolean;
  color: boolean;
  /** Opens the run's control channel (the socket client). */
  connect: (runDir: string) => RunControl;
  /** Who acts: "watch (pid 12, ana)". */
  by: string;
  /** How often run.jsonl and the lease are looked at (default 150 ms). */
  pollMs?: number;
  /** Ends a plain follow early (tests); the view ends with q or Ctrl-C. */
  signal?: AbortSignal;
}

/** Why actions cannot work now, or undefined when a coordinator on this host holds the run. */
export function readOnlyReason(runDir: string, state: RunState): string | undefined {
  if (state.status !== 'running' && state.eventCount > 0)
    return `the run has ended (${state.status.replace('_', ' ')})`;
  const lease = readRunLease(runDir);
  if (lease?.state.state !== 'live')
    return 'no coordinator holds the run (it stopped; `orchestrate resume` continues it)';
  if (lease.holder.host !== hostname()) return `its coordinator runs on ${lease.holder.host}; watch from there to act`;
  return undefined;
}

/** Follows the run until it is over (plain) or the user quits (view). Resolves with the exit code. */
export async function watchRun(runDir: string, options: WatchOptions): Promise<number> {
  const follower = new RunLogFollower(join(runDir, RUN_LOG));
  const pollMs = options.pollMs ?? 150;
  const history = follower.poll();

  if (!options.interactive || !options.input) {
    const log = new PlainLog(options.stream);
    for (const e of history) log.handle(e);
    // Follow while someone works on the run; a finished or abandoned run prints its log and ends.
    while (!options.signal?.aborted && readOnlyReason(runDir, log.state) === undefined) {
      await new Promise((r) => setTimeout(r, pollMs));
      for (const e of follower.poll()) log.handle(e);
    }
    for (const e of follower.poll()) log.handle(e);
    // A campaign's changesets and burndown, as last observed (plain text: this is no terminal).
    const changesets = changesetsBlock(runDir, log.state);
    if (changesets.length) options.stream.write(`\n${changesets.join('\n')}\n`);
    return 0;
  }

  const input = options.input;
  return new Promise<number>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let view: RunView;
    const quit = () => {
      if (timer) clearInterval(timer);
      view.stop();
      resolve(0);
    };
    view = new RunView(options.stream, {
      color: options.color,
      input,
      runDir,
      control: options.connect(runDir),
      by: options.by,
      onInterrupt: quit,
      onQuit: quit,
    });
    for (const e of history) view.absorb(e);
    view.setReadOnly(readOnlyReason(runDir, view.state));
    view.start();
    timer = setInterval(() => {
      for (const e of follower.poll()) view.handle(e);
      view.setReadOnly(readOnlyReason(runDir, view.state));
    }, pollMs);
  });
}
