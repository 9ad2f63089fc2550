// One coordinator per run: the lease a coordinator holds on its run folder while it works on it
// (a new run from its first event, a resume before it reads anything). A second coordinator
// (`orchestrate resume` of a live run, two resumes at once) is refused instead of running the same
// instances twice: doubled spend, forked sessions, two run_end events, rate limits counted twice.
//
// `RunLease` is the interface (async, so the lease can live in Redis for distributed runs later);
// `FileRunLease` is the one used now: a file in the run folder.
//
// The file lease. A holder is a JSON file `lease.<generation>.json` (pid, host, random token,
// startedAt, heartbeatAt); the highest generation is the lease. It is created with O_EXCL
// (`wx`), so of all contenders for one generation exactly one succeeds, and a takeover creates
// the NEXT generation: only a contender that saw generation N stale or released may create N+1,
// and only one can. (Renaming a stale `lease.json` away is not enough: a slow contender could rename
// away the fresh lease a faster one had just created in its place.) A winner then checks that no
// higher generation exists (a contender with an old view may have re-created a lower, deleted one:
// it sees the higher one, deletes its own and gives up) and deletes the generations below its own.
// The holder rewrites its own file (temp + rename) on every heartbeat, and on release writes
// `releasedAt` into it; the file stays as a tombstone so generations never restart at 1.
//
// A lease is stale (free to take over) when its heartbeat is older than `leaseStaleMs` (30 s),
// or at once when its holder ran on this host and its process is gone (kill -9, a crash, a power
// cut). Machines or containers (own process tables) sharing a run folder must have distinct host
// names. Heartbeats from other hosts are compared with this host's clock. A reused pid looks
// alive: such a lease is taken over when its heartbeat times out. A holder frozen for longer than
// the timeout (a suspended laptop) may be taken over; when it wakes, its next heartbeat finds a
// higher generation and it stops like an interrupt (it may still write the lines of the moment it
// woke up, before the heartbeat runs).
import { randomBytes } from 'node:crypto';
import { linkSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RUN_DEFAULTS } from './defaults.js';
import { replaceFileIf, replaceFileSync } from '../tools/atomic-write.js';

/** Who holds (or held) a run's lease. */
export interface LeaseHolder {
  pid: number;
  host: string;
  /** Random, per acquisition: tells this holder from a later one with the same pid. */
  token: string;
  /** When it took the lease (epoch ms). */
  startedAt: number;
  /** Its last heartbeat (epoch ms). */
  heartbeatAt: number;
  /** Set when it gave the lease up. */
  releasedAt?: number;
}

export type LeaseAcquire =
  | {
      ok: true /** The stale holder this acquisition replaced, and why it was stale. */;
      tookOver?: { holder: LeaseHolder; why: string };
    }
  | { ok: false /** The live holder. */; holder: LeaseHolder };

export type LeaseRenew = { ok: true } | { ok: false; why: string; holder?: LeaseHolder };

/** A lease on one run, held by at most one coordinator at a time. */
export interface RunLease {
  /** Takes the lease when it is free, released or stale; otherwise reports the live holder. */
  acquire(): Promise<LeaseAcquire>;
  /** Heartbeat: checks this process still holds the lease and refreshes it; `ok: false` when it was lost. */
  renew(): Promise<LeaseRenew>;
  /** Gives the lease up (no-op when not held). */
  release(): Promise<void>;
  /** The live holder (this process included), or undefined when the lease is free or stale. */
  holder(): Promise<LeaseHolder | undefined>;
}

export type LeaseState = { state: 'live' } | { state: 'released' } | { state: 'stale'; why: string };

export interface LeaseClock {
  /** Heartbeats older than this make a lease stale (default RUN_DEFAULTS.leaseStaleMs). */
  staleMs?: number;
  /** This host's name (default os.hostname()). */
  host?: string;
  now?: () => number;
}

/** Whether a process of this host is running (ESRCH: gone; EPERM: someone else's, alive). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Live, released, or stale (and why). */
export function leaseState(h: LeaseHolder, clock: LeaseClock = {}): LeaseState {
  if (h.releasedAt !== undefined) return { state: 'released' };
  const host = clock.host ?? hostname();
  if (h.host === host && !processAlive(h.pid)) return { state: 'stale', why: `its process (pid ${h.pid}) is gone` };
  const staleMs = clock.staleMs ?? RUN_DEFAULTS.leaseStaleMs;
  const age = (clock.now ?? Date.now)() - h.heartbeatAt;
  if (age >= staleMs)
    return {
      state: 'stale',
      why: `no heartbeat for ${Math.round(age / 1000)} s (the timeout is ${Math.round(staleMs / 1000)} s)`,
    };
  return { state: 'live' };
}

const LEASE_FILE = /^lease\.(\d+)\.json$/;

/** The lease's file of one generation. */
export function leaseFile(dir: string, generation: number): string {
  return join(dir, `lease.${generation}.json`);
}

/** Generations present in the folder, highest first. */
function generations(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .flatMap((n) => {
      const m = LEASE_FILE.exec(n);
      return m ? [Number(m[1])] : [];
    })
    .sort((a, b) => b - a);
}

/** Whether a parsed lease (a file here, a Redis value in cluster/) has every field of a holder. */
export function isLeaseHolder(v: unknown): v is LeaseHolder {
  const h = v as Partial<LeaseHolder> | null;
  return (
    typeof h === 'object' &&
    h !== null &&
    typeof h.pid === 'number' &&
    typeof h.host === 'string' &&
    typeof h.token === 'string' &&
    typeof h.heartbeatAt === 'number' &&
    typeof h.startedAt === 'number'
  );
}

/**
 * The holder recorded in one generation's file; undefined when the file is gone. A file that
 * does not parse (hand-edited, a disk fault) stands for an unknown holder whose heartbeat is the
 * file's modification time, so it times out like any other.
 */
function readHolder(file: string): LeaseHolder | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const v: unknown = JSON.parse(text);
    if (isLeaseHolder(v)) return v;
  } catch {
    // not JSON: below
  }
  try {
    const t = statSync(file).mtimeMs;
    return { pid: 0, host: '(unknown: unreadable lease file)', token: '', startedAt: t, heartbeatAt: t };
  } catch {
    return undefined;
  }
}

/** The lease of a run folder as it is now: its current holder and whether it is live. */
export function readRunLease(
  dir: string,
  clock: LeaseClock = {},
): { holder: LeaseHolder; state: LeaseState } | undefined {
  for (const gen of generations(dir)) {
    const holder = readHolder(leaseFile(dir, gen));
    if (holder) return { holder, state: leaseState(holder, clock) };
  }
  return undefined;
}

/** The live holder of a run folder's lease (sync, for listings), or undefined. */
export function liveLeaseHolder(dir: string, clock: LeaseClock = {}): LeaseHolder | undefined {
  const lease = readRunLease(dir, clock);
  return lease?.state.state === 'live' ? lease.holder : undefined;
}

/** Rewrites a lease this process holds (heartbeat, release) with the project's atomic replace. */
function replaceLease(file: string, holder: LeaseHolder): void {
  replaceFileSync(file, `${JSON.stringify(holder)}\n`);
}

/**
 * Creates `file` with the holder's record unless it exists; false when it does. The record is
 * written to a temp file first and hard-linked into place (link fails when the name exists, like
 * O_EXCL), so no reader ever sees a half-written lease. Where hard links are not supported, an
 * O_EXCL create (`wx`) does the same with a short window in which the file is empty.
 */
function createExclusive(file: string, holder: LeaseHolder): boolean {
  const text = `${JSON.stringify(holder)}\n`;
  const tmp = `${file}.${process.pid}.${holder.token.slice(0, 8)}.tmp`;
  try {
    writeFileSync(tmp, text);
    linkSync(tmp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  try {
    writeFileSync(file, text, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Contenders' rounds before giving up (each lost round means someone else made progress). */
const ACQUIRE_ROUNDS = 50;

/** The lease as a file in the run folder (see the top of this file). Every method is synchronous underneath. */
export class FileRunLease implements RunLease {
  readonly token = randomBytes(12).toString('hex');
  private generation: number | undefined;
  private startedAt = 0;
  private lastHeartbeatAt = 0;
  private readonly host: string;
  private readonly pid: number;
  private readonly clock: LeaseClock;

  constructor(
    readonly dir: string,
    options: LeaseClock & { pid?: number } = {},
  ) {
    this.host = options.host ?? hostname();
    this.pid = options.pid ?? process.pid;
    this.clock = { ...options, host: this.host };
  }

  private now(): number {
    return (this.clock.now ?? Date.now)();
  }

  get held(): boolean {
    return this.generation !== undefined;
  }

  private record(extra: Partial<LeaseHolder> = {}): LeaseHolder {
    return {
      pid: this.pid,
      host: this.host,
      token: this.token,
      startedAt: this.startedAt,
      heartbeatAt: this.lastHeartbeatAt,
      ...extra,
    };
  }

  async acquire(): Promise<LeaseAcquire> {
    return this.acquireSync();
  }

  /**
   * The heartbeat, with its write and fsyncs off the event loop (on a loaded machine they took
   * whole event-loop turns of the coordinator). The rename happens only while this process still
   * holds the same generation: a release (or a lost lease) while the write was under way wins.
   */
  async renew(): Promise<LeaseRenew> {
    const checked = this.checkHeld();
    if (!checked.ok) return checked;
    const gen = checked.gen;
    const at = this.now();
    try {
      const file = leaseFile(this.dir, gen);
      const done = await replaceFileIf(file, `${JSON.stringify(this.record({ heartbeatAt: at }))}\n`, {
        stillWanted: () => this.generation === gen,
      });
      if (done) this.lastHeartbeatAt = at;
    } catch (err) {
      return this.failedHeartbeat(at, err);
    }
    return { ok: true };
  }

  async release(): Promise<void> {
    this.releaseSync();
  }

  async holder(): Promise<LeaseHolder | undefined> {
    return liveLeaseHolder(this.dir, this.clock);
  }

  /** Throws only on a file system error other than losing a race (a folder that cannot be written). */
  acquireSync(): LeaseAcquire {
    if (this.generation !== undefined) return { ok: true };
    for (let round = 0; round < ACQUIRE_ROUNDS; round++) {
      const top = generations(this.dir)[0] ?? 0;
      const current = top > 0 ? readHolder(leaseFile(this.dir, top)) : undefined;
      if (top > 0 && !current) continue; // deleted under us by a winner's clean-up: look again
      let tookOver: { holder: LeaseHolder; why: string } | undefined;
      if (current) {
        const s = leaseState(current, this.clock);
        if (s.state === 'live') return { ok: false, holder: current };
        if (s.state === 'stale') tookOver = { holder: current, why: s.why };
      }
      const gen = top + 1;
      this.startedAt = this.now();
      this.lastHeartbeatAt = this.startedAt;
      if (!createExclusive(leaseFile(this.dir, gen), this.record())) continue; // another contender made generation `gen`
      // Someone with an older view may have re-created a lower generation; a higher one means we lost.
      if ((generations(this.dir)[0] ?? 0) > gen) {
        rmSync(leaseFile(this.dir, gen), { force: true });
        continue;
      }
      this.generation = gen;
      for (const old of generations(this.dir)) if (old < gen) rmSync(leaseFile(this.dir, old), { force: true });
      return tookOver ? { ok: true, tookOver } : { ok: true };
    }
    const last = readRunLease(this.dir, this.clock);
    if (last) return { ok: false, holder: last.holder };
    throw new Error(
      `could not take the lease of ${this.dir} after ${ACQUIRE_ROUNDS} tries (lease files keep changing)`,
    );
  }

  renewSync(): LeaseRenew {
    const checked = this.checkHeld();
    if (!checked.ok) return checked;
    const at = this.now();
    try {
      replaceLease(leaseFile(this.dir, checked.gen), this.record({ heartbeatAt: at }));
      this.lastHeartbeatAt = at;
    } catch (err) {
      return this.failedHeartbeat(at, err);
    }
    return { ok: true };
  }

  /** Whether this process still holds the lease's newest generation (else it has lost it, and says how). */
  private checkHeld(): { ok: true; gen: number } | (LeaseRenew & { ok: false }) {
    const gen = this.generation;
    if (gen === undefined) return { ok: false, why: 'the lease is not held' };
    const top = generations(this.dir)[0];
    const mine = top === gen ? readHolder(leaseFile(this.dir, gen)) : undefined;
    if (!mine || mine.token !== this.token) {
      this.generation = undefined;
      const now = readRunLease(this.dir, this.clock);
      return now
        ? { ok: false, why: 'another coordinator took the lease over', holder: now.holder }
        : { ok: false, why: `the lease file ${leaseFile(this.dir, gen)} was removed` };
    }
    return { ok: true, gen };
  }

  /** A failed heartbeat write (disk full) is retried next time, until others may consider the lease stale. */
  private failedHeartbeat(at: number, err: unknown): LeaseRenew {
    const staleMs = this.clock.staleMs ?? RUN_DEFAULTS.leaseStaleMs;
    if (at - this.lastHeartbeatAt < staleMs) return { ok: true };
    this.generation = undefined;
    return {
      ok: false,
      why: `its heartbeat could not be written for ${Math.round((at - this.lastHeartbeatAt) / 1000)} s (${(err as Error).message})`,
    };
  }

  /** Marks the lease released (the file stays: generations never restart). Never throws. */
  releaseSync(): void {
    const gen = this.generation;
    if (gen === undefined) return;
    this.generation = undefined;
    const file = leaseFile(this.dir, gen);
    const mine = generations(this.dir)[0] === gen ? readHolder(file) : undefined;
    if (mine?.token !== this.token) return;
    try {
      replaceLease(file, this.record({ heartbeatAt: this.now(), releasedAt: this.now() }));
    } catch {
      // Cannot write (disk full): this process is about to be gone, which frees the lease on this host at once.
    }
  }
}

/** Calls `lease.renew()` every `everyMs` until stopped; `onLost` once when the lease was lost. Returns stop(). */
export function keepLeaseAlive(
  lease: RunLease,
  onLost: (lost: { why: string; holder?: LeaseHolder }) => void,
  everyMs: number = RUN_DEFAULTS.leaseHeartbeatMs,
): () => void {
  let stopped = false;
  let busy = false;
  const stop = (): void => {
    stopped = true;
    clearInterval(timer);
  };
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    lease.renew().then(
      (r) => {
        busy = false;
        if (!r.ok && !stopped) {
          stop();
          onLost(r);
        }
      },
      () => (busy = false),
    );
  }, everyMs);
  timer.unref(); // the heartbeat never keeps a finished process alive
  return stop;
}

const clockTime = (ms: number): string => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
const ago = (ms: number, now: number): string => `${Math.max(0, Math.round((now - ms) / 1000))} s ago`;

/** Who holds a run, for messages: "pid 4242 on host build-1 since ... (last heartbeat 2 s ago)". */
export function describeHolder(h: LeaseHolder, now = Date.now()): string {
  return `pid ${h.pid} on host ${h.host}, since ${clockTime(h.startedAt)} (last heartbeat ${ago(h.heartbeatAt, now)})`;
}

/** What a refused coordinator tells the user: who holds the run and what to do. */
export function liveRunMessage(runId: string, h: LeaseHolder, staleMs: number = RUN_DEFAULTS.leaseStaleMs): string {
  const here = h.host === hostname();
  return (
    `run ${runId} is running: its coordinator is ${describeHolder(h)}. A run has one coordinator at a time; nothing was changed.\n` +
    `  Wait for it to end (\`orchestrate runs\` shows it as running), or stop it first (Ctrl-C in its terminal${here ? `, or kill ${h.pid}` : ` on ${h.host}`}; its sessions are kept), then resume again.\n` +
    `  If that coordinator died (kill -9, a crash, its machine), resume works ${here ? 'at once' : `once its last heartbeat is ${Math.round(staleMs / 1000)} s old`}.`
  );
}

/**
 * This process's hold on a run folder, from acquire to release: the heartbeat, the release on
 * every way out (normal end, failure, Ctrl-C, an exception, process.exit), and `lost`, aborted
 * when another coordinator took the run over.
 */
export class HeldRunLease {
  private readonly lostController = new AbortController();
  /** Aborted when the lease was lost: the run must stop writing at once. */
  readonly lost: AbortSignal = this.lostController.signal;
  /** Why the lease was lost (a message for the user), once it was. */
  lostMessage: string | undefined;
  /** Told once when the lease is lost, before `lost` aborts. */
  onLost: ((message: string) => void) | undefined;
  private readonly stopHeartbeats: (() => void)[];
  private readonly onExit = (): void => this.lease.releaseSync();

  /**
   * `also`: a second lease this process already holds on the same run (the Redis lease of a
   * distributed run, which workers check); it is heartbeated too, and losing it stops the run like
   * losing the file lease. It cannot be released on process.exit (async): its TTL, or on this host
   * its dead pid, frees it.
   */
  constructor(
    private readonly lease: FileRunLease,
    readonly runId: string,
    heartbeatMs: number = RUN_DEFAULTS.leaseHeartbeatMs,
    private readonly also?: RunLease,
  ) {
    this.stopHeartbeats = [lease, ...(also ? [also] : [])].map((l) =>
      keepLeaseAlive(l, (r) => this.loseLease(r), heartbeatMs),
    );
    process.on('exit', this.onExit);
  }

  private loseLease(r: { why: string; holder?: LeaseHolder }): void {
    if (this.lostMessage !== undefined) return; // both leases may notice
    this.lostMessage =
      `this coordinator lost the lease of run ${this.runId}: ${r.why}${r.holder ? ` (now ${describeHolder(r.holder)})` : ''}. ` +
      `It stopped at once and writes nothing more to the run; the run belongs to the other coordinator now (\`orchestrate runs\` shows it).`;
    this.onLost?.(this.lostMessage);
    this.lostController.abort();
  }

  /** Both stop signals of a coordinator, each also aborted when the lease is lost. */
  signals(opts: { signal?: AbortSignal; killSignal?: AbortSignal }): { signal: AbortSignal; killSignal: AbortSignal } {
    const join = (s: AbortSignal | undefined): AbortSignal => (s ? AbortSignal.any([s, this.lost]) : this.lost);
    return { signal: join(opts.signal), killSignal: join(opts.killSignal) };
  }

  /** Releases the file lease at once and the `also` lease (settles when that one is released too). */
  release(): Promise<void> {
    for (const stop of this.stopHeartbeats) stop();
    process.off('exit', this.onExit);
    this.lease.releaseSync();
    return this.also ? this.also.release().catch(() => {}) : Promise.resolve();
  }
}

export type TakeRunLease =
  | { ok: true; lease: HeldRunLease; tookOver?: { holder: LeaseHolder; why: string } }
  | { ok: false; message: string; holder?: LeaseHolder };

/**
 * Takes the lease of a run folder for this process (with heartbeat and release on exit), or says
 * who has it. `also`: a lease the caller already acquired on the same run, held together with the
 * file lease (see HeldRunLease); the caller releases it when this returns `ok: false`.
 */
export function takeRunLease(dir: string, runId: string, also?: RunLease): TakeRunLease {
  const lease = new FileRunLease(dir);
  let got: LeaseAcquire;
  try {
    got = lease.acquireSync();
  } catch (err) {
    return {
      ok: false,
      message: `cannot take the lease of run ${runId} in ${dir}: ${(err as Error).message}. Check that the run folder can be written.`,
    };
  }
  if (!got.ok) return { ok: false, message: liveRunMessage(runId, got.holder), holder: got.holder };
  return {
    ok: true,
    lease: new HeldRunLease(lease, runId, RUN_DEFAULTS.leaseHeartbeatMs, also),
    ...(got.tookOver ? { tookOver: got.tookOver } : {}),
  };
}
