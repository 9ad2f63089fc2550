// The run lease (one coordinator per run): acquire, refuse, heartbeat, release, takeover of a
// stale lease (dead process on this host, old heartbeat from another host, unreadable file), a
// lost lease noticed by the heartbeat, and the race: many processes contending for one lease at
// the same instant, round after round; exactly one wins each time.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { ORCHESTRATOR_DEFAULTS } from '../../src/orchestrator/defaults.js';
import {
  FileRunLease,
  keepLeaseAlive,
  leaseFile,
  leaseState,
  liveLeaseHolder,
  liveRunMessage,
  readRunLease,
  takeRunLease,
  type LeaseHolder,
} from '../../src/run/run-lease.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'lease-'));
  dirs.push(d);
  return d;
}

/** The pid of a process that was killed with SIGKILL and has been reaped (a coordinator after kill -9). */
async function deadPid(): Promise<number> {
  const child = spawn('sleep', ['30']);
  const gone = new Promise((r) => child.on('exit', r));
  child.kill('SIGKILL');
  await gone;
  return child.pid!;
}

function holderRecord(over: Partial<LeaseHolder>): LeaseHolder {
  const now = Date.now();
  return { pid: process.pid, host: hostname(), token: 'hand-written', startedAt: now, heartbeatAt: now, ...over };
}

function writeLease(dir: string, gen: number, h: LeaseHolder): void {
  writeFileSync(leaseFile(dir, gen), `${JSON.stringify(h)}\n`);
}

describe('FileRunLease', () => {
  it('one holder at a time: a second contender is refused and told who holds it; after release it is free', async () => {
    const dir = tmp();
    const a = new FileRunLease(dir);
    const b = new FileRunLease(dir);
    expect(await a.acquire()).toEqual({ ok: true });
    const refused = await b.acquire();
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.holder).toMatchObject({ pid: process.pid, host: hostname(), token: a.token });
    expect((await b.holder())?.token).toBe(a.token);
    expect(liveLeaseHolder(dir)?.token).toBe(a.token);

    await a.release();
    expect(await a.holder()).toBeUndefined();
    expect(readRunLease(dir)?.state).toEqual({ state: 'released' });
    expect(await b.acquire()).toEqual({ ok: true });
    expect(liveLeaseHolder(dir)?.token).toBe(b.token);
    // The released holder's file was replaced by the next generation, not left beside it.
    expect(readdirSync(dir).filter((n) => n.startsWith('lease.'))).toEqual(['lease.2.json']);
  });

  it('a lease whose holder on this host is gone (kill -9) is taken over at once', async () => {
    const dir = tmp();
    const pid = await deadPid();
    writeLease(dir, 1, holderRecord({ pid }));
    expect(leaseState(holderRecord({ pid }))).toEqual({ state: 'stale', why: `its process (pid ${pid}) is gone` });
    const lease = new FileRunLease(dir);
    const r = lease.acquireSync();
    expect(r).toMatchObject({ ok: true, tookOver: { holder: { pid }, why: expect.stringContaining('is gone') } });
    expect(liveLeaseHolder(dir)?.token).toBe(lease.token);
  });

  it('a lease from another host is live while its heartbeat is fresh and taken over once it is older than the timeout', () => {
    const dir = tmp();
    const staleMs = ORCHESTRATOR_DEFAULTS.leaseStaleMs;
    // The pid means nothing on another host: its liveness is its heartbeat.
    writeLease(dir, 1, holderRecord({ host: 'elsewhere', pid: 999_999_999, heartbeatAt: Date.now() - staleMs / 2 }));
    const refused = new FileRunLease(dir).acquireSync();
    expect(refused).toMatchObject({ ok: false, holder: { host: 'elsewhere' } });

    writeLease(dir, 1, holderRecord({ host: 'elsewhere', heartbeatAt: Date.now() - staleMs - 60_000 }));
    const lease = new FileRunLease(dir);
    expect(lease.acquireSync()).toMatchObject({
      ok: true,
      tookOver: { holder: { host: 'elsewhere' }, why: expect.stringMatching(/no heartbeat for \d+ s/) },
    });
    expect(readRunLease(dir)).toMatchObject({ holder: { token: lease.token }, state: { state: 'live' } });
  });

  it('an unreadable lease file counts as an unknown holder whose heartbeat is the file time', () => {
    const dir = tmp();
    writeFileSync(leaseFile(dir, 3), 'not json');
    expect(new FileRunLease(dir).acquireSync()).toMatchObject({ ok: false, holder: { pid: 0 } });
    const old = (Date.now() - ORCHESTRATOR_DEFAULTS.leaseStaleMs - 60_000) / 1000;
    utimesSync(leaseFile(dir, 3), old, old);
    const lease = new FileRunLease(dir);
    expect(lease.acquireSync().ok).toBe(true);
    expect(existsSync(leaseFile(dir, 4))).toBe(true);
    expect(existsSync(leaseFile(dir, 3))).toBe(false);
  });

  it('renew refreshes the heartbeat while held, and reports the lease lost once another coordinator took it over', () => {
    const dir = tmp();
    let now = 1_000_000;
    const a = new FileRunLease(dir, { now: () => now });
    expect(a.acquireSync().ok).toBe(true);
    now += 4_000;
    expect(a.renewSync()).toEqual({ ok: true });
    expect(readRunLease(dir, { now: () => now })?.holder.heartbeatAt).toBe(now);

    // b's clock is 31 s ahead of a's last heartbeat: a looks stale to it (a frozen coordinator).
    const b = new FileRunLease(dir, { now: () => now + ORCHESTRATOR_DEFAULTS.leaseStaleMs + 1_000 });
    expect(b.acquireSync()).toMatchObject({ ok: true, tookOver: { holder: { token: a.token } } });
    const lost = a.renewSync();
    expect(lost).toMatchObject({
      ok: false,
      why: 'another coordinator took the lease over',
      holder: { token: b.token },
    });
    // Having lost it, a never writes over b's lease, not even on release.
    a.releaseSync();
    expect(readRunLease(dir, { now: () => now })?.holder).toMatchObject({ token: b.token });
    expect(readRunLease(dir, { now: () => now })?.holder.releasedAt).toBeUndefined();
  });

  it('the heartbeat writes off the event loop; a release while it is being written wins, and no temp file is left', async () => {
    const dir = tmp();
    let now = 1_000_000;
    const a = new FileRunLease(dir, { now: () => now });
    expect(a.acquireSync().ok).toBe(true);
    now += 4_000;
    expect(await a.renew()).toEqual({ ok: true });
    expect(readRunLease(dir, { now: () => now })?.holder.heartbeatAt).toBe(now);

    now += 4_000;
    const renewing = a.renew(); // its write is under way (it awaits the file system)...
    a.releaseSync(); // ...when the coordinator ends and releases the lease
    await renewing;
    const after = readRunLease(dir, { now: () => now });
    expect(after?.holder.releasedAt).toBeDefined(); // the heartbeat did not bring the lease back to life
    expect(after?.state.state).not.toBe('live');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a removed lease file is a lost lease too', () => {
    const dir = tmp();
    const a = new FileRunLease(dir);
    a.acquireSync();
    rmSync(leaseFile(dir, 1));
    expect(a.renewSync()).toMatchObject({ ok: false, why: expect.stringContaining('was removed') });
  });

  it('the heartbeat calls onLost once when the lease is lost, and stops', async () => {
    const dir = tmp();
    const a = new FileRunLease(dir);
    a.acquireSync();
    const b = new FileRunLease(dir, { staleMs: 0 });
    let calls = 0;
    const lost = new Promise<{ why: string; holder?: LeaseHolder }>((r) =>
      keepLeaseAlive(
        a,
        (x) => {
          calls++;
          r(x);
        },
        5,
      ),
    );
    expect(b.acquireSync().ok).toBe(true);
    const why = await lost;
    expect(why.holder?.token).toBe(b.token);
    expect(calls).toBe(1);
  });

  it('takeRunLease refuses a live run with who holds it and what to do; the message is built from the holder', () => {
    const dir = tmp();
    const first = takeRunLease(dir, 'run-1');
    expect(first.ok).toBe(true);
    const second = takeRunLease(dir, 'run-1');
    expect(second.ok).toBe(false);
    if (!second.ok) {
      expect(second.message).toContain(
        `run run-1 is running: its coordinator is pid ${process.pid} on host ${hostname()}, since `,
      );
      expect(second.message).toContain(`kill ${process.pid}`);
      expect(second.message).toContain(
        'If that coordinator died (kill -9, a crash, its machine), resume works at once.',
      );
    }
    if (first.ok) first.lease.release();
    expect(readRunLease(dir)?.state.state).toBe('released');
    expect(liveRunMessage('r', holderRecord({ host: 'far' }))).toContain('Ctrl-C in its terminal on far');
    expect(liveRunMessage('r', holderRecord({ host: 'far' }))).toContain(
      'resume works once its last heartbeat is 30 s old.',
    );
  });

  it('a folder where the lease cannot be written gives a message, not an exception', () => {
    const file = join(tmp(), 'not-a-folder');
    writeFileSync(file, '');
    const r = takeRunLease(file, 'run-x');
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining('cannot take the lease of run run-x') });
  });
});

describe('the lease race (real processes)', { timeout: 120_000 }, () => {
  const CONTENDERS = 8;
  const procs: ChildProcess[] = [];
  afterAll(() => {
    for (const p of procs) p.kill('SIGKILL');
  });

  it('many contenders at the same instant: exactly one wins, every loser names the winner, round after round', async () => {
    const root = resolve(import.meta.dirname, '../..');
    const replies: Map<string, unknown[]> = new Map();
    const waiting: { dir: string; resolve: () => void }[] = [];
    let ready = 0;
    let allReady!: () => void;
    const started = new Promise<void>((r) => (allReady = r));
    for (let i = 0; i < CONTENDERS; i++) {
      const p = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/run/fixtures/lease-contender.ts')], {
        cwd: root,
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      procs.push(p);
      createInterface({ input: p.stdout! }).on('line', (line) => {
        if (line === 'ready') {
          if (++ready === CONTENDERS) allReady();
          return;
        }
        const reply = JSON.parse(line) as { dir: string };
        const list = replies.get(reply.dir) ?? [];
        list.push(reply);
        replies.set(reply.dir, list);
        if (list.length === CONTENDERS) waiting.find((w) => w.dir === reply.dir)?.resolve();
      });
    }
    await started;
    const dead = await deadPid();
    const old = Date.now() - ORCHESTRATOR_DEFAULTS.leaseStaleMs - 60_000;
    const setups: Record<string, (dir: string) => void> = {
      'no lease yet': () => undefined,
      'holder killed': (dir) => writeLease(dir, 7, holderRecord({ pid: dead })),
      'old heartbeat from another host': (dir) =>
        writeLease(dir, 2, holderRecord({ host: 'elsewhere', heartbeatAt: old })),
      released: (dir) => writeLease(dir, 5, holderRecord({ releasedAt: Date.now() })),
    };
    const rounds = Object.keys(setups).flatMap((name) => [1, 2, 3, 4, 5].map(() => name));
    const wins: Record<string, number> = {};
    for (const name of rounds) {
      const dir = tmp();
      setups[name]!(dir);
      const done = new Promise<void>((r) => waiting.push({ dir, resolve: r }));
      const startAt = Date.now() + 30;
      for (const p of procs) p.stdin!.write(`acquire ${dir} ${startAt}\n`);
      await done;
      const got = replies.get(dir) as { ok: boolean; token: string; holder?: string; error?: string }[];
      expect(
        got.filter((g) => g.error),
        name,
      ).toEqual([]);
      const winners = got.filter((g) => g.ok);
      expect(winners, `${name}: winners`).toHaveLength(1);
      const winner = winners[0]!.token;
      // Every loser saw the winner's lease (not a lease of its own, not the stale one).
      expect(
        got.filter((g) => !g.ok).map((g) => g.holder),
        name,
      ).toEqual(Array(CONTENDERS - 1).fill(winner));
      expect(readRunLease(dir), name).toMatchObject({ holder: { token: winner }, state: { state: 'live' } });
      // One lease file is left: the winner's (losers removed theirs, the winner removed the old one).
      expect(
        readdirSync(dir).filter((n) => n.startsWith('lease.')),
        name,
      ).toHaveLength(1);
      expect(
        JSON.parse(readFileSync(join(dir, readdirSync(dir).find((n) => n.startsWith('lease.'))!), 'utf8')).token,
      ).toBe(winner);
      wins[name] = (wins[name] ?? 0) + 1;
    }
    console.log(
      `[lease-race] contenders=${CONTENDERS} rounds=${rounds.length} ${Object.entries(wins)
        .map(([k, v]) => `${k.replace(/ /g, '_')}=${v}`)
        .join(' ')} double_winners=0`,
    );
  });
});
