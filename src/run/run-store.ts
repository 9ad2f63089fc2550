// The run store: `.orchestrate/runs/<run-id>/` with run.jsonl (append-only event log),
// sessions/ (one session file per instance), plan.md, result.json and patches/.
//
// Durability: an event that the run's state depends on (lifecycle, usage, messages: everything
// but the agents' own event stream) is written to the log (write(2)) before append() returns, so
// it is in the kernel's page cache and survives a kill -9 of this process (not a power loss; we
// do not fsync per event because that would cost milliseconds per agent event). The agents'
// events (agent_event, permit_grant: what a display shows, thousands per run) are written
// together at the end of the current event-loop turn, or before the next state event, whichever
// comes first, so the log keeps their order; a kill -9 can lose that turn's display events, never
// a state event. The log is opened (O_APPEND) at the first write of a turn and closed at its end:
// each state event is still one write(2) before append() returns, without an open and a close
// each. A torn last line left by a kill mid-write is skipped on read, and the next append starts
// on a fresh line.
// plan.md, result.json and patches are replaced atomically and durably (tools/atomic-write.ts).
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Redactor } from '../session/redact.js';
import { replaceFile, replaceFileSync } from '../tools/atomic-write.js';
import { liveLeaseHolder, type LeaseHolder } from './run-lease.js';
import { RUN_EVENT_VERSION, RunEventSchema, type RunEvent, type RunEventInput } from './run-events.js';
import { foldEvents } from './run-fold.js';
import { runRootOf, toAbsolutePaths, toStoredPaths } from './run-paths.js';

export const RUN_LOG = 'run.jsonl';

/** Events only a display needs, written at the end of the event-loop turn (see Durability above). */
const DISPLAY_EVENTS: ReadonlySet<string> = new Set(['agent_event', 'permit_grant', 'permit_wait']);

export function newRunId(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

export interface ReadLog {
  events: RunEvent[];
  /** Lines that could not be parsed (torn last line, garbage), with their line numbers. */
  skipped: { line: number; reason: string }[];
}

/** Reads a run log; paths stored relative to the run (see run-paths.ts) come back absolute. */
export function readRunLog(file: string): ReadLog {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const events: RunEvent[] = [];
  const skipped: ReadLog['skipped'] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      skipped.push({ line: i + 1, reason: i === lines.length - 1 ? 'torn last line' : 'not JSON' });
      return;
    }
    const parsed = RunEventSchema.safeParse(raw);
    if (parsed.success) events.push(parsed.data);
    else skipped.push({ line: i + 1, reason: 'not a run event' });
  });
  const runDir = dirname(resolve(file));
  const root = runRootOf(
    runDir,
    events.find((e) => e.type === 'run_start'),
  );
  return { events: events.map((e) => toAbsolutePaths(e, runDir, root)), skipped };
}

export interface RunStoreOptions {
  /** Keeps secrets out of the log, out of every file written here, and out of what listeners see. */
  redactor?: Redactor;
}

export class RunStore {
  readonly dir: string;
  readonly runId: string;
  private readonly redactor: Redactor | undefined;
  private needsNewline: boolean;
  /** Listeners see each event right after it is written (display, --json). */
  private readonly listeners: ((e: RunEvent) => void)[] = [];
  /** Set when the log cannot be written; the coordinator stops the run cleanly. */
  writeError: Error | undefined;
  readonly logFile: string;
  /** Display events waiting for the end of this event-loop turn (see Durability above). */
  private pending = '';
  private flushScheduled = false;
  /** The run's root (absolute): paths in events are stored relative to it (run-paths.ts). */
  private root: string | undefined;

  private constructor(dir: string, runId: string, options: RunStoreOptions = {}) {
    this.dir = dir;
    this.runId = runId;
    this.redactor = options.redactor;
    mkdirSync(join(dir, 'sessions'), { recursive: true });
    const log = join(dir, RUN_LOG);
    this.logFile = log;
    // A torn last line (kill -9 mid-write) must not glue itself to the next event.
    const text = existsSync(log) && statSync(log).size > 0 ? readFileSync(log, 'utf8') : '';
    this.needsNewline = text !== '' && !text.endsWith('\n');
    this.root = runRootOf(dir, firstRunStart(text));
  }

  static create(runsDir: string, runId = newRunId(), options: RunStoreOptions = {}): RunStore {
    const dir = resolve(runsDir, runId);
    if (existsSync(join(dir, RUN_LOG))) throw new Error(`run ${runId} already exists in ${runsDir}`);
    return new RunStore(dir, runId, options);
  }

  static open(dir: string, options: RunStoreOptions = {}): RunStore {
    const abs = resolve(dir);
    if (!existsSync(join(abs, RUN_LOG))) throw new Error(`${abs} is not a run folder (no ${RUN_LOG})`);
    return new RunStore(abs, abs.split('/').filter(Boolean).pop() ?? 'run', options);
  }

  /** Text as this run may print it: its secrets replaced (the CLI passes its output through this). */
  redactText(text: string): string {
    return this.redactor ? this.redactor.text(text) : text;
  }

  sessionFile(key: string): string {
    return join(this.dir, 'sessions', `${key}.jsonl`);
  }

  subscribe(fn: (e: RunEvent) => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Stamps and appends one event; returns it. A write failure is kept in `writeError`, not thrown. */
  append(input: RunEventInput): RunEvent {
    if (input.type === 'run_start' && input.recipe) this.root = dirname(resolve(input.recipe));
    const raw = {
      v: RUN_EVENT_VERSION,
      ts: Date.now(),
      runId: this.runId,
      ...toStoredPaths(input, this.dir, this.root),
    } as RunEvent;
    const { value: event, json } = this.redactor
      ? this.redactor.serialize(raw)
      : { value: raw, json: JSON.stringify(raw) };
    if (!this.writeError) {
      this.pending += `${json}\n`;
      if (DISPLAY_EVENTS.has(event.type)) this.scheduleFlush();
      else this.flush();
    }
    for (const l of this.listeners) l(event);
    return event;
  }

  /** Writes every event appended so far (every state event does this first; see Durability). */
  flush(): void {
    if (!this.pending || this.writeError || this.fencedBy) return;
    const text = (this.needsNewline ? '\n' : '') + this.pending;
    this.pending = '';
    try {
      this.writeLog(text);
      this.needsNewline = false;
    } catch (err) {
      this.writeError = err instanceof Error ? err : new Error(String(err));
      this.onWriteError?.(this.writeError);
    }
  }

  /** run.jsonl, open for appending during this event-loop turn (see Durability above). */
  private turnFd: number | undefined;

  /**
   * Appends `text` to run.jsonl now (in the page cache when this returns). The descriptor is kept
   * for the rest of the turn: a burst of state events in one turn (a 1,000-agent run logs them by
   * the dozen) costs a write each, not an open, a write and a close (#41). Closed at the turn's
   * end, so a run folder moved or a log replaced between turns is written where it now is.
   */
  private writeLog(text: string): void {
    if (this.turnFd === undefined) {
      this.turnFd = openSync(this.logFile, 'a');
      setImmediate(() => this.closeTurnFd());
    }
    const bytes = Buffer.from(text, 'utf8');
    for (let off = 0; off < bytes.length; ) off += writeSync(this.turnFd, bytes, off, bytes.length - off);
  }

  private closeTurnFd(): void {
    const fd = this.turnFd;
    this.turnFd = undefined;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // nothing was left unwritten: every write returned
    }
  }

  /** Set when this coordinator lost the run's lease: another one owns the folder now, nothing more is written. */
  private fencedBy: string | undefined;

  /** Stops every write to the run folder (the log, plan.md, result.json); events still reach listeners. */
  fence(reason: string): void {
    this.fencedBy = reason;
    this.pending = '';
  }

  /** Told when a write fails, including a deferred one (append() only records it). */
  onWriteError: ((err: Error) => void) | undefined;

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  read(): ReadLog {
    return readRunLog(this.logFile);
  }

  private redactFile(content: string): string {
    return this.redactor ? redactFileContent(this.redactor, content) : content;
  }

  /** Atomically replaces a file in the run folder. */
  writeFile(name: string, content: string): string {
    const target = join(this.dir, name);
    if (this.fencedBy) return target;
    mkdirSync(join(target, '..'), { recursive: true });
    // Replacing the log itself: the descriptor kept for this turn points at the file being replaced,
    // so the next append must open the new one.
    if (resolve(target) === resolve(this.logFile)) this.closeTurnFd();
    replaceFileSync(target, this.redactFile(content)); // removes its half-written temp file on failure
    return target;
  }

  /**
   * writeFile without blocking the event loop (the coordinator's plan.md and result.json): the
   * same atomic, durable replacement. A write already under way when the run is fenced still lands.
   */
  async writeFileAsync(name: string, content: string): Promise<string> {
    const target = join(this.dir, name);
    if (this.fencedBy) return target;
    // The run folder itself exists (made with sessions/): only a subfolder may need making.
    if (dirname(target) !== this.dir) await mkdir(dirname(target), { recursive: true });
    if (resolve(target) === resolve(this.logFile)) this.closeTurnFd();
    await replaceFile(target, this.redactFile(content));
    return target;
  }
}

/** The run_start of a log's text (its first event), or undefined. */
function firstRunStart(text: string): { root?: string; recipe: string } | undefined {
  for (const line of text.split('\n', 20)) {
    try {
      const e = JSON.parse(line) as { type?: unknown; root?: unknown; recipe?: unknown };
      if (e.type === 'run_start' && typeof e.recipe === 'string')
        return { recipe: e.recipe, ...(typeof e.root === 'string' ? { root: e.root } : {}) };
    } catch {
      // a torn or foreign line: look at the next one
    }
  }
  return undefined;
}

/** JSON content is redacted string by string (and written back in the same layout); other text as text. */
function redactFileContent(redactor: Redactor, content: string): string {
  if (!redactor.has(content)) return content;
  const trimmed = content.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(content);
      const pretty = /^[{[]\n/.test(trimmed);
      return JSON.stringify(redactor.value(value), null, pretty ? 2 : undefined) + (content.endsWith('\n') ? '\n' : '');
    } catch {
      // not JSON after all: redact as text
    }
  }
  return redactor.text(content);
}

export interface RunListing {
  runId: string;
  dir: string;
  recipe: string;
  name: string;
  startedAt: number;
  status: string;
  cost: number;
  /** The coordinator working on the run now (status `running`), from the run's lease. */
  holder?: LeaseHolder;
  /**
   * Approval gates that wait for an answer (`orchestrate approve|reject`): instance keys,
   * `publish:<task>` for a publish gate and `follow-up:<instance>` for a follow-up round's gate.
   * A run stopped at a gate (interrupted) waits as well.
   */
  waiting?: string[];
}

/**
 * The approval gates of a run that wait for an answer: the instances at a task's gate, and the
 * publish gates (with their prompts). Folded only when the log asked for an approval at all, so
 * listing many runs without gates folds none of them.
 */
export function waitingGates(events: readonly RunEvent[]): {
  instances: string[];
  publish: { task: string; prompt: string }[];
  /** Instances whose latest follow-up round waits at its gate (publish.follow_up.approve). */
  followUps: string[];
} {
  if (!events.some((e) => e.type === 'approval_requested')) return { instances: [], publish: [], followUps: [] };
  const fold = foldEvents(events);
  const instances = [...fold.instances.values()];
  return {
    instances: instances.filter((i) => i.status === 'waiting').map((i) => i.key),
    publish: [...fold.publishGates]
      .filter(([, g]) => g.state === 'waiting')
      .map(([task, g]) => ({ task, prompt: g.prompt })),
    followUps: instances.filter((i) => i.followUps?.some((f) => f.approval?.state === 'waiting')).map((i) => i.key),
  };
}

/** Lists runs under a runs folder, newest first, from their logs (no result.json needed). */
export function listRuns(runsDir: string): RunListing[] {
  if (!existsSync(runsDir)) return [];
  const out: RunListing[] = [];
  for (const name of readdirSync(runsDir)) {
    const dir = join(runsDir, name);
    if (!existsSync(join(dir, RUN_LOG))) continue;
    const { events } = readRunLog(join(dir, RUN_LOG));
    const start = events.find((e) => e.type === 'run_start');
    if (start?.type !== 'run_start') continue;
    // The last session's end: a resumed run's log may hold the run_end of an earlier session.
    const end = [...events].reverse().find((e) => e.type === 'run_end' || e.type === 'run_resume');
    // A live lease means a coordinator works on it now, unless its run_end is written already
    // (the coordinator lets go of the lease just after).
    const holder = liveLeaseHolder(dir);
    // call_usage is the coordinator's record of every permitted model call (aborted ones too);
    // logs without it fall back to the per-instance totals.
    let cost = 0;
    let calls = 0;
    for (const e of events)
      if (e.type === 'call_usage') {
        cost += e.usage.cost;
        calls++;
      }
    if (calls === 0)
      for (const e of events)
        if (e.type === 'instance_done' || (e.type === 'instance_failed' && e.usage)) cost += e.usage?.cost ?? 0;
    const gates = waitingGates(events);
    const waiting = [
      ...gates.instances,
      ...gates.publish.map((g) => `publish:${g.task}`),
      ...gates.followUps.map((key) => `follow-up:${key}`),
    ];
    out.push({
      runId: start.runId,
      dir,
      recipe: start.recipe,
      name: start.name,
      startedAt: start.ts,
      status: end?.type === 'run_end' ? end.status : holder ? 'running' : 'interrupted',
      cost,
      ...(holder && end?.type !== 'run_end' ? { holder } : {}),
      ...(waiting.length ? { waiting } : {}),
    });
  }
  return out.sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1));
}

/** Finds a run by id (under runsDir) or by folder path. */
export function resolveRunDir(runsDir: string, idOrPath: string): string | undefined {
  if (existsSync(join(idOrPath, RUN_LOG))) return resolve(idOrPath);
  const byId = join(runsDir, idOrPath);
  if (existsSync(join(byId, RUN_LOG))) return resolve(byId);
  // A unique prefix of a run id is enough.
  if (existsSync(runsDir)) {
    const matches = readdirSync(runsDir).filter((n) => n.startsWith(idOrPath) && existsSync(join(runsDir, n, RUN_LOG)));
    if (matches.length === 1) return resolve(runsDir, matches[0]!);
  }
  return undefined;
}
