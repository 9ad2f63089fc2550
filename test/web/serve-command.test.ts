// `orchestrate serve` as a user runs it (a real CLI process): the URL with the token printed once on
// stdout and nowhere else, a clean stop on SIGTERM; mistakes (a folder that is not there, a bad
// port, a port in use, a token too short) are one clear line and exit 2, never a stack trace.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exited, spawnCli } from '../reliability/helpers/reliability-fixtures.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function project(): { dir: string; runs: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'serve-cli-'));
  dirs.push(dir);
  const runs = join(dir, 'runs');
  mkdirSync(runs);
  return { dir, runs, env: { ORCHESTRATE_HOME: join(dir, 'home'), NO_COLOR: '1' } };
}

const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

describe('orchestrate serve (real CLI)', { timeout: 60_000 }, () => {
  it('prints the URL with the token once on stdout, answers on it, and stops cleanly on SIGTERM', async () => {
    const p = project();
    const child = spawnCli(['serve', p.runs], p.env);
    const done = exited(child);
    const url = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
    });
    const token = new URL(url).searchParams.get('token')!;
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(new URL(url).origin)).status).toBe(401);
    child.kill('SIGTERM');
    const ended = await done;
    expect(ended.code).toBe(0);
    expect(ended.stdout).toBe(`${url}\n`);
    expect(ended.stderr).toMatch(/the web view of .*runs; open this URL, it carries the token/);
    expect(ended.stderr).not.toContain(token);
  });

  it('a runs folder that is not there: exit 2 naming it', async () => {
    const p = project();
    const r = await exited(spawnCli(['serve', join(p.dir, 'nope')], p.env));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/orchestrate serve: no folder .*nope\n {2}hint: give the folder holding run records/);
    noStack(r.stderr);
  });

  it("one run's folder instead of a folder of runs: exit 2 naming the folder to give", async () => {
    const p = project();
    const one = join(p.runs, '20260101-120000-abcd');
    mkdirSync(one);
    writeFileSync(join(one, 'run.jsonl'), '');
    const r = await exited(spawnCli(['serve', one], p.env));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `orchestrate serve: ${one} is the folder of one run, not a folder of runs\n  hint: orchestrate serve ${p.runs}\n`,
    );
  });

  it('a bad port, a port in use and a token too short: exit 2 with the fix', async () => {
    const p = project();
    const bad = await exited(spawnCli(['serve', p.runs, '--port', '70000'], p.env));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--port must be a port number from 0 to 65535 \(got 70000\)/);

    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      const inUse = await exited(spawnCli(['serve', p.runs, '--port', String(port)], p.env));
      expect(inUse.code).toBe(2);
      expect(inUse.stderr).toMatch(new RegExp(`port ${port} on 127.0.0.1 is in use: choose another with --port PORT`));
      noStack(inUse.stderr);
    } finally {
      taken.close();
    }

    const short = await exited(spawnCli(['serve', p.runs], { ...p.env, ORCHESTRATE_WEB_TOKEN: 'short' }));
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/ORCHESTRATE_WEB_TOKEN must be at least 16 printable characters/);
    noStack(short.stderr);
  });
});
