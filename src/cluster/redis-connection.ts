// Connections to the Redis of a distributed run (`--redis URL`, `ORCHESTRATE_REDIS_URL`): the URL
// check, long-lived connections that ride out a Redis restart, a one-shot reachability check for
// the CLI to fail fast, and the project's key names. URLs may carry a password: every message
// that shows a URL shows it through `redactRedisUrl`. A RedisEndpoint adds what should not be in
// the URL (visible in `ps`): the password (from env or a file), an ACL user, TLS files.
import { Redis, type RedisOptions } from 'ioredis';

/** Where Redis is and how to log in: the URL plus credentials and TLS material kept out of it. */
export interface RedisEndpoint {
  url: string;
  /** ACL user (AUTH user password); the URL's user part if absent. */
  username?: string;
  /** AUTH password; the URL's password if absent. */
  password?: string;
  /** TLS (the URL must be rediss://): a CA to verify the server, a client certificate and key. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
}

/** A plain URL or an endpoint with credentials: what every connection function takes. */
export type RedisTarget = string | RedisEndpoint;

export const urlOf = (t: RedisTarget): string => (typeof t === 'string' ? t : t.url);

/** ioredis options for the target's credentials and TLS (empty for a plain URL). */
function endpointOptions(t: RedisTarget): RedisOptions {
  if (typeof t === 'string') return {};
  const o: RedisOptions = {};
  if (t.username) o.username = t.username;
  if (t.password) o.password = t.password;
  if (t.tls)
    o.tls = {
      ...(t.tls.ca ? { ca: t.tls.ca } : {}),
      ...(t.tls.cert ? { cert: t.tls.cert } : {}),
      ...(t.tls.key ? { key: t.tls.key } : {}),
    };
  return o;
}

/** The one prefix of every key this project writes to Redis. */
const PREFIX = 'orchestrate:';

/** Key names (all under `orchestrate:`), one place so no two parts of the code spell them differently. */
export const keyFor = {
  /** A run's coordinator lease (redis-run-lease.ts): the holder's JSON, with a TTL. */
  lease: (runId: string): string => `${PREFIX}run:${runId}:lease`,
  /** The run lease's generation counter (INCR per acquisition; never expires, so generations never restart while Redis keeps its data). */
  leaseGeneration: (runId: string): string => `${PREFIX}run:${runId}:lease:generation`,
};

const EXPECTED_FORM = 'redis://[user:password@]host[:port][/db] (rediss:// for TLS), e.g. redis://127.0.0.1:6379';

/**
 * The URL with its password replaced by `***`. Works on the text, not a parsed URL, so it also
 * masks malformed input ("user:pw@host" without a scheme, a raw "@" in the password): everything
 * from the first ":" of the user part to the last "@" is masked (over-masking is harmless).
 */
export function redactRedisUrl(url: string): string {
  return url.replace(/^(\s*(?:[a-z][a-z0-9+.-]*:\/\/)?[^/:@\s]*):\S*@/i, '$1:***@');
}

/** Checks the shape of a Redis URL; the error says what is wrong and the expected form. */
export function parseRedisUrl(url: string): { ok: true; url: string } | { ok: false; error: string } {
  const text = url.trim();
  const bad = (why: string): { ok: false; error: string } => ({
    ok: false,
    error: `invalid Redis URL "${redactRedisUrl(text)}": ${why}. Expected ${EXPECTED_FORM}.`,
  });
  if (text === '') return bad('it is empty');
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text))
    return bad(`it has no scheme (did you mean ${redactRedisUrl(`redis://${text}`)}?)`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return bad('it does not parse as a URL');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    return bad(`the scheme is "${u.protocol.replace(/:$/, '')}", not redis or rediss`);
  if (!u.hostname) return bad('it names no host');
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) return bad(`the path "/${db}" is not a database number`);
  return { ok: true, url: text };
}

/** Reconnect delays: quick at first, then every `RECONNECT_CAP_MS`, forever (a restarted Redis is found again). */
const RECONNECT_CAP_MS = 2_000;
export function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** Math.min(attempt, 10), RECONNECT_CAP_MS) + Math.floor(Math.random() * 100);
}

export interface ConnectRedisOptions {
  /** Shown in CLIENT LIST (`orchestrate:<name>`), to tell coordinators and workers apart. */
  name?: string;
  /**
   * For a BullMQ Queue or Worker: commands wait across reconnects however long they take
   * (`maxRetriesPerRequest: null`; BullMQ refuses a blocking connection without it). Otherwise a
   * command issued while Redis is down fails after one reconnect attempt, so callers such as the
   * lease heartbeat learn about an outage instead of hanging on it.
   */
  forBullmq?: boolean;
}

/**
 * A long-lived connection that survives a Redis restart: it reconnects forever with a capped
 * backoff. Commands issued while disconnected are queued (the offline queue) until the connection
 * is back, or (not forBullmq) fail after one reconnect attempt. The caller closes it (`quit()`).
 * Listen to 'error' if you care: an 'error' listener is attached so a lost connection is never an
 * unhandled event.
 */
export function connectRedis(target: RedisTarget, opts: ConnectRedisOptions = {}): Redis {
  const options: RedisOptions = {
    ...endpointOptions(target),
    connectionName: `orchestrate:${(opts.name ?? 'client').replace(/\s+/g, '-')}`,
    retryStrategy: reconnectDelay,
    // Queued until connected: a command issued right after creation or during a short reconnect
    // waits instead of failing at once.
    enableOfflineQueue: true,
    maxRetriesPerRequest: opts.forBullmq ? null : 1,
    connectTimeout: 10_000,
  };
  const redis = new Redis(urlOf(target), options);
  redis.on('error', () => {
    // Reconnecting is ioredis' job (retryStrategy); callers that need to know listen themselves.
  });
  return redis;
}

/** A reason for a failed connection, for people: the error's code or message, nothing of the URL. */
function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { message?: string };
  if (e?.code === 'ECONNREFUSED') return 'connection refused (nothing listens on that port)';
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (e?.code === 'EHOSTUNREACH' || e?.code === 'ENETUNREACH') return 'the host is unreachable';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(String(e?.code ?? '')))
    return `the server's TLS certificate is not trusted (${String(e?.code)}); pass the CA that signed it with --redis-tls-ca or ORCHESTRATE_REDIS_TLS_CA`;
  const msg = String(e?.message ?? err);
  if (/WRONGPASS|NOAUTH|invalid password|invalid username/i.test(msg))
    return `authentication failed (${msg.split('\n')[0]}); check the user and password (--redis-password-file, ORCHESTRATE_REDIS_PASSWORD, ORCHESTRATE_REDIS_USER or the URL)`;
  if (/Unknown RESP type|Protocol error/i.test(msg))
    return 'what answers on that port does not speak the Redis protocol (is it a Redis server?)';
  return (msg.split('\n')[0] ?? msg).replace(/\.+$/, '');
}

const MIN_REDIS = [5, 0, 0];

/**
 * One connection attempt with a time limit, then disconnect: whether the CLI can use this Redis.
 * The error is a whole sentence for the user (URL redacted).
 */
export async function checkRedis(
  target: RedisTarget,
  timeoutMs: number,
): Promise<
  | { ok: true; version: string /** Things to print but not to stop for. */; warnings: string[] }
  | { ok: false; error: string }
> {
  const parsed = parseRedisUrl(urlOf(target));
  if (!parsed.ok) return parsed;
  const shown = redactRedisUrl(parsed.url);
  const fail = (why: string): { ok: false; error: string } => ({
    ok: false,
    error: `cannot reach Redis at ${shown}: ${why}. Start redis-server or check --redis / ORCHESTRATE_REDIS_URL.`,
  });
  const redis = new Redis(parsed.url, {
    ...endpointOptions(target),
    lazyConnect: true,
    retryStrategy: () => null, // one attempt
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: timeoutMs,
    connectionName: 'orchestrate:check',
  });
  let lastError: unknown;
  redis.on('error', (err) => (lastError = err));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const probe = (async () => {
      await redis.connect();
      return `${String(await redis.info('server'))}\n${String(await redis.info('memory'))}`;
    })();
    probe.catch(() => {}); // settled after a timeout: nobody waits for it any more
    const info = await Promise.race([probe, timeout]);
    if (info === 'timeout') return fail(`no answer within ${timeoutMs} ms`);
    const version = /^redis_version:(\S+)/m.exec(info)?.[1] ?? 'unknown';
    const parts = version.split('.').map(Number);
    const tooOld =
      version !== 'unknown' &&
      MIN_REDIS.some((want, i) => {
        const have = parts[i] ?? 0;
        const before = MIN_REDIS.slice(0, i).every((w, j) => (parts[j] ?? 0) === w);
        return before && have < want;
      });
    if (tooOld)
      return {
        ok: false,
        error: `Redis at ${shown} is version ${version}; the distributed executor (BullMQ) needs Redis ${MIN_REDIS.join('.')} or newer.`,
      };
    const warnings: string[] = [];
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    if (policy && policy !== 'noeviction') {
      warnings.push(
        `Redis at ${shown} may evict keys when its memory is full (maxmemory-policy ${policy}); queued jobs could vanish. Set maxmemory-policy noeviction (redis-cli config set maxmemory-policy noeviction).`,
      );
    }
    return { ok: true, version, warnings };
  } catch (err) {
    return fail(reason(lastError ?? err));
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}
