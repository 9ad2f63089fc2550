// Takes docs/images/web-view.png, the README's picture of `orchestrate serve`: an offline run
// (the scripted provider, no API key, no network) in a temp folder, caught mid-way: a planner done,
// a fan-out of four with two finished and two at work, a review waiting at its approval gate, one
// worker's conversation open. Headless Chromium from the system (/usr/bin/chromium, or CHROMIUM=)
// driven by playwright-core, as the browser test does. Every wait is on the page or the run's log.
// Run: npx tsx scripts/web-screenshot.ts [out.png]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { startWebServer } from '../src/web/web-server.js';

const ROOT = resolve(import.meta.dirname, '..');
const OUT = resolve(process.argv[2] ?? join(ROOT, 'docs/images/web-view.png'));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TOKEN = 'screenshot-token-0123456789';

const dir = mkdtempSync(join(tmpdir(), 'web-screenshot-'));
const runs = join(dir, 'runs');
mkdirSync(runs);
const gate = (name: string) => join(dir, `release-${name}`);
// "npm test" in the picture: a script that waits for the release file the script writes.
const waitFor = (name: string) => JSON.stringify(`sh ${join(dir, 'npm-test.sh')} ${name}`);
const items = ['auth', 'billing', 'search', 'uploads'];

writeFileSync(
  join(dir, 'npm-test.sh'),
  `while [ ! -f "${dir}/release-$1" ]; do sleep 0.05; done; echo "tests pass in $1"\n`,
);
writeFileSync(
  join(dir, 'script.yaml'),
  `conversations:
  - match: "Plan"
    turns:
      - text: "Four services still call the old logger: auth, billing, search and uploads. One worker each."
${items
  .map(
    (i) => `  - match: "Migrate ${i}"
    turns:
      - { text: "Reading ${i}/src/log.ts to see how the old logger is called.", tools: [{ name: bash, args: { command: "echo \\"src/log.ts:12: log(event)\\"; echo \\"src/api.ts:40: log(error)\\"" } }] }
      - { text: "Replacing 4 calls of log() with logger.info() in ${i}, then running its tests.", tools: [{ name: bash, args: { command: ${waitFor(i)} } }] }
      - text: "Migrated ${i}: 4 calls replaced, tests pass."`,
  )
  .join('\n')}
  - match: "Review"
    turns:
      - text: "The plan looks right; waiting for a human to agree."
  - match: "Ship"
    turns:
      - text: "Shipped."
`,
);
writeFileSync(
  join(dir, 'recipe.yaml'),
  `name: logger-migration
provider: scripted
script: script.yaml
model: claude-sonnet-4-5
concurrency: 6
budget: { usd: 2 }
agents:
  worker: { system: "You migrate code.", tools: [bash] }
tasks:
  - id: plan
    agent: worker
    prompt: "Plan the logger migration"
  - id: migrate
    needs: [plan]
    for_each: ${JSON.stringify(items)}
    agent: worker
    prompt: "Migrate \${{ item }}"
  - id: review
    needs: [plan]
    agent: worker
    prompt: "Review the plan"
    approve: { prompt: "Ship the logger migration to all four services?" }
  - id: ship
    needs: [migrate, review]
    agent: worker
    prompt: "Ship it"
`,
);

if (!existsSync(CHROMIUM)) {
  console.error(`web-screenshot: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM=/path)`);
  process.exit(2);
}

const run = spawn(
  process.execPath,
  ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), join(dir, 'recipe.yaml'), '--run-dir', runs],
  { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, NO_COLOR: '1' } },
);
const started = await startWebServer({
  cwd: process.cwd(),
  runsDir: runs,
  host: '127.0.0.1',
  port: 0,
  token: TOKEN,
  env: {},
  log: console.error,
});
if (!started.ok) throw new Error(started.message);
const server = started.server;
const browser = await chromium.launch({ executablePath: CHROMIUM });
try {
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(server.url);
  await page.locator('tr[data-run] a').first().click();
  // Two of the four finish; the other two stay at work; the review waits at its gate.
  for (const i of items.slice(0, 2)) writeFileSync(gate(i), 'x');
  for (const i of items.slice(0, 2)) await page.waitForSelector(`[data-instance="migrate.${i}"][data-status="done"]`);
  for (const i of items.slice(2)) await page.waitForSelector(`[data-instance="migrate.${i}"][data-status="running"]`);
  await page.waitForSelector('[data-gate="review"][data-state="waiting"]');
  await page.locator(`[data-instance="migrate.${items[2]}"]`).click();
  await page
    .locator(`[data-conversation="migrate.${items[2]}"] .msg.assistant`, { hasText: 'then running its tests' })
    .waitFor();
  mkdirSync(join(OUT, '..'), { recursive: true });
  await page.screenshot({ path: OUT });
  console.log(`web-screenshot: wrote ${OUT}`);
} finally {
  await browser.close();
  // Let the run end: the remaining workers finish, the gate is rejected from outside (not needed further).
  for (const i of items) writeFileSync(gate(i), 'x');
  run.kill('SIGINT');
  await new Promise((r) => run.once('exit', r));
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
