// The run lease in Redis against a real redis-server: exactly one winner among racing contenders
// (connections and real processes), renew extends only our own key, another token can neither
// renew nor release it, a dead holder of this host is taken over at once, an expired key lets a new
// holder in, a Redis restart makes renew re-create the key, an outage is reported but not a loss,
// generations only grow and fence a holder whose key vanished, and HeldRunLease holding the file
// lease and the Redis lease together.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, keyFor } from '../../src/cluster/redis-connection.js';
import {
  RedisRunLease,
  readRedisRunLease,
  readRunLeaseToken,
  takeRedisRunLease,
} from '../../src/cluster/redis-run-lease.js';
import { FileRunLease, HeldRunLease, readRunLease, type LeaseHolder } from '../../src/run/run-lease.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { CHILD_LOADER_ARGS, childModule } from '../helpers/cli-entry.js';

/** The pid of a process that was killed with SIGKILL and has been reaped (a coordinator after kill -9). */
async function deadPid(): Promise<number> {
  const child = spawn('sleep', ['30']);
  const gone = new Promise((r) => child.on('exit', r));
  child.kill('SIGKILL');
  await gone;
  return child.pid!;
}

/** Polls `f` (errors count as false) until it is true; false when the limit passed. */
async function until(f: () => Promise<boolean> | boolean, limitMs = 15_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  for (;;) {
    try {
      if (await f()) return true;
    } catch {
      // not yet
    }
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function holderValue(over: Partial<LeaseHolder> & { generation?: number }): string {
  const now = Date.now();
  return JSON.stringify({
    pid: process.pid,
    host: hostname(),
    token: 'hand-written',
    startedAt: now,
    heartbeatAt: now,
    generation: 1,
    ...over,
  });
}

let runCounter = 0;
const newRunId = (): string => `run-${process.pid}-${++runCounter}`;

describe.skipIf(skipWithoutRedis('Redis run lease tests'))('RedisRunLease', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  const clients: Redis[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    server = await startRedis();
    redis = connectRedis(server.url, { name: 'test' });
  });
  afterAll(async () => {
    for (const c of [redis, ...clients]) c?.disconnect();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await server?.stop();
  });
  const connection = (): Redis => {
    const c = connectRedis(server.url, { name: 'contender' });
    clients.push(c);
    return c;
  };

  it('acquire stores the holder with a TTL of the stale time; a second contender is refused and told who holds it; release frees it', async () => {
    const run = newRunId();
    const a = new RedisRunLease(redis, run, { staleMs: 60_000 });
    const b = new RedisRunLease(connection(), run, { staleMs: 60_000 });
    expect(await a.acquire()).toEqual({ ok: true });
    expect(a.held).toBe(true);
    expect(a.generation).toBe(1);
    const stored = await readRedisRunLease(redis, run);
    expect(stored).toMatchObject({ pid: process.pid, host: hostname(), token: a.token, generation: 1 });
    const ttl = await redis.pttl(keyFor.lease(run));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    const refused = await b.acquire();
    expect(refused).toMatchObject({ ok: false, holder: { token: a.token, pid: process.pid } });
    expect((await b.holder())?.token).toBe(a.token);
    expect(await readRunLeaseToken(redis, run)).toBe(a.token);
    await a.release();
    expect(a.held).toBe(false);
    expect(await redis.exists(keyFor.lease(run))).toBe(0);
    expect(await readRunLeaseToken(redis, run)).toBeUndefined();
    expect(await b.holder()).toBeUndefined();
    expect(await b.acquire()).toEqual({ ok: true });
    expect(b.generation).toBe(2);
  });

  it('of 20 connections acquiring at once exactly one wins, round after round, and the generation grows by one per round', async () => {
    const run = newRunId();
    const conns = Array.from({ length: 20 }, () => connection());
    await Promise.all(conns.map((c) => c.ping()));
    for (let round = 1; round <= 10; round++) {
      const leases = conns.map((c) => new RedisRunLease(c, run));
      const results = await Promise.all(leases.map((l) => l.acquire()));
      const winners = leases.filter((_, i) => results[i]!.ok);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!;
      expect(winner.generation).toBe(round);
      for (const r of results) if (!r.ok) expect(r.holder.token).toBe(winner.token);
      expect(await readRunLeaseToken(redis, run)).toBe(winner.token);
      await winner.release();
    }
  });

  it('renew extends only our own key; another lease object (another token) can neither renew nor release it', async () => {
    const run = newRunId();
    const a = new RedisRunLease(redis, run, { staleMs: 60_000 });
    const other = new RedisRunLease(connection(), run, { staleMs: 60_000 });
    expect((await a.acquire()).ok).toBe(true);
    await redis.pexpire(keyFor.lease(run), 5_000); // as if time had passed since the last heartbeat
    expect(await a.renew()).toEqual({ ok: true });
    expect(await redis.pttl(keyFor.lease(run))).toBeGreaterThan(50_000);
    expect((await readRedisRunLease(redis, run))?.token).toBe(a.token);
    expect(await other.renew()).toEqual({ ok: false, why: 'the lease is not held' });
    await other.release();
    expect((await readRedisRunLease(redis, run))?.token).toBe(a.token);
    await a.release();
  });

  it('a holder whose key was replaced by another coordinator loses it at renew, and its release leaves the new holder alone', async () => {
    const run = newRunId();
    const a = new RedisRunLease(redis, run, { staleMs: 60_000 });
    const b = new RedisRunLease(connection(), run, { staleMs: 60_000 });
    expect((await a.acquire()).ok).toBe(true);
    await redis.del(keyFor.lease(run)); // a's key expired while it was frozen...
    expect((await b.acquire()).ok).toBe(true); // ...and b took the run
    const lost = await a.renew();
    expect(lost).toMatchObject({
      ok: false,
      why: 'another coordinator took the lease over',
      holder: { token: b.token, generation: 2 },
    });
    expect(a.held).toBe(false);
    await a.release();
    expect(await readRunLeaseToken(redis, run)).toBe(b.token);
    expect(await redis.pttl(keyFor.lease(run))).toBeGreaterThan(0);
    await b.release();
  });

  it('a holder whose key vanished after another coordinator took the run and released it is fenced by the generation', async () => {
    const run = newRunId();
    const a = new RedisRunLease(redis, run, { staleMs: 60_000 });
    const b = new RedisRunLease(connection(), run, { staleMs: 60_000 });
    expect((await a.acquire()).ok).toBe(true);
    await redis.del(keyFor.lease(run)); // a's key expired while a was out of touch
    expect((await b.acquire()).ok).toBe(true);
    await b.release(); // b finished with the run
    const lost = await a.renew();
    expect(lost).toEqual({
      ok: false,
      why: 'another coordinator took the lease over (generation 2, this one held 1) and has released it since',
    });
    expect(await redis.exists(keyFor.lease(run))).toBe(0); // not re-created
  });

  it('a holder of this host whose process is gone is taken over at once; one of another host is not', async () => {
    const run = newRunId();
    const dead = await deadPid();
    const crashed = new RedisRunLease(connection(), run, { pid: dead });
    expect((await crashed.acquire()).ok).toBe(true);
    const next = new RedisRunLease(redis, run);
    expect(await next.holder()).toBeUndefined(); // stale for this host
    const got = await next.acquire();
    expect(got).toMatchObject({
      ok: true,
      tookOver: { holder: { pid: dead, token: crashed.token }, why: `its process (pid ${dead}) is gone` },
    });
    expect(next.generation).toBe(2);
    expect(await readRunLeaseToken(redis, run)).toBe(next.token);
    // The crashed holder, should it come back, has lost it.
    expect(await crashed.renew()).toMatchObject({ ok: false, holder: { token: next.token } });
    await next.release();

    const run2 = newRunId();
    await redis.set(keyFor.lease(run2), holderValue({ pid: dead, host: 'elsewhere', token: 'remote' }), 'PX', 60_000);
    expect(await new RedisRunLease(redis, run2).acquire()).toMatchObject({
      ok: false,
      holder: { token: 'remote', host: 'elsewhere' },
    });
  });

  it('a dead holder is replaced only if the key still holds exactly that holder (a live one that got in first stays)', async () => {
    const run = newRunId();
    const dead = await deadPid();
    const conns = Array.from({ length: 10 }, () => connection());
    await redis.set(keyFor.lease(run), holderValue({ pid: dead, token: 'crashed' }), 'PX', 60_000);
    const leases = conns.map((c) => new RedisRunLease(c, run));
    const results = await Promise.all(leases.map((l) => l.acquire()));
    const winners = leases.filter((_, i) => results[i]!.ok);
    expect(winners).toHaveLength(1);
    for (const r of results) if (!r.ok) expect(r.holder.token).toBe(winners[0]!.token);
    await winners[0]!.release();
  });

  it('an expired key (no renew for the stale time) lets a new holder in', async () => {
    const run = newRunId();
    const a = new RedisRunLease(redis, run, { staleMs: 300 });
    const b = new RedisRunLease(connection(), run, { staleMs: 300 });
    expect((await a.acquire()).ok).toBe(true);
    expect((await b.acquire()).ok).toBe(false);
    expect(await until(async () => (await redis.exists(keyFor.lease(run))) === 0)).toBe(true);
    expect(await b.acquire()).toEqual({ ok: true });
    expect(b.generation).toBe(2);
    expect(await a.renew()).toMatchObject({ ok: false, holder: { token: b.token } });
    await b.release();
  });

  it('an unreadable value in the key is an unknown holder that is refused until the key expires', async () => {
    const run = newRunId();
    await redis.set(keyFor.lease(run), 'not json', 'PX', 60_000);
    expect(await new RedisRunLease(redis, run).acquire()).toMatchObject({
      ok: false,
      holder: { pid: 0, host: '(unknown: unreadable lease value in Redis)' },
    });
    expect(await readRunLeaseToken(redis, run)).toBeUndefined();
  });

  describe('Redis restarts and outages', () => {
    let own: RedisServerHandle;
    let conn: Redis;
    afterEach(async () => {
      conn?.disconnect();
      await own?.stop();
    });

    it('Redis restarted (data lost) while held: renew re-creates the key with the same token and restores the generation', async () => {
      own = await startRedis();
      conn = connectRedis(own.url, { name: 'holder' });
      const run = newRunId();
      let recreated = 0;
      const errors: Error[] = [];
      const a = new RedisRunLease(conn, run, {
        staleMs: 60_000,
        onRecreated: () => recreated++,
        onError: (e) => errors.push(e),
      });
      expect((await a.acquire()).ok).toBe(true);
      await own.restart();
      // Renews during the reconnect report an error (not a loss); the first that reaches Redis re-creates the key.
      expect(
        await until(async () => {
          expect(await a.renew()).toEqual({ ok: true });
          return recreated > 0;
        }),
      ).toBe(true);
      expect(recreated).toBe(1);
      expect(a.held).toBe(true);
      expect((await readRedisRunLease(conn, run))?.token).toBe(a.token);
      expect(await conn.get(keyFor.leaseGeneration(run))).toBe('1');
      expect(await conn.pttl(keyFor.lease(run))).toBeGreaterThan(50_000);
      expect(await new RedisRunLease(conn, run).acquire()).toMatchObject({ ok: false, holder: { token: a.token } });
      expect(await a.renew()).toEqual({ ok: true });
      expect(recreated).toBe(1); // a plain renew from now on
      await a.release();
      const b = new RedisRunLease(conn, run);
      expect((await b.acquire()).ok).toBe(true);
      expect(b.generation).toBe(2);
      await b.release();
    });

    it('Redis unreachable during renew: reported through onError, the lease is not lost; renew works again when Redis is back', async () => {
      own = await startRedis();
      conn = connectRedis(own.url, { name: 'holder' });
      const run = newRunId();
      const errors: Error[] = [];
      const a = new RedisRunLease(conn, run, { staleMs: 60_000, callTimeoutMs: 2_000, onError: (e) => errors.push(e) });
      expect((await a.acquire()).ok).toBe(true);
      own.kill9();
      expect(await a.renew()).toEqual({ ok: true });
      expect(errors.length).toBeGreaterThan(0);
      expect(a.held).toBe(true);
      await own.restart();
      expect(await until(async () => (await a.renew()).ok && (await readRunLeaseToken(conn, run)) === a.token)).toBe(
        true,
      );
      await a.release();
    });

    it('acquire throws (for the caller to report) when Redis cannot be reached', async () => {
      own = await startRedis();
      conn = connectRedis(own.url, { name: 'holder' });
      await conn.ping();
      own.kill9();
      await expect(new RedisRunLease(conn, newRunId(), { callTimeoutMs: 2_000 }).acquire()).rejects.toThrow();
    });
  });

  describe('held together with the file lease (HeldRunLease, takeRedisRunLease)', () => {
    const tmp = (): string => {
      const d = mkdtempSync(join(tmpdir(), 'redis-lease-'));
      dirs.push(d);
      return d;
    };

    it('losing the Redis lease stops the run like losing the file lease; release gives both up', async () => {
      const run = newRunId();
      const dir = tmp();
      const file = new FileRunLease(dir);
      const inRedis = new RedisRunLease(redis, run, { staleMs: 60_000 });
      expect((await file.acquire()).ok).toBe(true);
      expect((await inRedis.acquire()).ok).toBe(true);
      const held = new HeldRunLease(file, run, 20, inRedis);
      const told: string[] = [];
      held.onLost = (m) => told.push(m);
      const lost = new Promise((r) => held.lost.addEventListener('abort', r));
      // A takeover: the key is deleted and another coordinator takes it. The held lease's 20 ms heartbeat
      // may re-create the key in between (what it does when Redis lost it), so try again until the thief
      // wins: on a loaded machine the renew can land there several times.
      const thief = new RedisRunLease(connection(), run, { staleMs: 60_000 });
      let taken = false;
      for (let i = 0; i < 200 && !taken; i++) {
        await redis.del(keyFor.lease(run));
        taken = (await thief.acquire()).ok;
      }
      expect(taken).toBe(true);
      await lost;
      expect(told).toHaveLength(1);
      expect(told[0]).toContain(
        `this coordinator lost the lease of run ${run}: another coordinator took the lease over (now pid ${process.pid} on host ${hostname()}`,
      );
      await held.release();
      expect(readRunLease(dir)?.state).toEqual({ state: 'released' });
      expect(await readRunLeaseToken(redis, run)).toBe(thief.token); // the thief's lease is untouched
      await thief.release();
    });

    it('takeRedisRunLease holds both; release frees both', async () => {
      const run = newRunId();
      const dir = tmp();
      const taken = await takeRedisRunLease(dir, run, redis);
      expect(taken.ok).toBe(true);
      if (!taken.ok) return;
      expect(await readRunLeaseToken(redis, run)).toBe(taken.redisLease.token);
      expect(readRunLease(dir)?.state).toEqual({ state: 'live' });
      await taken.lease.release();
      expect(await readRunLeaseToken(redis, run)).toBeUndefined();
      expect(readRunLease(dir)?.state).toEqual({ state: 'released' });
    });

    it('takeRedisRunLease refuses a run held in Redis with who holds it, and gives the Redis lease back when the file lease is held', async () => {
      const run = newRunId();
      const other = new RedisRunLease(connection(), run, { host: 'build-7' });
      expect((await other.acquire()).ok).toBe(true);
      const refused = await takeRedisRunLease(tmp(), run, redis);
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.message).toContain(
          `run ${run} is running: its coordinator is pid ${process.pid} on host build-7`,
        );
        expect(refused.holder?.token).toBe(other.token);
      }
      await other.release();

      const dir = tmp();
      const fileHolder = new FileRunLease(dir);
      expect((await fileHolder.acquire()).ok).toBe(true);
      const blocked = await takeRedisRunLease(dir, run, redis);
      expect(blocked.ok).toBe(false);
      expect(await readRunLeaseToken(redis, run)).toBeUndefined(); // given back
      await fileHolder.release();
    });

    it('takeRedisRunLease says so when Redis cannot be reached', async () => {
      const own = await startRedis();
      const conn = connectRedis(own.url, { name: 'holder' });
      try {
        await conn.ping();
        own.kill9();
        const r = await takeRedisRunLease(tmp(), newRunId(), conn, { callTimeoutMs: 2_000 });
        expect(r.ok).toBe(false);
        if (!r.ok)
          expect(r.message).toMatch(
            /^cannot take the lease of run run-\S+ in Redis: .+\. Check that Redis is reachable \(--redis \/ ORCHESTRATE_REDIS_URL\)\.$/,
          );
      } finally {
        conn.disconnect();
        await own.stop();
      }
    });
  });

  describe('the lease race (real processes)', { timeout: 120_000 }, () => {
    const CONTENDERS = 6;
    const procs: ChildProcess[] = [];
    afterAll(() => {
      for (const p of procs) p.kill('SIGKILL');
    });

    it('contenders in separate processes at the same instant: exactly one wins, every loser names the winner', async () => {
      const root = resolve(import.meta.dirname, '../..');
      const replies = new Map<
        string,
        { ok: boolean; token: string; holder?: string; error?: string; generation?: number }[]
      >();
      const waiting = new Map<string, () => void>();
      let ready = 0;
      let allReady!: () => void;
      const started = new Promise<void>((r) => (allReady = r));
      for (let i = 0; i < CONTENDERS; i++) {
        const p = spawn(
          process.execPath,
          [
            ...CHILD_LOADER_ARGS,
            join(root, 'test/cluster/fixtures/redis-lease-contender.mjs'),
            server.url,
            ...['cluster/redis-connection.ts', 'cluster/redis-run-lease.ts'].map(
              (m) => pathToFileURL(childModule(m)).href,
            ),
          ],
          { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] },
        );
        procs.push(p);
        createInterface({ input: p.stdout! }).on('line', (line) => {
          if (line === 'ready') {
            if (++ready === CONTENDERS) allReady();
            return;
          }
          const reply = JSON.parse(line) as { runId: string; ok: boolean; token: string };
          const list = replies.get(reply.runId) ?? [];
          list.push(reply);
          replies.set(reply.runId, list);
          if (list.length === CONTENDERS) waiting.get(reply.runId)?.();
        });
      }
      await started;
      const dead = await deadPid();
      const setups: Record<string, (run: string) => Promise<unknown>> = {
        'no lease yet': async () => undefined,
        'holder killed': (run) =>
          redis.set(keyFor.lease(run), holderValue({ pid: dead, token: 'crashed' }), 'PX', 60_000),
        released: async (run) => {
          const l = new RedisRunLease(redis, run);
          await l.acquire();
          await l.release();
        },
      };
      const rounds = Object.keys(setups).flatMap((name) => [1, 2, 3, 4].map(() => name));
      for (const name of rounds) {
        const run = newRunId();
        await setups[name]!(run);
        const done = new Promise<void>((r) => waiting.set(run, r));
        const startAt = Date.now() + 50;
        for (const p of procs) p.stdin!.write(`acquire ${run} ${startAt}\n`);
        await done;
        const got = replies.get(run)!;
        expect(
          got.filter((g) => g.error),
          name,
        ).toEqual([]);
        const winners = got.filter((g) => g.ok);
        expect(winners, `${name}: winners`).toHaveLength(1);
        expect(
          got.filter((g) => !g.ok).map((g) => g.holder),
          name,
        ).toEqual(Array(CONTENDERS - 1).fill(winners[0]!.token));
        expect(await readRunLeaseToken(redis, run), name).toBe(winners[0]!.token);
        expect(winners[0]!.generation, name).toBe(name === 'released' ? 2 : 1);
      }
      console.log(`[redis-lease-race] contenders=${CONTENDERS} rounds=${rounds.length} double_winners=0`);
    });
  });
});
