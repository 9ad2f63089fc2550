// The web page shows how work lands, live (issue 42): a real run on the scripted model, in a real
// git repository, with the merge train (`merge: apply`, whose default is `land: train`) and a task
// of best-of-N `attempts: 3`, followed by `startWebServer` and headless Chromium from Debian
// (/usr/bin/chromium) driven by playwright-core. While `six` still waits for a release file, the
// page shows `one` and `five` landed with verify passed and their commits, and the pick of `fix`
// (attempt 2, the only one whose verify passed: why, each attempt's verify, lines and cost).
// Released, `six` conflicts with `five` on the same line, is repaired on the new tip and lands;
// the page shows it landed after 1 repair. The snapshot the page is sent says the same. With
// `land_order: task`, a finished car waiting for its turn says behind which task, then lands.
// Every wait is on a page selector or run.jsonl; never on time. The two tests share one Chromium (a
// browser context each), which starts while the first run does (#43). They run one after the
// other: their runs are in this process, so side by side they only shared its one main thread
// (no faster at a load of 10-40).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { runSnapshot } from '../../src/web/run-snapshot.js';
import { startWebServer } from '../../src/web/web-server.js';
import { cleanupTempDirs, gitInit, logOf, ofType, tempProject, until } from '../orchestrator/helpers/run-fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`web view: landing browser test skipped because ${CHROMIUM} is missing (apt-get install chromium)`);

let launched: Promise<Browser> | undefined;
/** The file's one headless Chromium, started by the first test that asks. */
const theBrowser = (): Promise<Browser> => (launched ??= chromium.launch({ executablePath: CHROMIUM }));
afterAll(async () => {
  await (await launched?.catch(() => undefined))?.close();
  cleanupTempDirs();
});

const CHECK = `set -e
! grep -l '^<<<<<<<' *.txt
grep -Eq '^value=[a-z,]+$' same.txt
test "$(wc -l < same.txt)" -eq 1
echo verified
`;

/** one and five land at once; six waits for a release file, then writes the line five wrote; fix runs three attempts. */
function project(): string {
  const dir = tempProject({});
  const train = (id: string) => `  - id: ${id}
    agent: editor
    cwd: repo
    isolation: worktree
    merge: apply
    verify: "sh check.sh"
    prompt: "Task ${id}"
`;
  // The release file is written into six's own worktree, which its sandboxed bash sees (a file in
  // the project folder around the checkout was not seen from there), and removed before the edit
  // so it is no part of six's change.
  const waitThenWrite = `while [ ! -f release ]; do sleep 0.05; done; rm release; printf 'value=six\\n' > same.txt`;
  const attempt = (n: number, cmd: string) => `  - match: "^Attempt ${n}:"
    turns:
      - tools: [{ name: bash, args: { command: "${cmd}" } }]
      - text: "attempt ${n} done"
`;
  const files: Record<string, string> = {
    'recipe.yaml': `name: landing
provider: scripted
script: script.yaml
concurrency: 6
agents:
  editor: { tools: [bash] }
tasks:
${train('one')}${train('five')}${train('six')}  - id: fix
    agent: editor
    cwd: repo
    attempts: 3
    merge: apply
    verify: "grep -q good value.txt"
    prompt: "Attempt \${{ attempt }}: fix value.txt"
`,
    'script.yaml': `conversations:
  - match: "^Repair 1 of \\\\d[\\\\s\\\\S]*Task six"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'value=five,six\\\\n' > same.txt" } }]
      - text: "six repaired"
  - match: "^Task one"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'a done\\\\n' > a.txt" } }]
      - text: "one done"
  - match: "^Task five"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'value=five\\\\n' > same.txt" } }]
      - text: "five done"
  - match: "^Task six"
    turns:
      - tools: [{ name: bash, args: { command: ${JSON.stringify(waitThenWrite)} } }]
      - text: "six done"
${attempt(1, "printf 'bad one\\\\n' > value.txt")}${attempt(2, "printf 'good\\\\n' > value.txt")}${attempt(3, "printf 'bad three and more\\\\nlines\\\\n' > value.txt")}`,
    'repo/a.txt': 'a\n',
    'repo/same.txt': 'value=base\n',
    'repo/value.txt': 'value=base\n',
    'repo/check.sh': CHECK,
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  gitInit(join(dir, 'repo'));
  return dir;
}

describe.skipIf(!hasChromium)(
  'the web page shows the merge train and the attempts as they land',
  { timeout: 240_000 },
  () => {
    it('cars landed with verify and commit, the pick and why; a conflicting car repaired then landed', async () => {
      const launching = theBrowser();
      launching.catch(() => {}); // its failure is reported where it is awaited, below
      const dir = project();
      const runsDir = join(dir, 'runs');
      const runId = 'landing-web';
      const runDir = join(runsDir, runId);
      const done = runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir, runId });
      await until('the run to start', () => logOf(runDir).length > 0);
      const started = await startWebServer({
        cwd: dir,
        runsDir,
        host: '127.0.0.1',
        port: 0,
        token: 'landing-token-0123456789',
        env: {},
        log: () => {},
      });
      if (!started.ok) throw new Error(started.message);
      try {
        const page = await (await launching).newPage({ viewport: { width: 1300, height: 900 } });
        const pageErrors: string[] = [];
        page.on('pageerror', (e) => pageErrors.push(e.message));
        await page.goto(`${started.server.url}#/run/${runId}`);
        await page.waitForSelector(`main[data-run="${runId}"]`);

        // Live, while six still waits: one and five landed, verify passed on the merged tree, a commit each.
        for (const key of ['one', 'five']) {
          const car = page.locator(`[data-train="repo"] [data-train-car="${key}"][data-status="landed"]`);
          await car.waitFor({ timeout: 120_000 });
          expect(await car.locator('[data-verify]').getAttribute('data-verify')).toBe('passed');
          expect(await car.locator('[data-commit]').getAttribute('data-commit')).toMatch(/^[0-9a-f]{40}$/);
        }
        // The pick of fix: attempt 2, why, and each attempt's verify, lines and cost.
        const pick = page.locator('[data-pick="fix"][data-picked="fix.attempt-2"]');
        await pick.waitFor({ timeout: 120_000 });
        await pick.locator('[data-reason]', { hasText: 'only one of 3 attempts where its verify passed' }).waitFor();
        await pick.locator('[data-attempt="fix.attempt-2"][data-chosen="1"][data-outcome="passed"]').waitFor();
        expect(await pick.locator('[data-attempt="fix.attempt-2"] [data-lines]').getAttribute('data-lines')).toBe('2');
        for (const n of [1, 3]) {
          const row = pick.locator(`[data-attempt="fix.attempt-${n}"][data-chosen="0"][data-outcome="failed"]`);
          expect(await row.locator('[data-verify]').getAttribute('data-verify')).toBe('failed');
        }
        // The picked attempt lands through the train like any instance.
        await pick.locator('[data-pick-landed="ok"]').waitFor({ timeout: 120_000 });
        await page.locator('[data-train-car="fix.attempt-2"][data-status="landed"]').waitFor({ timeout: 120_000 });
        expect(await page.getAttribute('[data-instance="six"]', 'data-status')).toBe('running');
        expect(ofType(logOf(runDir), 'train_step').some((s) => s.key === 'six')).toBe(false);

        // Released: six conflicts with five on the same line, is repaired on the new tip and lands.
        writeFileSync(join(runDir, 'worktrees', 'six', 'release'), 'go');
        const six = page.locator('[data-train-car="six"][data-status="landed"]');
        await six.waitFor({ timeout: 120_000 }).catch((err: unknown) => {
          const trail = logOf(runDir).filter((e) => 'key' in e && String(e.key).startsWith('six'));
          throw new Error(
            `six did not land: ${JSON.stringify(trail.filter((e) => e.type !== 'agent_event')).slice(0, 6000)}`,
            { cause: err },
          );
        });
        await six.locator('text=after 1 repair').waitFor();
        expect(await six.locator('[data-verify]').getAttribute('data-verify')).toBe('passed');
        await page.locator('[data-train="repo"] .train-head', { hasText: '4 landed, 0 repairing, 0 failed' }).waitFor();
        await page.waitForSelector('main[data-run-status="succeeded"]', { timeout: 120_000 });
        // The attempts that lost are no failures: the header counts them as not picked, and each
        // attempt's row says why it did not land and where its work is.
        const counts = (await page.locator('header .counts').textContent()) ?? '';
        expect(counts).toContain('0 failed · 2 not picked');
        const lost = pick.locator('[data-attempt="fix.attempt-1"]');
        expect(await lost.locator('[data-not-landed]').getAttribute('data-not-landed')).toBe('its verify failed');
        expect(await lost.locator('[data-patch]').getAttribute('data-patch')).toBe('patches/fix.attempt-1.diff');
        // In the task graph the losing attempt reads not picked, not a red failure.
        const node = page.locator('.dag [data-instance="fix.attempt-1"]');
        expect(await node.getAttribute('data-not-picked')).toBe('1');
        expect(await node.getAttribute('class')).toContain('s-not_picked');
        expect(await node.locator('.meta').textContent()).toContain('failed, not picked');
        expect(pageErrors).toEqual([]);
      } finally {
        await started.server.close();
      }
      const r = await done;
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('succeeded');

      // The snapshot the page was sent, from the fold of the finished run.
      const snap = runSnapshot(loadRunFolder(runDir).state, runDir, undefined);
      expect(snap.trains.map((t) => [t.repo, t.counts])).toEqual([
        ['repo', { waiting: 0, landing: 0, landed: 4, repairing: 0, failed: 0 }],
      ]);
      expect(
        snap.trains[0]!.cars.map((c) => [c.key, c.status, c.repairs, c.verifyOk]).sort((a, b) =>
          String(a[0]).localeCompare(String(b[0])),
        ),
      ).toEqual([
        ['five', 'landed', 0, true],
        ['fix.attempt-2', 'landed', 0, true],
        ['one', 'landed', 0, true],
        ['six', 'landed', 1, true],
      ]);
      expect(snap.picks).toEqual([
        expect.objectContaining({
          task: 'fix',
          group: 'fix',
          rule: 'verify',
          picked: 'fix.attempt-2',
          landed: expect.objectContaining({ ok: true }),
        }),
      ]);
      expect(snap.picks[0]!.candidates.map((c) => [c.attempt, c.outcome, c.verify?.ok, c.picked])).toEqual([
        [1, 'failed', false, false],
        [2, 'passed', true, true],
        [3, 'failed', false, false],
      ]);
    });

    it('land_order: task: a finished car waiting for its turn says behind which task, then lands in its turn', async () => {
      // two finishes first and waits behind one, whose bash waits for a release file in its worktree.
      const dir = tempProject({
        'repo/base.txt': 'base\n',
        'script.yaml': `conversations:
  - match: "^Task one"
    turns:
      - tools: [{ name: bash, args: { command: "while [ ! -f release ]; do sleep 0.05; done; rm release; printf 'one\\\\n' > one.txt" } }]
      - text: "one done"
  - match: "^Task two"
    turns:
      - tools: [{ name: bash, args: { command: "printf 'two\\\\n' > two.txt" } }]
      - text: "two done"
`,
        'recipe.yaml': `name: landing-order
provider: scripted
script: script.yaml
concurrency: 2
agents:
  editor: { tools: [bash] }
defaults: { isolation: worktree, merge: apply, land_order: task, agent: editor, cwd: repo }
tasks:
  - id: one
    prompt: "Task one"
  - id: two
    prompt: "Task two"
`,
      });
      gitInit(join(dir, 'repo'));
      const runsDir = join(dir, 'runs');
      const runId = 'landing-order-web';
      const runDir = join(runsDir, runId);
      const done = runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir, runId });
      await until('the run to start', () => logOf(runDir).length > 0);
      const started = await startWebServer({
        ...{ cwd: dir, runsDir, host: '127.0.0.1', port: 0 },
        ...{ token: 'landing-token-0123456789', env: {}, log: () => {} },
      });
      if (!started.ok) throw new Error(started.message);
      try {
        const page = await (await theBrowser()).newPage({ viewport: { width: 1300, height: 900 } });
        const pageErrors: string[] = [];
        page.on('pageerror', (e) => pageErrors.push(e.message));
        await page.goto(`${started.server.url}#/run/${runId}`);
        const two = page.locator('[data-train="repo"] [data-train-car="two"][data-status="waiting"]');
        await two.waitFor({ timeout: 120_000 });
        expect(await two.locator('[data-behind]').getAttribute('data-behind')).toBe('one');
        await two.locator('text=for its turn behind one').waitFor();
        await page.locator('[data-train="repo"] .train-head', { hasText: '1 waiting for its turn' }).waitFor();

        writeFileSync(join(runDir, 'worktrees', 'one', 'release'), 'go');
        await page.locator('[data-train-car="two"][data-status="landed"]').waitFor({ timeout: 120_000 });
        await page.locator('[data-train="repo"] .train-head', { hasText: '2 landed, 0 repairing, 0 failed' }).waitFor();
        expect(pageErrors).toEqual([]);
      } finally {
        await started.server.close();
      }
      const r = await done;
      if (!r.ok) throw new Error(JSON.stringify(r));
      const landed = ofType(logOf(runDir), 'train_step').filter((s) => s.phase === 'landed');
      expect(landed.map((s) => s.key)).toEqual(['one', 'two']);
    });
  },
);
