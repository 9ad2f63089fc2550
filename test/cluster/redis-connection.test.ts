// Redis URLs and connections against a real redis-server: URL checks with actionable errors,
// passwords never shown, the fail-fast reachability check (refused, silent server, wrong password,
// not Redis at all), and a long-lived connection that finds a restarted Redis again.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkRedis,
  connectRedis,
  keyFor,
  parseRedisUrl,
  reconnectDelay,
  redactRedisUrl,
} from '../../src/cluster/redis-connection.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';

/** checkRedis's limit where an answer is expected: it only bounds a hang, so a loaded machine never hits it. */
const LIMIT = 30_000;

describe('parseRedisUrl', () => {
  it('accepts redis:// and rediss:// URLs, with or without auth, port and db', () => {
    for (const url of [
      'redis://127.0.0.1:6379',
      'redis://localhost',
      'rediss://cache.example.com:6380/2',
      'redis://:pw@h:1',
      'redis://user:pw@h/0',
      ' redis://h:1 ',
    ]) {
      expect(parseRedisUrl(url)).toEqual({ ok: true, url: url.trim() });
    }
  });

  it('rejects other schemes, no scheme, no host and a non-numeric db, and shows the expected form', () => {
    const cases: [string, string][] = [
      ['http://127.0.0.1:6379', 'the scheme is "http", not redis or rediss'],
      ['127.0.0.1:6379', 'it has no scheme'],
      ['localhost', 'it has no scheme'],
      ['', 'it is empty'],
      ['redis://', 'it names no host'],
      ['redis://h:1/cache', 'the path "/cache" is not a database number'],
      ['redis://h:99999', 'it does not parse as a URL'],
    ];
    for (const [url, why] of cases) {
      const r = parseRedisUrl(url);
      expect(r.ok, url).toBe(false);
      if (!r.ok) {
        expect(r.error).toContain(why);
        expect(r.error).toContain('Expected redis://[user:password@]host[:port][/db]');
      }
    }
  });

  it('never shows the password of a rejected URL', () => {
    for (const url of ['http://admin:hunter2@h:1', 'admin:hunter2@h:6379']) {
      const r = parseRedisUrl(url);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error).not.toContain('hunter2');
        expect(r.error).toContain('admin:***@');
      }
    }
  });

  it('suggests the URL with a scheme when the scheme is missing', () => {
    const r = parseRedisUrl('localhost:6379');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain('it has no scheme (did you mean redis://localhost:6379?)');
  });
});

describe('redactRedisUrl', () => {
  it('masks the password, keeps the rest, leaves URLs without one alone', () => {
    expect(redactRedisUrl('redis://user:s3cret@h:6379/1')).toBe('redis://user:***@h:6379/1');
    expect(redactRedisUrl('rediss://:s3cret@h')).toBe('rediss://:***@h');
    expect(redactRedisUrl('redis://h:6379')).toBe('redis://h:6379');
    expect(redactRedisUrl('redis://u:p@ss/word@h:1 not a url')).not.toContain('p@ss/word');
  });
});

describe('keyFor', () => {
  it('puts every key under orchestrate:', () => {
    expect(keyFor.lease('run-1')).toBe('orchestrate:run:run-1:lease');
    expect(keyFor.leaseGeneration('run-1')).toBe('orchestrate:run:run-1:lease:generation');
  });
});

describe('reconnectDelay', () => {
  it('backs off and is capped (reconnects forever, at least every 2.1 s)', () => {
    expect(reconnectDelay(1)).toBeLessThan(reconnectDelay(8));
    for (const n of [20, 1_000, 1e6]) expect(reconnectDelay(n)).toBeLessThan(2_100);
  });
});

describe.skipIf(skipWithoutRedis('Redis connection tests'))('with a real redis-server', () => {
  let redis: RedisServerHandle;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('checkRedis reports the server version, and warns when Redis may evict keys (BullMQ needs noeviction)', async () => {
    const r = await checkRedis(redis.url, LIMIT);
    expect(r).toMatchObject({ ok: true, warnings: [] });
    if (r.ok) expect(r.version).toMatch(/^\d+\.\d+\.\d+/);
    const admin = connectRedis(redis.url, { name: 'test-admin' });
    try {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      const evicting = await checkRedis(redis.url, LIMIT);
      expect(evicting).toMatchObject({ ok: true, warnings: [expect.stringContaining('maxmemory-policy allkeys-lru')] });
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      admin.disconnect();
    }
  });

  it('checkRedis fails fast on a port nobody listens on, with the fix in the message', async () => {
    const port = await closedPort();
    const r = await checkRedis(`redis://127.0.0.1:${port}`, LIMIT);
    expect(r).toEqual({
      ok: false,
      error: `cannot reach Redis at redis://127.0.0.1:${port}: connection refused (nothing listens on that port). Start redis-server or check --redis / ORCHESTRATE_REDIS_URL.`,
    });
  });

  it('checkRedis gives up after its time limit when the server never answers', async () => {
    const silent = await listen(() => {}); // accepts connections, never replies
    try {
      const started = Date.now();
      const r = await checkRedis(`redis://127.0.0.1:${port(silent)}`, 300);
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect(r.error).toMatch(
          /^cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: .*Start redis-server or check --redis \/ ORCHESTRATE_REDIS_URL\.$/,
        );
      expect(Date.now() - started).toBeLessThan(25_000); // bounded, not a hang (a hang is forever; a loaded machine is slow)
    } finally {
      silent.close();
    }
  });

  it('checkRedis says when what answers is not Redis', async () => {
    const http = await listen((sock) => sock.on('data', () => sock.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
    try {
      const r = await checkRedis(`redis://127.0.0.1:${port(http)}`, LIMIT);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain('does not speak the Redis protocol');
    } finally {
      http.close();
    }
  });

  it('checkRedis reports a wrong password without showing it', async () => {
    const admin = connectRedis(redis.url, { name: 'test-admin' });
    try {
      await admin.config('SET', 'requirepass', 'right-one');
      const r = await checkRedis(`redis://:wrong-one@127.0.0.1:${redis.port}`, LIMIT);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error).toContain('authentication failed');
        expect(r.error).not.toContain('wrong-one');
        expect(r.error).toContain(`redis://:***@127.0.0.1:${redis.port}`);
      }
      expect(await checkRedis(`redis://:right-one@127.0.0.1:${redis.port}`, LIMIT)).toMatchObject({ ok: true });
      await admin.auth('right-one');
      await admin.config('SET', 'requirepass', '');
    } finally {
      admin.disconnect();
    }
  });

  it('checkRedis refuses a malformed URL before connecting', async () => {
    const r = await checkRedis('localhost:6379', LIMIT);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain('invalid Redis URL "localhost:6379": it has no scheme');
  });

  it('connectRedis names the connection and finds Redis again after a restart (data lost, connection back)', async () => {
    const own = await startRedis();
    const client = connectRedis(own.url, { name: 'coordinator run-1' });
    const bull = connectRedis(own.url, { name: 'worker', forBullmq: true });
    try {
      expect(await client.client('GETNAME')).toBe('orchestrate:coordinator-run-1');
      expect(bull.options.maxRetriesPerRequest).toBeNull();
      expect(client.options.maxRetriesPerRequest).toBe(1);
      await client.set('k', 'v');
      await own.restart();
      // The BullMQ-style connection waits across the reconnect: its command simply succeeds.
      expect(await bull.ping()).toBe('PONG');
      // The other one may fail while reconnecting, but comes back by itself.
      expect(await eventually(async () => (await client.ping()) === 'PONG')).toBe(true);
      expect(await client.get('k')).toBeNull();
      expect(await client.client('GETNAME')).toBe('orchestrate:coordinator-run-1');
    } finally {
      client.disconnect();
      bull.disconnect();
      await own.stop();
    }
  });

  it('a non-BullMQ connection fails a command during an outage instead of hanging, then recovers', async () => {
    const own = await startRedis();
    const client = connectRedis(own.url, { name: 'lease' });
    try {
      await client.ping();
      own.kill9();
      await expect(client.ping()).rejects.toThrow();
      await own.restart();
      expect(await eventually(async () => (await client.ping()) === 'PONG')).toBe(true);
    } finally {
      client.disconnect();
      await own.stop();
    }
  });
});

/** Retries `f` (errors count as false) until it is true or the limit passes. */
async function eventually(f: () => Promise<boolean>, limitMs = 15_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  for (;;) {
    try {
      if (await f()) return true;
    } catch {
      // not yet
    }
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function listen(onConn: (sock: import('node:net').Socket) => void): Promise<Server> {
  return new Promise((resolve) => {
    const srv = createServer(onConn);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

function port(srv: Server): number {
  const a = srv.address();
  return typeof a === 'object' && a ? a.port : 0;
}

/** A port that was free a moment ago and has nothing listening on it now. */
async function closedPort(): Promise<number> {
  const srv = await listen(() => {});
  const p = port(srv);
  await new Promise((r) => srv.close(r));
  return p;
}
