// The web view's server over real HTTP on 127.0.0.1, against a run folder written through the real
// RunStore (the synthetic run of the display tests): who gets in (the token as ?token=, cookie or
// bearer; 401 otherwise; 403 for another Host or a foreign Origin), what the API answers (the runs,
// one run's snapshot from the fold, 404 outside the runs folder), the live stream (a snapshot, then
// a new one when run.jsonl grows; an instance's conversation), and actions refused with a reason.
import { request } from 'node:http';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunStore } from '../../src/run/run-store.js';
import type { RunSnapshot } from '../../src/web/run-snapshot.js';
import { startWebServer, type WebServer } from '../../src/web/web-server.js';
import { KEYS, writeSyntheticRun } from '../display/fixtures/synthetic-run.js';

const TOKEN = 'test-token-0123456789abcdef';
const RUN_ID = '20260101-120000-abcd';
let dir: string;
let server: WebServer;
let store: RunStore;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'web-server-'));
  store = writeSyntheticRun(join(dir, 'runs'), RUN_ID).store;
  const started = await startWebServer({
    cwd: process.cwd(),
    runsDir: join(dir, 'runs'),
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    env: { USER: 'ana' },
    log: () => {},
  });
  if (!started.ok) throw new Error(started.message);
  server = started.server;
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const bearer = { authorization: `Bearer ${TOKEN}` };

/** A raw request (fetch may not set Host). */
function raw(path: string, headers: Record<string, string>, method = 'GET'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads server-sent events from `path` until `until` says stop; returns them. */
async function readEvents(
  path: string,
  until: (events: { event: string; data: unknown }[]) => boolean,
  onFirst?: () => void,
  onOpen?: () => void,
): Promise<{ event: string; data: unknown }[]> {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, { headers: bearer, signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  onOpen?.();
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { event: string; data: unknown }[] = [];
  let buffer = '';
  let first = true;
  try {
    while (!until(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (name && data) {
          events.push({ event: name, data: JSON.parse(data) });
          if (first && onFirst) {
            first = false;
            onFirst();
          }
        }
        end = buffer.indexOf('\n\n');
      }
    }
  } finally {
    controller.abort();
  }
  return events;
}

describe('who gets in', () => {
  it('answers 401 without the token: page, script, Preact, API, stream and actions', async () => {
    for (const path of [
      '/',
      '/assets/app.js',
      '/assets/style.css',
      '/vendor/preact.mjs',
      '/api/runs',
      `/api/runs/${RUN_ID}`,
      `/api/runs/${RUN_ID}/stream`,
    ]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(401);
      expect(((await res.json()) as { message: string }).message).toMatch(/open the URL `orchestrate serve` printed/);
    }
    expect((await fetch(`${base}/api/runs/${RUN_ID}/cancel`, { method: 'POST', body: '{}' })).status).toBe(401);
    // A wrong token of the right length, and the right one in a query of a POST, do not open it either.
    expect((await fetch(`${base}/?token=${'x'.repeat(TOKEN.length)}`)).status).toBe(401);
    expect(
      (await fetch(`${base}/api/runs`, { headers: { authorization: `Bearer ${'x'.repeat(TOKEN.length)}` } })).status,
    ).toBe(401);
    expect(
      (await fetch(`${base}/api/runs/${RUN_ID}/cancel?token=${TOKEN}`, { method: 'POST', body: '{}' })).status,
    ).toBe(401);
  });

  it('the URL with ?token= opens the page and sets a private cookie that opens the rest', async () => {
    const res = await fetch(`${base}/?token=${TOKEN}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/<script type="module" src="\/assets\/app.js">/);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(new RegExp(`^orchestrate_web_${server.port}=${TOKEN}; HttpOnly; SameSite=Strict; Path=/$`));
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const pair = cookie.split(';')[0]!;
    const script = await fetch(`${base}/assets/app.js`, { headers: { cookie: pair } });
    expect(script.status).toBe(200);
    expect(await script.text()).toMatch(/from 'preact'/);
    const preact = await fetch(`${base}/vendor/preact.mjs`, { headers: { cookie: pair } });
    expect(preact.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await preact.text()).toMatch(/export\s*\{/);
    // The cookie of another server's port is not this one's.
    expect((await fetch(`${base}/api/runs`, { headers: { cookie: `orchestrate_web_1=${TOKEN}` } })).status).toBe(401);
  });

  it('a cookie with a malformed %-escape is no token: 401 with how to get in, not an internal error', async () => {
    const res = await fetch(`${base}/api/runs`, { headers: { cookie: `orchestrate_web_${server.port}=%E0` } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toMatch(/open the URL `orchestrate serve` printed/);
    // Beside a bearer token that is right, it is ignored.
    expect(
      (await fetch(`${base}/api/runs`, { headers: { ...bearer, cookie: `orchestrate_web_${server.port}=%E0` } }))
        .status,
    ).toBe(200);
  });

  it('answers 403 to another Host (DNS rebinding) and to an action from a foreign Origin', async () => {
    expect(await raw('/', { ...bearer, host: `evil.example:${server.port}` })).toBe(403);
    expect(await raw('/', { ...bearer, host: `localhost:${server.port}` })).toBe(200);
    const foreign = await fetch(`${base}/api/runs/${RUN_ID}/cancel`, {
      method: 'POST',
      headers: { ...bearer, origin: 'http://evil.example' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
  });
});

describe('what the API answers', () => {
  it('lists the runs of the folder and folds one run into its snapshot', async () => {
    const list = (await (await fetch(`${base}/api/runs`, { headers: bearer })).json()) as { runs: { runId: string }[] };
    expect(list.runs.map((r) => r.runId)).toEqual([RUN_ID]);
    const snap = (await (await fetch(`${base}/api/runs/${RUN_ID}`, { headers: bearer })).json()) as RunSnapshot;
    expect(snap.runId).toBe(RUN_ID);
    const status = Object.fromEntries(snap.instances.map((i) => [i.key, i.status]));
    expect(status).toMatchObject({
      [KEYS.plan]: 'done',
      [KEYS.a]: 'done',
      [KEYS.c]: 'failed',
      [KEYS.review]: 'skipped',
    });
    expect(snap.tasks.find((t) => t.id === 'review')?.level).toBeGreaterThan(
      snap.tasks.find((t) => t.id === 'plan')!.level,
    );
    expect(snap.readOnly).toMatch(/the run has ended/);
  });

  it('finds no run outside the runs folder, and no unknown one', async () => {
    for (const id of ['..', '%2e%2e', 'nope', '.hidden', '%E0', `${RUN_ID}%`])
      expect((await fetch(`${base}/api/runs/${id}`, { headers: bearer })).status, id).toBe(404);
    // A malformed %-escape is a run that is not there, said as such (it was a 500, "internal error").
    expect(await (await fetch(`${base}/api/runs/%E0/stream`, { headers: bearer })).json()).toMatchObject({
      code: 'no_such_run',
    });
  });

  it('a run folder whose log holds no run_start is no run: 404 saying so, not an empty run "running"', async () => {
    const bad = join(dir, 'runs', '20260101-000000-torn');
    mkdirSync(bad);
    writeFileSync(join(bad, 'run.jsonl'), 'not a run event{\n');
    try {
      const res = await fetch(`${base}/api/runs/20260101-000000-torn`, { headers: bearer });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({
        code: 'no_run_record',
        message: expect.stringMatching(/run\.jsonl holds no run_start record: there is no run to show/),
      });
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('refuses bad action bodies with what is wrong, and actions on a run nobody holds with why', async () => {
    const post = (verb: string, body: string) =>
      fetch(`${base}/api/runs/${RUN_ID}/${verb}`, { method: 'POST', headers: bearer, body });
    const bad = await post('steer', JSON.stringify({ instance: KEYS.a }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^steer: text: /);
    expect((await post('approve', 'not json')).status).toBe(400);
    expect((await post('approve', JSON.stringify({ task: 'apply', extra: 1 }))).status).toBe(400);
    const ended = await post('cancel', JSON.stringify({ instance: KEYS.a }));
    expect(ended.status).toBe(409);
    expect(await ended.json()).toMatchObject({
      ok: false,
      code: 'not_live',
      message: expect.stringMatching(/is not running/),
    });
    expect((await post('explode', '{}')).status).toBe(405);
  });
});

describe('the live stream', () => {
  it('draws nothing for a log without its run_start yet, then the run once it is written', async () => {
    const early = join(dir, 'runs', '20260101-000000-early');
    mkdirSync(early);
    writeFileSync(join(early, 'run.jsonl'), '');
    try {
      const events = await readEvents(
        '/api/runs/20260101-000000-early/stream',
        (list) => list.some((e) => e.event === 'run'),
        undefined,
        () => appendFileSync(join(early, 'run.jsonl'), readFileSync(join(store.dir, 'run.jsonl'))),
      );
      // It sent an empty run ("running", no name, no tasks) first.
      expect(events.find((e) => e.event === 'run')?.data).toMatchObject({ runId: RUN_ID, name: 'rename-logger' });
    } finally {
      rmSync(early, { recursive: true, force: true });
    }
  });

  it('sends the snapshot, then a new one when run.jsonl grows', async () => {
    let before = 0;
    const events = await readEvents(
      `/api/runs/${RUN_ID}/stream`,
      (list) => list.filter((e) => e.event === 'run').length >= 2,
      () => {
        store.append({
          type: 'control',
          action: 'steer',
          instance: KEYS.a,
          by: 'test',
          text: 'hello',
          ok: false,
          message: 'ended',
        });
      },
    );
    const runs = events.filter((e) => e.event === 'run').map((e) => e.data as RunSnapshot);
    before = runs[0]!.eventCount;
    expect(runs[1]!.eventCount).toBe(before + 1);
    expect(runs[1]!.controls.at(-1)).toMatchObject({ action: 'steer', instance: KEYS.a, text: 'hello', ok: false });
  });

  it("sends the open instance's conversation, tool calls and results cut like the terminal's", async () => {
    const events = await readEvents(`/api/runs/${RUN_ID}/stream?instance=${KEYS.a}`, (list) =>
      list.some((e) => e.event === 'conversation'),
    );
    const conv = events.find((e) => e.event === 'conversation')!.data as {
      instance: string;
      items: { kind: string; text?: string; toolCalls?: unknown[] }[];
    };
    expect(conv.instance).toBe(KEYS.a);
    expect(conv.items.some((i) => i.kind === 'assistant' && i.text === 'Renamed 4 calls in repo-a.')).toBe(true);
    expect(conv.items.some((i) => i.kind === 'toolResult')).toBe(true);
  });
});
