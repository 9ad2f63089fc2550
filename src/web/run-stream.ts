// The live feed of one page over Server-Sent Events: the run's snapshot each time its fold moved
// (run.jsonl grew, or acting on it became possible or impossible), and, for the instance the page
// has open, its conversation each time the session file grew or the reply being written changed.
// run.jsonl and the session file are looked at a few times a second, as `orchestrate watch` does;
// an event is sent only when what the page would show changed. The runs list streams the same
// way, less often. The stream ends when the page goes away.
import { readdirSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { RUN_LOG } from '../run/run-store.js';
import { listRunsIn } from '../service/list-runs.js';
import { RunFeed } from '../service/run-feed.js';
import { conversationView, runSnapshot } from './run-snapshot.js';

export interface StreamTimings {
  /** How often run.jsonl is read (default 150 ms, as `watch`). */
  runPollMs: number;
  /** How often the open conversation's session file is looked at and its agent peeked (200 ms, as the run view). */
  conversationPollMs: number;
  /** How often the runs folder is listed again (1 s). */
  listPollMs: number;
  /** A comment line this often keeps proxies and the browser from closing an idle stream. */
  keepAliveMs: number;
}

export const STREAM_TIMINGS: StreamTimings = {
  runPollMs: 150,
  conversationPollMs: 200,
  listPollMs: 1_000,
  keepAliveMs: 15_000,
};

/** Ticks with nothing new after which a stream looks again anyway. */
const IDLE_REFRESH_TICKS = 10;

/** The size and time of every run log in the folder: changes whenever any run writes an event. */
function logsSignature(runsDir: string): string {
  let names: string[];
  try {
    names = readdirSync(runsDir);
  } catch {
    return '';
  }
  return names
    .map((n) => {
      try {
        const st = statSync(join(runsDir, n, RUN_LOG));
        return `${n}:${st.size}:${st.mtimeMs}`;
      } catch {
        return '';
      }
    })
    .join('|');
}

/** Starts an event stream on `res`; returns a send function and ends the timers when the page goes. */
function openStream(req: IncomingMessage, res: ServerResponse, keepAliveMs: number, onClose: () => void) {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': orchestrate\n\n');
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
  const last = new Map<string, string>();
  req.once('close', () => {
    clearInterval(keepAlive);
    onClose();
  });
  /** Sends `data` as event `name`, unless it is what was sent last under that name. */
  return (name: string, data: unknown): void => {
    const json = JSON.stringify(data);
    if (last.get(name) === json) return;
    last.set(name, json);
    res.write(`event: ${name}\ndata: ${json}\n\n`);
  };
}

/** The runs of `runsDir`, newest first, whenever the list changes. */
export function streamRunList(req: IncomingMessage, res: ServerResponse, runsDir: string, t = STREAM_TIMINGS): void {
  let timer: NodeJS.Timeout | undefined;
  const send = openStream(req, res, t.keepAliveMs, () => clearInterval(timer));
  // Listing reads every run's log: do it when a log changed, and now and then for leases that
  // went stale (a coordinator killed without a word changes no file).
  let seen = '';
  let idle = 0;
  const tick = () => {
    const now = logsSignature(runsDir);
    if (now === seen && ++idle < IDLE_REFRESH_TICKS) return;
    seen = now;
    idle = 0;
    const listed = listRunsIn(runsDir);
    send('runs', listed.ok ? { runs: listed.runs.map(({ holder: _h, ...r }) => r) } : { error: listed.message });
  };
  tick();
  timer = setInterval(tick, t.listPollMs);
}

/** One run (and the conversation of `instance`, when given) as it changes. */
export function streamRun(
  req: IncomingMessage,
  res: ServerResponse,
  runDir: string,
  instance: string | undefined,
  t = STREAM_TIMINGS,
): void {
  const feed = new RunFeed(runDir);
  const timers: NodeJS.Timeout[] = [];
  let closed = false;
  const send = openStream(req, res, t.keepAliveMs, () => {
    closed = true;
    for (const timer of timers) clearInterval(timer);
  });
  // A snapshot is built when the log moved or acting became (im)possible, and now and then for
  // what lives beside the log (a campaign's changesets-status.jsonl).
  let lastReadOnly: string | undefined | null = null;
  let idle = 0;
  const runTick = () => {
    const moved = feed.poll();
    const readOnly = feed.readOnly();
    if (!moved && readOnly === lastReadOnly && ++idle < IDLE_REFRESH_TICKS) return;
    lastReadOnly = readOnly;
    idle = 0;
    // Until its run_start is there, there is no run to draw (it is not an empty run "running").
    if (feed.state.start) send('run', runSnapshot(feed.state, runDir, readOnly));
  };
  runTick();
  timers.push(setInterval(runTick, t.runPollMs));
  if (instance === undefined) return;

  let peeking = false;
  let writing = '';
  let writingAt = -1;
  const conversationTick = () => {
    const inst = [...feed.state.instances.values()].find((i) => i.key === instance || i.label === instance);
    if (!inst) {
      send('conversation', { instance, missing: true });
      return;
    }
    const conv = feed.conversation(inst);
    // Once the session file holds more (the finished reply), the peeked text is stale.
    const shown = writingAt >= 0 && conv.items.length <= writingAt ? writing : '';
    send('conversation', conversationView(inst, conv, shown));
    if (peeking) return;
    peeking = true;
    const items = conv.items.length;
    void feed.writing(inst).then(
      (text) => {
        peeking = false;
        if (closed) return;
        writing = text;
        writingAt = text ? items : -1;
      },
      () => {
        peeking = false;
      },
    );
  };
  conversationTick();
  timers.push(setInterval(conversationTick, t.conversationPollMs));
}
