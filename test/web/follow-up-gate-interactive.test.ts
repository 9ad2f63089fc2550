// The web page of a campaign run whose follow-up round waits at its gate (publish.follow_up.approve),
// in headless Chromium (playwright-core) against the real web server: the changeset's row says the
// round waits, with the command that answers it and its timeout; the Gates section lists the round
// with Approve / Reject; Approve writes approval_given (gate follow_up, via web) into the run's log
// and the gate turns approved. Every wait is on a page selector. Runs one file at a time (its name
// matches vitest.config's *interactive* pattern): a browser.
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { readRunLog } from '../../src/run/run-store.js';
import { startWebServer } from '../../src/web/web-server.js';
import { KEYS, writeSyntheticRun } from '../display/fixtures/synthetic-run.js';
import { publishedChangeset, writeCampaignChangesets } from '../helpers/campaign.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`web view: follow-up gate test skipped because ${CHROMIUM} is missing (apt-get install chromium)`);

const RUN_ID = '20260101-120000-abcd';
const dirs: string[] = [];
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!hasChromium)('web view: a follow-up round waiting for approval', () => {
  it('shows it on the changeset and in Gates; Approve answers it through the log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-follow-up-gate-'));
    dirs.push(dir);
    const { store } = writeSyntheticRun(join(dir, 'runs'), RUN_ID);
    const T0 = Date.UTC(2026, 0, 1, 13, 0, 0);
    writeCampaignChangesets(store.dir, T0, [
      { ...publishedChangeset('repo-a', { doneTs: T0 }), task: 'apply', instance: KEYS.a },
    ]);
    // A round of apply.repo-a that made its change and waits at its gate (as publish --follow-up --apply leaves it).
    const ref = { v: 1, runId: RUN_ID, task: 'apply', key: KEYS.a, parent: 'apply', attempt: 9, round: 1 };
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
    const deadline = T0 + 8 * 3_600_000;
    const log = [
      {
        ...ref,
        ts: T0,
        type: 'instance_followup_start',
        reason: 'ci_failed',
        evidence: 'ci:abc',
        fromCommit: 'abc',
        sessionFile: 's',
      },
      {
        ...ref,
        ts: T0 + 1,
        type: 'instance_followup_end',
        evidence: 'ci:abc',
        ok: true,
        patchFile: 'p.diff',
        usage,
        durationMs: 1,
      },
      {
        v: 1,
        runId: RUN_ID,
        ts: T0 + 2,
        type: 'approval_requested',
        gate: 'follow_up',
        task: 'apply',
        key: KEYS.a,
        round: 1,
        prompt: 'Push the fix?',
        deadline,
        onTimeout: 'reject',
      },
    ];
    appendFileSync(join(store.dir, 'run.jsonl'), log.map((e) => `${JSON.stringify(e)}\n`).join(''));

    const started = await startWebServer({
      cwd: process.cwd(),
      runsDir: join(dir, 'runs'),
      host: '127.0.0.1',
      port: 0,
      token: 'follow-up-token-0123456789',
      env: {},
      log: () => {},
    });
    if (!started.ok) throw new Error(started.message);
    try {
      browser ??= await chromium.launch({ executablePath: CHROMIUM });
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(started.server.url);
      await page.locator('tr[data-run] a').first().click();
      const cell = page.locator('[data-changeset="change.repo-a"] [data-follow-up-waiting="1"]');
      await cell.waitFor();
      expect(await cell.textContent()).toContain(
        `round 1 waiting for approval: orchestrate approve ${RUN_ID} --follow-up --task apply --instance ${KEYS.a}`,
      );
      const gate = page.locator(`[data-gate="follow_up:${KEYS.a}:1"]`);
      await page.waitForSelector(`[data-gate="follow_up:${KEYS.a}:1"][data-state="waiting"]`);
      expect(await gate.textContent()).toContain(`${KEYS.a} follow-up round 1`);
      await gate.locator('[data-action="approve"]').click();
      await page.waitForSelector(`[data-gate="follow_up:${KEYS.a}:1"][data-state="approved"]`);
      await page.locator('[data-changeset="change.repo-a"] [data-follow-up-waiting]').waitFor({ state: 'detached' });
      const given = readRunLog(join(store.dir, 'run.jsonl')).events.filter((e) => e.type === 'approval_given');
      expect(given).toMatchObject([
        { gate: 'follow_up', task: 'apply', key: KEYS.a, round: 1, decision: 'approved', via: 'web' },
      ]);
      expect(pageErrors).toEqual([]);
    } finally {
      await started.server.close();
    }
  });
});
