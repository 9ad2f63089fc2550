// The test redis-server itself: it answers on its port, a crash (kill9) and a restart on the same
// port with the data gone, stop(), and no server left behind when the test process is SIGKILLed.
import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { skipWithoutRedis, startRedis } from './redis-server.js';

/** Sends raw RESP commands (inline form) and returns the first reply line, or the socket error. */
function send(port: number, line: string): Promise<string> {
  return new Promise((done) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let got = '';
    sock.on('error', (e: NodeJS.ErrnoException) => done(`error ${e.code ?? e.message}`));
    sock.on('connect', () => sock.write(`${line}\r\n`));
    sock.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) {
        sock.destroy();
        done(got.split('\r\n')[0]!);
      }
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(cond: () => boolean, limitMs = 15_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

describe.skipIf(skipWithoutRedis('test redis-server helper'))('startRedis', () => {
  it('answers PING on its port; kill9 takes it down; restart brings it back on the same port without the data; stop ends it', async () => {
    const r = await startRedis();
    try {
      expect(r.url).toBe(`redis://127.0.0.1:${r.port}`);
      expect(await send(r.port, 'PING')).toBe('+PONG');
      expect(await send(r.port, 'SET k v')).toBe('+OK');
      const first = r.pid;
      r.kill9();
      expect(await until(() => !alive(first))).toBe(true);
      expect(await send(r.port, 'PING')).toBe('error ECONNREFUSED');
      await r.restart();
      expect(r.pid).not.toBe(first);
      expect(await send(r.port, 'PING')).toBe('+PONG');
      expect(await send(r.port, 'EXISTS k')).toBe(':0');
      await r.restart(); // a restart of a running server too
      expect(await send(r.port, 'PING')).toBe('+PONG');
    } finally {
      await r.stop();
    }
    expect(alive(r.pid)).toBe(false);
    expect(await send(r.port, 'PING')).toBe('error ECONNREFUSED');
  });

  it('two servers get two ports', async () => {
    const [a, b] = await Promise.all([startRedis(), startRedis()]);
    try {
      expect(a.port).not.toBe(b.port);
      expect(await send(a.port, 'PING')).toBe('+PONG');
      expect(await send(b.port, 'PING')).toBe('+PONG');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a test process killed with SIGKILL leaves no redis-server behind', async () => {
    const root = resolve(import.meta.dirname, '../..');
    const script = `import { startRedis } from './test/helpers/redis-server.ts'; const r = await startRedis(); console.log(r.pid); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pid = await new Promise<number>((done, fail) => {
      createInterface({ input: child.stdout! }).once('line', (l) => done(Number(l)));
      child.once('exit', () => fail(new Error('the child exited before starting redis')));
    });
    expect(alive(pid)).toBe(true);
    child.kill('SIGKILL');
    expect(await until(() => !alive(pid))).toBe(true);
  });
});
