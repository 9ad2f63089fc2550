// The one entry the run command calls: pick the view for the output (live frame on a TTY, plain
// lines otherwise, or JSON lines), feed it the store's events, and print the final summary.
//
// Attach right after the store is created (before the first event) so nothing is missed. Events
// already in the log (a resumed run) are folded into the live and plain views' state, so they
// show what earlier attempts finished, but are not printed again.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunStore } from '../run/run-store.js';
import { formatFinalSummary } from './final-summary.js';
import { attachJsonLines } from './json-lines.js';
import { LiveView, type LiveOutput } from './live-view.js';
import { PlainLog } from './plain-log.js';
import { RunView, type RunViewOptions } from './run-view.js';
import { makePainter } from './terminal-text.js';

export type RunDisplayMode = 'live' | 'plain' | 'json' | 'json-full';

export interface RunDisplayOptions {
  /** Where progress goes (stderr). */
  stream: LiveOutput;
  /** Where the final summary (or the JSON lines) goes. */
  stdout: Pick<NodeJS.WritableStream, 'write'> & { isTTY?: boolean; columns?: number };
  /** Whether `stream` is a terminal; 'live' falls back to 'plain' when it is not. */
  isTTY: boolean;
  /** Colour allowed (already false for NO_COLOR / --no-color). */
  color: boolean;
  /** Colour in the final summary on stdout (default: `color` when stdout is a terminal). */
  summaryColor?: boolean;
  budgetUsd?: number;
  mode: RunDisplayMode;
  /**
   * Keys for the live view (a TTY stdin): select, open, steer, cancel, retry (run-view.ts).
   * Ignored unless the view is 'live'; without it the live view only shows.
   */
  interactive?: InteractiveOptions;
}

/** What the driveable view needs besides the live view's own options. */
export type InteractiveOptions = Pick<
  RunViewOptions,
  'input' | 'control' | 'readOnly' | 'by' | 'onInterrupt' | 'onQuit'
>;

export interface RunDisplayResult {
  /** Defaults to plan.md in the run folder when it exists. */
  planFile?: string;
  /** Defaults to result.json in the run folder when it exists. */
  resultFile?: string;
  /** Path of report.html when the run wrote one. */
  reportFile?: string;
  /** Another coordinator took the run over: no resume line. */
  noResume?: boolean;
}

export interface RunDisplay {
  readonly mode: RunDisplayMode;
  /** Stops the view and prints the summary (nothing extra in JSON modes: run_end is the last line). Idempotent. */
  finish(result?: RunDisplayResult): void;
  /** A message for the user (e.g. "interrupting..."): above the live frame, or a plain line; stderr in JSON modes. */
  note(text: string): void;
}

export function attachRunDisplay(store: RunStore, options: RunDisplayOptions): RunDisplay {
  const mode: RunDisplayMode = options.mode === 'live' && !options.isTTY ? 'plain' : options.mode;
  let finished = false;

  if (mode === 'json' || mode === 'json-full') {
    const detach = attachJsonLines(store, options.stdout, { full: mode === 'json-full' });
    return {
      mode,
      finish() {
        if (finished) return;
        finished = true;
        detach();
      },
      note(text) {
        options.stream.write(text.endsWith('\n') ? text : `${text}\n`);
      },
    };
  }

  const history = store.read().events;
  const view =
    mode === 'live'
      ? options.interactive
        ? new RunView(options.stream, {
            color: options.color,
            budgetUsd: options.budgetUsd,
            runDir: store.dir,
            ...options.interactive,
          })
        : new LiveView(options.stream, { color: options.color, budgetUsd: options.budgetUsd })
      : new PlainLog(options.stream, { budgetUsd: options.budgetUsd });
  for (const e of history) view.absorb(e);
  const detach = store.subscribe((e) => {
    view.handle(e);
    // A run-wide warning (e.g. commands running without the sandbox) is shown once, as it comes.
    if (
      e.type === 'agent_event' &&
      e.event.type === 'notice' &&
      typeof e.event.text === 'string' &&
      e.event.text.startsWith('warning: ')
    ) {
      const text = `${e.key}: ${e.event.text}`;
      if (view instanceof LiveView) view.note(text);
      else options.stream.write(`${text}\n`);
    }
  });
  if (view instanceof LiveView) view.start();

  return {
    mode,
    note(text) {
      if (view instanceof LiveView && !finished) view.note(text);
      else options.stream.write(text.endsWith('\n') ? text : `${text}\n`);
    },
    finish(result = {}) {
      if (finished) return;
      finished = true;
      detach();
      if (view instanceof LiveView) view.stop();
      const inRun = (name: string) => (existsSync(join(store.dir, name)) ? join(store.dir, name) : undefined);
      options.stdout.write(
        formatFinalSummary(view.state, {
          budgetUsd: options.budgetUsd,
          planFile: result.planFile ?? inRun('plan.md'),
          resultFile: result.resultFile ?? inRun('result.json'),
          reportFile: result.reportFile,
          runDir: store.dir,
          ...changesetCount(store.dir),
          ...(result.noResume ? { noResume: true } : {}),
          painter: makePainter(options.summaryColor ?? (options.color && options.stdout.isTTY === true)),
          width: options.stdout.isTTY === true ? options.stdout.columns : undefined,
        }),
      );
    },
  };
}

/** How many changesets the run folder's changesets.json holds; none when it has none or cannot be read. */
function changesetCount(dir: string): { changesets?: number } {
  try {
    const file: unknown = JSON.parse(readFileSync(join(dir, 'changesets.json'), 'utf8'));
    const list = file && typeof file === 'object' ? (file as { changesets?: unknown }).changesets : undefined;
    return Array.isArray(list) ? { changesets: list.length } : {};
  } catch {
    return {}; // no changesets.json (no task publishes), or one `show` reports as damaged
  }
}
