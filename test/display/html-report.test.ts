import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPORT_FILE, buildHtmlReport, writeHtmlReport } from '../../src/display/html-report.js';
import { markdownToHtml } from '../../src/display/report/markdown-html.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { RunStore } from '../../src/run/run-store.js';
import { takeRunLease } from '../../src/run/run-lease.js';
import { writeSyntheticRun } from './fixtures/synthetic-run.js';

const ROOT = resolve(import.meta.dirname, '../..');
const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find(
  (c) => spawnSync(c, ['--version']).status === 0,
);
if (!chromium)
  console.warn('html-report: browser checks skipped because no chromium is installed (apt-get install chromium)');

const tmp = () => mkdtempSync(join(tmpdir(), 'html-report-'));

/** Runs headless Chromium on a file; returns the DOM after scripts ran, and the browser's stderr. */
function headless(file: string, extra: string[]): { dom: string; stderr: string } {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  const r = spawnSync(
    chromium!,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      '--enable-logging=stderr',
      '--v=0',
      ...extra,
      pathToFileURL(file).href,
    ],
    { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
  );
  // Each profile is ~1 MB of Chromium state: leaving them filled /tmp run after run.
  rmSync(profile, { recursive: true, force: true });
  return { dom: r.stdout ?? '', stderr: r.stderr ?? '' };
}

describe('HTML report', () => {
  it('is one self-contained file: no external scripts, styles, images or links', () => {
    const { store } = writeSyntheticRun(tmp());
    const html = buildHtmlReport(loadRunFolder(store.dir));
    expect(html).not.toMatch(/<(script|img|link|iframe)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).toContain('<details class="conversation"');
  });

  it('escapes agent text and cuts long tool output with a note saying where the rest is', () => {
    const { store } = writeSyntheticRun(tmp());
    const html = buildHtmlReport(loadRunFolder(store.dir));
    // repo-a's tool result starts with a script tag: it must arrive as text.
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert("x")</script>');
    expect(html).toMatch(/[\d,]+ more characters not shown \(full text in sessions\/apply\.repo-a\.jsonl\)/);
  });

  it('renders the merged plan as simple HTML, escaped', () => {
    expect(markdownToHtml('# T\n- a **b** `c<d>`\n\n```\nx <y>\n```')).toBe(
      '<h3>T</h3>\n<ul>\n<li>a <strong>b</strong> <code>c&lt;d&gt;</code></li>\n</ul>\n<pre><code>x &lt;y&gt;\n</code></pre>',
    );
  });

  it('renders nested lists nested (bullets in numbers, three levels deep)', () => {
    expect(markdownToHtml('1. plan\n   - read\n     - src/a.ts\n2. apply\n\n- a\n  - b')).toBe(
      '<ol>\n<li>plan<ul>\n<li>read<ul>\n<li>src/a.ts</li>\n</ul>\n</li>\n</ul>\n</li>\n<li>apply</li>\n</ol>\n<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>',
    );
  });

  it('keeps agent-written markdown inert: raw HTML as text, links and images as their text only', () => {
    const html = markdownToHtml(
      'see <script>alert(1)</script> [docs](https://x.example) ![pic](https://x.example/p.png) https://auto.example\n\n<img src=x onerror=alert(1)>',
    );
    expect(html).not.toMatch(/<(script|a|img)\b/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('docs pic https://auto.example');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('draws the task DAG with one node per task and an edge per need, and usage charts per task', () => {
    const { store } = writeSyntheticRun(tmp());
    const html = buildHtmlReport(loadRunFolder(store.dir));
    expect(html.match(/<g class="node [a-z]+" data-task="/g)).toHaveLength(3);
    expect(html).toContain('data-edge="plan->apply"');
    expect(html).toContain('data-edge="apply->review"');
    expect(html).toMatch(/<g class="node failed" data-task="apply"/);
    expect(html.match(/data-chart-item="apply"/g)).toHaveLength(2);
  });

  it('works for an interrupted run with no run_end and no plan', () => {
    const store = RunStore.create(tmp(), 'cut-short');
    store.append({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'r',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 't', keys: ['t'], needs: [], dynamic: false }],
    });
    store.append({ type: 'instance_start', task: 't', key: 't', attempt: 1 });
    const file = writeHtmlReport(store.dir);
    expect(file).toBe(join(store.dir, REPORT_FILE));
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('class="status interrupted"');
    expect(html).toContain('No plan.md in this run folder yet.');
  });

  it('a run still held by its coordinator (no run_end yet) reads running, not interrupted', async () => {
    const store = RunStore.create(tmp(), 'still-going');
    const taken = takeRunLease(store.dir, store.runId);
    if (!taken.ok) throw new Error(taken.message);
    try {
      store.append({
        type: 'run_start',
        recipe: 'r.yaml',
        name: 'r',
        recipeHash: 'h',
        inputs: {},
        plan: [{ task: 't', keys: ['t'], needs: [], dynamic: false }],
      });
      store.append({ type: 'instance_start', task: 't', key: 't', attempt: 1 });
      const html = readFileSync(writeHtmlReport(store.dir), 'utf8');
      expect(html).toContain('class="status running"');
      expect(html).not.toContain('class="status interrupted"');
    } finally {
      await taken.lease.release();
    }
  });

  it.skipIf(!chromium)(
    'opens in headless Chromium with no console errors and one timeline bar per attempt',
    () => {
      const { store, events } = writeSyntheticRun(tmp());
      const file = writeHtmlReport(store.dir);
      const artifacts = join(ROOT, 'test-artifacts');
      mkdirSync(artifacts, { recursive: true });
      const { dom, stderr } = headless(file, ['--dump-dom']);
      expect(dom).toMatch(/<body[^>]*data-errors="0"/);
      expect(dom).toMatch(/<body[^>]*data-rendered="1"/);
      expect(stderr).not.toMatch(/Uncaught/);
      // Attempts that started: one bar each (repo-b has two: the retried one and the one that finished).
      const starts = events
        .filter((e) => e.type === 'instance_start')
        .map((e) => e.type === 'instance_start' && `${e.key}#${e.attempt}`);
      const bars = [
        ...dom.matchAll(/<rect[^>]*class="bar outcome-([a-z]+)"[^>]*data-attempt="(\d+)" data-instance="([^"]+)"/g),
      ];
      expect(bars.map((m) => `${m[3]}#${m[2]}`).sort()).toEqual([...starts].sort());
      expect(bars.filter((m) => m[3] === 'apply.repo-b').map((m) => m[1])).toEqual(['retry', 'done']);
      expect(bars.find((m) => m[3] === 'apply.repo-c')?.[1]).toBe('failed');
      // The planner's permit wait is shaded inside its bar.
      expect(dom.match(/class="wait" data-wait="1"/g)).toHaveLength(1);

      const shot = headless(file, [`--screenshot=${join(artifacts, 'report.png')}`, '--window-size=1280,2000']);
      expect(shot.stderr).not.toMatch(/Uncaught/);
    },
    60_000,
  );

  it.skipIf(!chromium)(
    'a script error on the page is caught and counted in data-errors (the check above can fail)',
    () => {
      const { store } = writeSyntheticRun(tmp());
      const folder = loadRunFolder(store.dir);
      // Break the embedded data: the page script must report the failure, not render silently.
      const html = buildHtmlReport(folder).replace(
        /(<script type="application\/json" id="report-data">)[\s\S]*?(<\/script>)/,
        '$1{not json$2',
      );
      const file = join(store.dir, 'broken.html');
      RunStore.open(store.dir).writeFile('broken.html', html);
      const { dom } = headless(file, ['--dump-dom']);
      expect(dom).toMatch(/<body[^>]*data-errors="1"/);
      expect(dom).not.toMatch(/data-rendered="1"/);
    },
    60_000,
  );
});
