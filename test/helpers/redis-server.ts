// A real redis-server for tests: on a free 127.0.0.1 port, no persistence, its own temp folder.
// Distributed tests are skipped ONLY when redis-server is not installed, and then say so loudly
// (like the bwrap tests); an installed redis-server that cannot start makes them fail.
//
// Cleanup: every server is SIGKILLed when the test process exits ('exit' handler). A test process
// killed with SIGKILL runs no handler, so each redis-server runs under a small `sh` guard that
// holds a pipe from this process and kills the server when the pipe closes (this process gone).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServerHandle {
  /** redis://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The redis-server process (changes on restart). */
  pid: number;
  /** Stops the server (SIGTERM, then waits for its exit) and removes its folder. */
  stop(): Promise<void>;
  /** SIGKILLs the server at once (a crash); `restart()` brings it back. */
  kill9(): void;
  /** Kills the server (if running) and starts a new one on the same port: all data is lost. */
  restart(): Promise<void>;
}

const REDIS_BIN = 'redis-server';
/** Generous: a loaded 2-core CI machine may take a while to start a process. */
const START_LIMIT_MS = 15_000;
const PING_EVERY_MS = 20;

/** Whether redis-server is installed (on PATH). */
export function redisAvailable(): boolean {
  return !spawnSync(REDIS_BIN, ['--version']).error;
}

/** Prints the loud skip line once per test file when redis-server is missing; returns whether to skip. */
export function skipWithoutRedis(what: string): boolean {
  if (redisAvailable()) return false;
  process.stderr.write(
    `\n!!!!! SKIPPED: ${what}: redis-server is not installed here; install it (apt-get install -y redis-server) to run the distributed tests !!!!!\n\n`,
  );
  return true;
}

// The guard: starts redis-server in the background, prints its pid and waits for it, so the
// guard's exit means the server is gone (and reaped). A reader holds the guard's stdin (a pipe from
// this process); when this process dies the pipe closes, `read` returns and the server is killed.
const GUARD = [
  'exec 3<&0',
  'redis-server "$@" & pid=$!',
  'echo "$pid"',
  '( read -r _ <&3; kill -9 "$pid" 2>/dev/null ) & reader=$!',
  'wait "$pid" 2>/dev/null',
  'kill "$reader" 2>/dev/null',
].join('\n');

interface Running {
  guard: ChildProcess;
  pid: number;
  /** Resolves when the server process is gone. */
  exited: Promise<void>;
}

const live = new Set<Running>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const r of live) {
      try {
        process.kill(r.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** One PING over a raw socket: true when the server answered +PONG. */
function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let got = '';
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(1_000, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) done(got.startsWith('+PONG'));
    });
  });
}

async function launch(port: number, dir: string): Promise<Running> {
  installExitHook();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--protected-mode',
    'no',
    '--dir',
    dir,
    '--logfile',
    join(dir, 'redis.log'),
  ];
  const guard = spawn('sh', ['-c', GUARD, 'sh', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  guard.stdin?.on('error', () => {}); // EPIPE once the guard is gone
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    guard.on('exit', () => {
      gone = true;
      resolve();
    }),
  );
  const pid = await new Promise<number>((resolve, reject) => {
    let out = '';
    guard.stdout?.on('data', (d) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(Number(line));
    });
    guard.on('error', reject);
    void exited.then(() => reject(new Error('the redis-server guard exited before starting the server')));
  });
  const running: Running = { guard, pid, exited };
  live.add(running);
  void exited.then(() => live.delete(running));
  const log = (): string => {
    try {
      return readFileSync(join(dir, 'redis.log'), 'utf8').trim().split('\n').slice(-5).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    if (await pingOnce(port)) return running;
    if (gone) throw new Error(`redis-server on port ${port} exited at start:\n${log()}`);
    if (Date.now() > deadline) {
      guard.stdin?.end();
      throw new Error(`redis-server on port ${port} did not answer PING within ${START_LIMIT_MS} ms:\n${log()}`);
    }
    await new Promise((r) => setTimeout(r, PING_EVERY_MS));
  }
}

/** Starts a redis-server on a free port and waits until it answers PING. */
export async function startRedis(): Promise<RedisServerHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  let running: Running | undefined;
  let port = 0;
  // A free port may be taken between the probe and the server's bind: try a few.
  for (let attempt = 0; !running; attempt++) {
    port = await freePort();
    try {
      running = await launch(port, dir);
    } catch (err) {
      if (attempt >= 4) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  /** The server that was last killed, until it is gone (restart must not race its port). */
  let dying: Promise<void> = Promise.resolve();
  const kill = (signal: NodeJS.Signals): void => {
    const r = running;
    if (!r) return;
    running = undefined;
    try {
      process.kill(r.pid, signal);
    } catch {
      // already gone
    }
    dying = r.exited;
  };
  const handle: RedisServerHandle = {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: running.pid,
    async stop() {
      kill('SIGTERM');
      await dying;
      rmSync(dir, { recursive: true, force: true });
    },
    kill9() {
      kill('SIGKILL');
    },
    async restart() {
      kill('SIGKILL');
      await dying;
      running = await launch(port, dir);
      handle.pid = running.pid;
    },
  };
  return handle;
}

/**
 * Records every command the server receives (MONITOR) as its text lines, over a plain socket:
 * ioredis's monitor mode can take a monitor line for the reply to a command it still waits on
 * and throw "Command queue state error", failing a test for nothing. Lines look like
 * `1796345601.827996 [0 127.0.0.1:53724] "bzpopmin" "key" "5"`.
 */
export async function recordRedisCommands(url: string): Promise<{ seen: string[]; stop: () => void }> {
  const { hostname, port } = new URL(url);
  const socket = createConnection(Number(port), hostname);
  const seen: string[] = [];
  let pending = '';
  let started = false;
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      for (let end = pending.indexOf('\r\n'); end >= 0; end = pending.indexOf('\r\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (!started && line === '+OK') {
          started = true;
          resolve();
        } else if (line.startsWith('+')) seen.push(line.slice(1));
        else if (line.startsWith('-')) reject(new Error(`MONITOR refused: ${line.slice(1)}`));
      }
    });
    socket.write('MONITOR\r\n');
  });
  return { seen, stop: () => socket.destroy() };
}
