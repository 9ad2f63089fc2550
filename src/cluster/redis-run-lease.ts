// The run lease in Redis, for distributed runs (`--redis`): the same contract as the file lease
// (run-lease.ts: one coordinator per run), visible to every worker, so a worker can drop the jobs
// of a coordinator that no longer holds its run (`readRunLeaseToken`).
//
// One key per run, `orchestrate:run:<runId>:lease`, holds the holder's JSON (pid, host, token,
// startedAt, heartbeatAt, generation) with a TTL of the stale time: a holder that stops renewing
// (crash, kill -9, a frozen machine, a lost network) frees the run when the key expires. Every
// change is one Lua script, so it is atomic against all other contenders:
// - acquire: set the key only if it is absent (SET NX PX in effect) or still exactly the value we
//   judged stale (a holder on this host whose process is gone, taken over at once like the file
//   lease), and INCR the run's generation counter in the same step; of N racing contenders exactly
//   one wins.
// - renew: extend only a key that carries our token; release: delete only a key that carries our
//   token. Nobody else's lease is ever extended or deleted.
//
// The generation counter (`orchestrate:run:<runId>:lease:generation`, no TTL) only grows. It fences
// the one case a token cannot: our key is GONE at renew time. That happens when Redis restarted or
// lost its data (not another coordinator taking over: the renew re-creates the key with our token),
// or when our key expired while we were out of touch and another coordinator acquired the run and
// released it since (the counter moved past our generation: we lost). A Redis that lost its data
// lost the counter too; the renew then restores it to our generation.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { ORCHESTRATOR_DEFAULTS } from '../orchestrator/defaults.js';
import {
  isLeaseHolder,
  liveRunMessage,
  processAlive,
  takeRunLease,
  type HeldRunLease,
  type LeaseAcquire,
  type LeaseHolder,
  type LeaseRenew,
  type RunLease,
} from '../run/run-lease.js';
import { keyFor } from './redis-connection.js';

/** A holder of a Redis run lease: the file lease's holder plus its generation (1, 2, ... per run). */
export interface RedisLeaseHolder extends LeaseHolder {
  generation: number;
}

export interface RedisRunLeaseOptions {
  /** The key's TTL: a holder that stops renewing frees the run after this long (default ORCHESTRATOR_DEFAULTS.leaseStaleMs). */
  staleMs?: number;
  /** This host's name (default os.hostname()); a holder on this host whose process is gone is taken over at once. */
  host?: string;
  /** The pid recorded as the holder (default process.pid). */
  pid?: number;
  now?: () => number;
  /** Time limit of one Redis call of this lease (default 5 s). */
  callTimeoutMs?: number;
  /** A renew that could not reach Redis (it still reported the lease as held: see renew()). */
  onError?: (err: Error) => void;
  /** The token to hold the lease with (default: random); a distributed run's is made with the cluster secret (ClusterTrust.leaseToken). */
  token?: string;
  /** A renew found the key gone with nobody else holding the run (Redis restarted or lost data) and re-created it. */
  onRecreated?: () => void;
}

const DEFAULT_CALL_TIMEOUT_MS = 5_000;
/** Contenders' rounds before giving up (each lost round means the key changed under us). */
const ACQUIRE_ROUNDS = 20;

// KEYS: lease, generation. ARGV: the record without its generation (ends in `"generation":`),
// the value we judged stale ('' for none), the TTL in ms. Returns {1, value} or {0, current value}.
const ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[2] then return {0, cur} end
local gen = redis.call('INCR', KEYS[2])
local value = ARGV[1] .. gen .. '}'
redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
return {1, value}`;

// KEYS: lease, generation. ARGV: token, new value, TTL in ms, our generation.
// Returns {1} renewed, {2} re-created, {0, value} another holder, {3, generation} taken and released since.
const RENEW = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, h = pcall(cjson.decode, cur)
  if ok and type(h) == 'table' and h.token == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return {1}
  end
  return {0, cur}
end
local mine = tonumber(ARGV[4])
local g = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if g > mine then return {3, tostring(g)} end
if g < mine then redis.call('SET', KEYS[2], ARGV[4]) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return {2}`;

// KEYS: lease. ARGV: token. Deletes the key only when it carries the token; returns 1 when it did.
const RELEASE = `
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local ok, h = pcall(cjson.decode, cur)
if ok and type(h) == 'table' and h.token == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;

/**
 * The holder stored in a lease value. A value that does not parse (written by hand, another
 * program) stands for an unknown holder that is live until the key's TTL ends.
 */
export function parseLeaseValue(value: string): RedisLeaseHolder {
  try {
    const v: unknown = JSON.parse(value);
    if (isLeaseHolder(v)) {
      const { generation } = v as Partial<RedisLeaseHolder>;
      return { ...v, generation: typeof generation === 'number' ? generation : 0 };
    }
  } catch {
    // below
  }
  return {
    pid: 0,
    host: '(unknown: unreadable lease value in Redis)',
    token: '',
    startedAt: 0,
    heartbeatAt: 0,
    generation: 0,
  };
}

/** The holder of a run's Redis lease as stored (live or not), or undefined when there is none. */
export async function readRedisRunLease(redis: Redis, runId: string): Promise<RedisLeaseHolder | undefined> {
  const value = await redis.get(keyFor.lease(runId));
  return value === null ? undefined : parseLeaseValue(value);
}

/**
 * The token of the coordinator that holds the run now, or undefined when nobody does. A worker
 * compares it with the token a job carries and drops jobs of a coordinator that lost the run.
 */
export async function readRunLeaseToken(redis: Redis, runId: string): Promise<string | undefined> {
  const holder = await readRedisRunLease(redis, runId);
  return holder?.token || undefined;
}

/** Rejects with a timeout error when `p` takes longer than `ms`. */
function withLimit<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer ${what} within ${ms} ms`)), ms);
  });
  p.catch(() => {}); // settled after the limit: nobody waits for it any more
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** A run's lease held in Redis (see the top of this file). Shares the caller's connection; never closes it. */
export class RedisRunLease implements RunLease {
  /** Per lease object: what workers compare jobs against (options.token, else random). */
  readonly token: string;
  private gen: number | undefined;
  private startedAt = 0;
  private readonly key: string;
  private readonly genKey: string;
  private readonly host: string;
  private readonly pid: number;
  private readonly staleMs: number;
  private readonly callTimeoutMs: number;

  constructor(
    private readonly redis: Redis,
    readonly runId: string,
    private readonly options: RedisRunLeaseOptions = {},
  ) {
    this.token = options.token ?? randomBytes(12).toString('hex');
    this.key = keyFor.lease(runId);
    this.genKey = keyFor.leaseGeneration(runId);
    this.host = options.host ?? hostname();
    this.pid = options.pid ?? process.pid;
    this.staleMs = Math.max(1, Math.round(options.staleMs ?? ORCHESTRATOR_DEFAULTS.leaseStaleMs)); // PX takes whole ms
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  get held(): boolean {
    return this.gen !== undefined;
  }

  /** This holder's generation while it holds the lease. */
  get generation(): number | undefined {
    return this.gen;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private call(script: string, keys: string[], args: (string | number)[], what: string): Promise<unknown> {
    return withLimit(this.redis.eval(script, keys.length, ...keys, ...args), this.callTimeoutMs, what);
  }

  private record(heartbeatAt: number): Omit<LeaseHolder, 'releasedAt'> {
    return { pid: this.pid, host: this.host, token: this.token, startedAt: this.startedAt, heartbeatAt };
  }

  /** Whether a stored holder is stale for this host: it ran here and its process is gone. */
  private staleWhy(h: LeaseHolder): string | undefined {
    return h.host === this.host && !processAlive(h.pid) ? `its process (pid ${h.pid}) is gone` : undefined;
  }

  /** Throws when Redis cannot be reached (the caller reports it); a refusal is `ok: false`. */
  async acquire(): Promise<LeaseAcquire> {
    if (this.gen !== undefined) return { ok: true };
    try {
      for (let round = 0; round < ACQUIRE_ROUNDS; round++) {
        const current = await withLimit(this.redis.get(this.key), this.callTimeoutMs, 'reading the lease');
        let tookOver: { holder: LeaseHolder; why: string } | undefined;
        if (current !== null) {
          const holder = parseLeaseValue(current);
          const why = this.staleWhy(holder);
          if (!why) return { ok: false, holder };
          tookOver = { holder, why };
        }
        this.startedAt = this.now();
        const prefix = `${JSON.stringify(this.record(this.startedAt)).slice(0, -1)},"generation":`;
        const r = (await this.call(
          ACQUIRE,
          [this.key, this.genKey],
          [prefix, current ?? '', this.staleMs],
          'taking the lease',
        )) as [number, string];
        if (r[0] === 1) {
          this.gen = parseLeaseValue(r[1]).generation;
          return tookOver ? { ok: true, tookOver } : { ok: true };
        }
        // The key changed between our read and the script (another contender won, or the stale
        // holder was replaced): look again.
      }
    } catch (err) {
      // A script that timed out may still run later and leave our key behind; this delete is
      // queued after it on the same connection, so it undoes that (best effort; the TTL also does).
      this.redis.eval(RELEASE, 1, this.key, this.token).catch(() => {});
      throw asError(err);
    }
    const last = await readRedisRunLease(this.redis, this.runId);
    if (last) return { ok: false, holder: last };
    throw new Error(
      `could not take the lease of run ${this.runId} in Redis after ${ACQUIRE_ROUNDS} tries (the lease keeps changing)`,
    );
  }

  /**
   * Heartbeat. Lost (`ok: false`) only when Redis shows that another coordinator holds the run or
   * held it since our generation. While Redis cannot be reached the lease is reported as held and
   * the error goes to `onError`: a Redis restart or a network blip must not stop a run whose
   * workers are waiting for that same Redis, and nothing is lost by waiting, because the key's TTL
   * still frees the run for others if the outage outlasts it, and the first renew that reaches
   * Redis again finds out (another token, or a generation past ours) and reports the loss then.
   */
  async renew(): Promise<LeaseRenew> {
    const gen = this.gen;
    if (gen === undefined) return { ok: false, why: 'the lease is not held' };
    const value = JSON.stringify({ ...this.record(this.now()), generation: gen });
    let r: [number, string?];
    try {
      r = (await this.call(
        RENEW,
        [this.key, this.genKey],
        [this.token, value, this.staleMs, gen],
        'renewing the lease',
      )) as [number, string?];
    } catch (err) {
      this.options.onError?.(asError(err));
      return { ok: true };
    }
    if (this.gen !== gen) return { ok: false, why: 'the lease was released' }; // released while the renew was under way
    if (r[0] === 1) return { ok: true };
    if (r[0] === 2) {
      this.options.onRecreated?.();
      return { ok: true };
    }
    this.gen = undefined;
    if (r[0] === 0 && r[1] !== undefined)
      return { ok: false, why: 'another coordinator took the lease over', holder: parseLeaseValue(r[1]) };
    return {
      ok: false,
      why: `another coordinator took the lease over (generation ${r[1] ?? '?'}, this one held ${gen}) and has released it since`,
    };
  }

  /** Gives the lease up: deletes the key if it still carries our token. Never throws (the TTL frees it anyway). */
  async release(): Promise<void> {
    if (this.gen === undefined) return;
    this.gen = undefined;
    try {
      await this.call(RELEASE, [this.key], [this.token], 'releasing the lease');
    } catch {
      // Unreachable: the key expires after staleMs.
    }
  }

  /** The live holder (this process included), or undefined when the run is free or its holder is a dead process of this host. */
  async holder(): Promise<LeaseHolder | undefined> {
    const h = await withLimit(readRedisRunLease(this.redis, this.runId), this.callTimeoutMs, 'reading the lease');
    return h && !this.staleWhy(h) ? h : undefined;
  }
}

export type TakeRedisRunLease =
  | { ok: true; lease: HeldRunLease; redisLease: RedisRunLease; tookOver?: { holder: LeaseHolder; why: string } }
  | { ok: false; message: string; holder?: LeaseHolder };

/**
 * A distributed run's two leases: the Redis lease (which workers check) and then the run folder's
 * file lease, held together by one HeldRunLease (one heartbeat each, either's loss stops the run,
 * release gives both up). `redisLease.token` is what the coordinator stamps on its jobs.
 */
export async function takeRedisRunLease(
  dir: string,
  runId: string,
  redis: Redis,
  options: RedisRunLeaseOptions = {},
): Promise<TakeRedisRunLease> {
  const redisLease = new RedisRunLease(redis, runId, options);
  let got: LeaseAcquire;
  try {
    got = await redisLease.acquire();
  } catch (err) {
    return {
      ok: false,
      message: `cannot take the lease of run ${runId} in Redis: ${(err as Error).message}. Check that Redis is reachable (--redis / ORCHESTRATE_REDIS_URL).`,
    };
  }
  if (!got.ok) return { ok: false, message: liveRunMessage(runId, got.holder, options.staleMs), holder: got.holder };
  const taken = takeRunLease(dir, runId, redisLease);
  if (!taken.ok) {
    await redisLease.release();
    return taken;
  }
  const tookOver = taken.tookOver ?? got.tookOver;
  return { ok: true, lease: taken.lease, redisLease, ...(tookOver ? { tookOver } : {}) };
}
