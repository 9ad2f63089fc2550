// The web view in a real browser (issue 42, Done-when): `orchestrate serve` and a live 6-agent run
// as two real CLI processes, headless Chromium from Debian (/usr/bin/chromium) driven by
// playwright-core. The page lists the run; its five workers show as running and their text comes
// in while they wait (each blocks in a bash call until the test writes a release file); released,
// they turn done, the sixth waits at its approval gate, the page approves it, and the run
// succeeds. Without the token the page, its scripts and its API answer 401. Every wait is on a
// page selector, a process's output or run.jsonl; never on time. Runs one file at a time (its
// name matches vitest.config's *interactive* pattern): two CLI processes and a browser. Its two
// tests run at the same time in one Chromium (#43), each in a browser context of its own (no
// shared cookies): the finished campaign's page is drawn while the live run's agents write. A
// third answers two gates of a run nobody holds, each with its own note; a fourth opens a link
// to a run that is not there.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { runFolderName } from '../helpers/run-folder.js';
import { KEYS, writeSyntheticRun } from '../display/fixtures/synthetic-run.js';
import { RunStore } from '../../src/run/run-store.js';
import { startWebServer } from '../../src/web/web-server.js';
import { writeCampaign } from './fixtures/campaign.js';
import { exited, spawnCli } from '../reliability/helpers/reliability-fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`web view: browser test skipped because ${CHROMIUM} is missing (apt-get install chromium)`);

const ITEMS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
const dirs: string[] = [];
const children: ChildProcess[] = [];
let launched: Promise<Browser> | undefined;
/** The file's one headless Chromium, started by the first test that asks. */
const theBrowser = (): Promise<Browser> => (launched ??= chromium.launch({ executablePath: CHROMIUM }));
afterAll(async () => {
  await (await launched?.catch(() => undefined))?.close();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * alpha's second reply: 200 words streamed 24 characters every 80 ms (about 4 s of writing). The
 * page peeks the open conversation every 200 ms, and its first partial showed 0.6 s after the go
 * at a load of 30; the rest of the reply is on the test's path (the gate waits for alpha), so it
 * is not longer than the check needs (#43: it was 8 s).
 */
const SLOW_REPLY = Array.from({ length: 200 }, (_, i) => `w${String(i).padStart(4, '0')}`).join(' ');

/**
 * Five workers that write, then wait in bash for `release` (alpha first waits for `go`, then
 * writes a long reply slowly); a gated sixth that needs them all.
 */
function writeProject(dir: string, release: string, go: string): string {
  const wait = `while [ ! -f '${release}' ]; do sleep 0.05; done; echo released`;
  const waitGo = `while [ ! -f '${go}' ]; do sleep 0.05; done; echo go`;
  writeFileSync(
    join(dir, 'script.yaml'),
    `conversations:
  - match: "Handle alpha"
    turns:
      - { text: "started alpha, waiting for the go", tools: [{ name: bash, args: { command: ${JSON.stringify(waitGo)} } }] }
      - stream_delay_ms: 80
        text: ${JSON.stringify(SLOW_REPLY)}
        tools: [{ name: bash, args: { command: ${JSON.stringify(wait)} } }]
      - text: "done alpha"
  - match: "Handle (\\\\S+)"
    turns:
      - { text: "started {{match.1}}, waiting for the release", tools: [{ name: bash, args: { command: ${JSON.stringify(wait)} } }] }
      - text: "done {{match.1}}"
  - match: "Ship"
    turns:
      - text: "shipped everything"
`,
  );
  writeFileSync(
    join(dir, 'recipe.yaml'),
    `name: web-live
provider: scripted
script: script.yaml
model: claude-haiku-4-5
concurrency: 6
agents:
  worker: { system: "You work.", tools: [bash] }
tasks:
  - id: work
    for_each: ${JSON.stringify(ITEMS)}
    agent: worker
    prompt: "Handle \${{ item }}"
  - id: ship
    needs: [work]
    agent: worker
    prompt: "Ship it"
    approve: { prompt: "Ship the five?" }
`,
  );
  return join(dir, 'recipe.yaml');
}

/** Resolves with the first line `child` prints on stdout. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`orchestrate serve exited ${code} before printing its URL: ${err}`)));
  });
}

describe.skipIf(!hasChromium)('orchestrate serve in headless Chromium', { timeout: 240_000, concurrent: true }, () => {
  it('follows a live 6-agent run, approves its gate from the page, and the run succeeds; 401 without the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-view-'));
    dirs.push(dir);
    const release = join(dir, 'release');
    const go = join(dir, 'go');
    const recipe = writeProject(dir, release, go);
    const runs = join(dir, 'runs');
    mkdirSync(runs);
    const env = { ORCHESTRATE_HOME: join(dir, 'home'), NO_COLOR: '1' };

    const serve = spawnCli(['serve', runs], env);
    children.push(serve);
    // The run and the browser start while serve does (three starts in the time of one): the page
    // opens once all three are up, and its waits are on what it shows.
    const run = spawnCli([recipe, '--run-dir', runs], env);
    children.push(run);
    const runDone = exited(run);
    const launching = theBrowser();
    launching.catch(() => {}); // its failure is reported where it is awaited, below
    const url = await firstLine(serve);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{40,}$/);
    const base = new URL(url).origin;
    // The token is the one kept, private, in the orchestrate home.
    expect(readFileSync(join(dir, 'home', 'web-token'), 'utf8').trim()).toBe(new URL(url).searchParams.get('token'));

    const browser = await launching;
    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(url);
    // The token leaves the address bar (the server keeps it as a cookie for the page's own requests).
    await page.waitForSelector('body[data-ready="1"]');
    expect(page.url()).toBe(`${base}/`);

    await page.locator('tr[data-run] a').first().click();
    // Five workers at work, live.
    for (const item of ITEMS)
      await page.waitForSelector(`[data-instance="work.${item}"][data-status="running"]`, { timeout: 120_000 });
    await page.waitForSelector('[data-instance="ship"]');

    // Open alpha, then let it write: the reply shows as it is being written (peeked), before it ends.
    await page.locator('[data-instance="work.alpha"]').click();
    await page
      .locator('[data-conversation="work.alpha"] .msg.assistant', { hasText: 'started alpha, waiting for the go' })
      .waitFor({ timeout: 120_000 });
    writeFileSync(go, 'go');
    // Read in the page in one step (the element goes once the reply is in the session file).
    const shown = await page.waitForFunction(
      (selector) => {
        // Runs in the page (the test's tsconfig has no DOM types).
        const doc = (
          globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }
        ).document;
        const text = doc.querySelector(selector)?.textContent ?? '';
        return text.startsWith('w0000 w0001') ? text : false;
      },
      '[data-conversation="work.alpha"] [data-writing] pre',
      { timeout: 60_000 },
    );
    const partial = String(await shown.jsonValue());
    expect(SLOW_REPLY.startsWith(partial) && partial.length < SLOW_REPLY.length).toBe(true);

    // Open another: its text comes in while it still runs (it waits for the release).
    await page.locator('[data-instance="work.beta"]').click();
    await page
      .locator('[data-conversation="work.beta"] .msg.assistant', { hasText: 'started beta, waiting for the release' })
      .waitFor({ timeout: 120_000 });
    await page.locator('[data-conversation="work.beta"] .call', { hasText: 'bash' }).waitFor();
    expect(await page.getAttribute('[data-instance="work.beta"]', 'data-status')).toBe('running');
    expect(existsSync(release)).toBe(false);

    // Steer it from the page: the coordinator takes the message (a control event names the web).
    await page.locator('[data-conversation="work.beta"] input[name="steer"]').fill('mind the tests');
    await page.locator('[data-conversation="work.beta"] button[data-action="steer"]').click();
    await page
      .locator('[data-action-status]', { hasText: /^steer work\.beta: (?!failed)/ })
      .waitFor({ timeout: 60_000 });

    // Released: the workers finish, the sixth waits at its gate.
    writeFileSync(release, 'go');
    for (const item of ITEMS)
      await page.waitForSelector(`[data-instance="work.${item}"][data-status="done"]`, { timeout: 120_000 });
    await page
      .locator('[data-conversation="work.beta"] .msg.assistant', { hasText: 'done beta' })
      .waitFor({ timeout: 120_000 });
    const gate = page.locator('[data-gate="ship"][data-state="waiting"]');
    await gate.waitFor({ timeout: 120_000 });
    await gate.locator('text=Ship the five?').waitFor();
    await page.waitForSelector('[data-instance="ship"][data-status="waiting"]');

    // Approve from the page: the run goes on to success.
    await gate.locator('input').fill('looks good');
    await gate.locator('button[data-action="approve"]').click();
    await page.locator('[data-action-status]', { hasText: /approve ship: .*approved/ }).waitFor({ timeout: 60_000 });
    await page.waitForSelector('main[data-run-status="succeeded"]', { timeout: 120_000 });
    await page.waitForSelector('[data-instance="ship"][data-status="done"]');
    await page.waitForSelector('[data-gate="ship"][data-state="approved"]');

    const ended = await runDone;
    expect(ended.code, ended.stderr).toBe(0);
    const runDir = join(runs, runFolderName(runs)!);
    const given = readFileSync(join(runDir, 'run.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"approval_given"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(given).toEqual([
      expect.objectContaining({ key: 'ship', decision: 'approved', via: 'web', note: 'looks good' }),
    ]);
    expect(String(given[0]!.by)).toMatch(/^web \(pid \d+/);
    const steered = readFileSync(join(runDir, 'run.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"control"') && l.includes('"steer"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(steered).toEqual([expect.objectContaining({ instance: 'work.beta', text: 'mind the tests', ok: true })]);
    expect(pageErrors).toEqual([]);

    // Without the token: the page, its script, the API, the live feed and the actions answer 401.
    const runId = runFolderName(runs)!;
    for (const path of ['/', '/assets/app.js', '/vendor/preact.mjs', '/api/runs', `/api/runs/${runId}/stream`])
      expect((await fetch(`${base}${path}`)).status, path).toBe(401);
    const post = await fetch(`${base}/api/runs/${runId}/cancel`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(401);
    expect((await fetch(`${base}/api/runs`, { headers: { authorization: 'Bearer not-the-token' } })).status).toBe(401);
    // A browser without the cookie, at the page's address without ?token=.
    const stranger = await browser.newContext();
    const response = await (await stranger.newPage()).goto(`${base}/`);
    expect(response?.status()).toBe(401);
    await stranger.close();

    serve.kill('SIGTERM');
    const stopped = await exited(serve);
    expect(stopped.code).toBe(0);
  });

  it("draws a finished campaign run: each instance's status, a failure's error, the changesets and the burndown", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-view-campaign-'));
    dirs.push(dir);
    const { store } = writeSyntheticRun(join(dir, 'runs'));
    writeCampaign(store.dir);
    const started = await startWebServer({
      cwd: process.cwd(),
      runsDir: join(dir, 'runs'),
      host: '127.0.0.1',
      port: 0,
      token: 'campaign-token-0123456789',
      env: {},
      log: () => {},
    });
    if (!started.ok) throw new Error(started.message);
    try {
      const page = await (await theBrowser()).newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(started.server.url);
      await page.locator('tr[data-run] a').first().click();
      await page.waitForSelector(`[data-instance="${KEYS.a}"][data-status="done"]`);
      await page.locator(`[data-instance="${KEYS.c}"][data-status="failed"] .error`).waitFor();
      await page.waitForSelector(`[data-instance="${KEYS.review}"][data-status="skipped"]`);
      await page.waitForSelector('[data-read-only]');
      // The run started on 2026-01-01, not today: its start says the day, not only the time of day.
      expect(await page.locator('header .muted').first().textContent()).toMatch(/ · started [^·]*2026/);
      expect(await page.locator('[data-changeset]').count()).toBe(2);
      await page.locator('[data-changeset="change.repo-a"] [data-status="merged"]').waitFor();
      await page.locator('section.changesets', { hasText: 'burndown: 1/2 merged' }).waitFor();
      expect(await page.getAttribute('svg[data-burndown]', 'data-burndown')).toBe('2');
      // A retried instance's attempts, in its conversation's header.
      await page.locator(`[data-instance="${KEYS.b}"]`).click();
      await page
        .locator(`[data-conversation="${KEYS.b}"] [data-attempts="2"]`, { hasText: '#1 retry (overloaded)' })
        .waitFor();
      // No action buttons on a run that ended.
      expect(await page.locator('[data-action="cancel-run"]').count()).toBe(0);
      expect(pageErrors).toEqual([]);
    } finally {
      await started.server.close();
    }
  });
  it("a gate's note goes with that gate's answer only: the other gates' notes stay empty, and it is cleared once sent", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-view-gates-'));
    dirs.push(dir);
    // Two instances at their gates in a run nobody holds: the page's answers are written offline.
    const store = RunStore.create(join(dir, 'runs'), '20260101-120000-gate');
    store.append({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'gates',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 'ship', keys: ['ship.a', 'ship.b'], needs: [], dynamic: false }],
    });
    for (const key of ['ship.a', 'ship.b'])
      store.append({ type: 'approval_requested', task: 'ship', key, prompt: `Ship ${key}?`, onTimeout: 'reject' });
    const started = await startWebServer({
      cwd: process.cwd(),
      runsDir: join(dir, 'runs'),
      host: '127.0.0.1',
      port: 0,
      token: 'gates-token-0123456789',
      env: { USER: 'ana' },
      log: () => {},
    });
    if (!started.ok) throw new Error(started.message);
    const answers = () =>
      readFileSync(join(store.dir, 'run.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; key?: string; note?: string })
        .filter((e) => e.type === 'approval_given');
    const context = await (await theBrowser()).newContext();
    try {
      const page = await context.newPage();
      await page.goto(started.server.url);
      await page.locator('tr[data-run] a').first().click();
      const a = page.locator('[data-gate="ship.a"]');
      const b = page.locator('[data-gate="ship.b"]');
      await a.locator('input').fill('only for a');
      // One note was shared by every gate: typed for a, it showed (and would be sent) with b too.
      expect(await b.locator('input').inputValue()).toBe('');
      await a.locator('[data-action="approve"]').click();
      await page.locator('[data-gate="ship.a"][data-state="approved"]').waitFor();
      expect(await b.locator('input').inputValue()).toBe('');
      await b.locator('[data-action="reject"]').click();
      await page.locator('[data-gate="ship.b"][data-state="rejected"]').waitFor();
      expect(answers().map((e) => [e.key, e.note])).toEqual([
        ['ship.a', 'only for a'],
        ['ship.b', undefined],
      ]);
    } finally {
      await context.close();
      await started.server.close();
    }
  });
  it('a link to a run that is not there says so, instead of "connecting…" for ever', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-view-missing-'));
    dirs.push(dir);
    writeSyntheticRun(join(dir, 'runs'));
    const started = await startWebServer({
      cwd: process.cwd(),
      runsDir: join(dir, 'runs'),
      host: '127.0.0.1',
      port: 0,
      token: 'missing-token-0123456789',
      env: {},
      log: () => {},
    });
    if (!started.ok) throw new Error(started.message);
    const context = await (await theBrowser()).newContext();
    try {
      const page = await context.newPage();
      await page.goto(started.server.url);
      await page.locator('tr[data-run]').first().waitFor();
      // A bookmarked run that was deleted, or a mistyped id: its stream is a 404 the browser does not retry.
      await page.goto(`${new URL(started.server.url).origin}/#/run/20990101-000000-gone`);
      const failure = page.locator('[data-failure]');
      await failure.waitFor();
      expect(await failure.textContent()).toBe(`no run 20990101-000000-gone in ${join(dir, 'runs')}`);
      expect(await page.locator('text=connecting…').count()).toBe(0);
    } finally {
      await context.close();
      await started.server.close();
    }
  });
});
