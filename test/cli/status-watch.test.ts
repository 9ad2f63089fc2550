// `orchestrate status <run> --watch` against the strict fake GitHub API (the real Octokit client
// on the wire): the first look prints the table; when the fake merges a pull request between two
// looks the watch prints that change and the burndown counts it; it ends by itself (exit 0) once
// every pull request is merged, saying so; SIGTERM stops it with exit 0; the token is in no output.
// Every wait is on output, never on time: the interval is short and the test reacts to what it reads.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { type Changeset, readObservations } from '../../src/run/changesets.js';
import { type FakeGitHub, fakeGitHub } from '../publish/fake-forges.js';
import { publishedChangeset, writeCampaignChangesets } from '../helpers/campaign.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TOKEN = 'ghp_statusWatchToken0123456789abcdef';
const KEYS = ['repo-a', 'repo-b'];

/** A published changeset whose pull request #1 lives on the fake (only what `status` reads is real). */
function changeset(repo: string, baseUrl: string): Changeset {
  return publishedChangeset(repo, {
    baseUrl,
    draft: false,
    diffstat: { files: 1, insertions: 1, deletions: 1 },
    doneTs: 0,
    pr: { number: 1, url: `https://github.example/acme/${repo}/pull/1` },
  });
}

/** Output of an in-process CLI run, and waits that resolve when it shows something. */
function watched() {
  let text = '';
  const waiters: { test: (s: string) => boolean; resolve: () => void }[] = [];
  const write = (s: string) => {
    text += s;
    for (const w of waiters.splice(0))
      if (w.test(text)) w.resolve();
      else waiters.push(w);
  };
  const until = (test: (s: string) => boolean) =>
    new Promise<void>((resolve) => (test(text) ? resolve() : waiters.push({ test, resolve })));
  return { write, until, text: () => text };
}

describe('orchestrate status --watch', () => {
  let gh: FakeGitHub;
  let dir: string;
  let runDir: string;
  const env = () => ({ PATH: process.env.PATH, GITHUB_TOKEN: TOKEN });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-status-watch-'));
    runDir = join(dir, 'run');
    // The fake's repositories need no bare git repository here: nothing is pushed.
    gh = await fakeGitHub(TOKEN, Object.fromEntries(KEYS.map((r) => [`acme/${r}`, join(dir, 'none.git')])));
    for (const repo of KEYS)
      gh.pulls.push({
        number: 1,
        repo: `acme/${repo}`,
        head: `campaign/${repo}`,
        base: 'main',
        title: `Change ${repo}`,
        body: '',
        draft: false,
        state: 'open',
        merged: false,
        labels: [],
        reviewers: [],
        headSha: 'a'.repeat(40),
      });
    mkdirSync(runDir);
    writeFileSync(join(runDir, 'run.jsonl'), '');
    writeCampaignChangesets(
      runDir,
      0,
      KEYS.map((r) => changeset(r, gh.url)),
    );
  });
  afterAll(async () => {
    await gh?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('SIGTERM stops a watch between looks with exit 0', async () => {
    const out = watched();
    let stderr = '';
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'status', runDir, '--watch', '--interval', '0.2'], {
      cwd: ROOT,
      env: { ...env(), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (b: Buffer) => out.write(b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await out.until((s) => s.includes('burndown: 0/2 merged'));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('status --watch stopped');
    expect(out.text()).toContain('change.repo-a  open');
    expect(out.text() + stderr).not.toContain(TOKEN);
  });

  it('prints a pull request merged between looks, counts it in the burndown, and ends when all are merged', async () => {
    const out = watched();
    let stderr = '';
    const done = main(['status', runDir, '--watch', '--interval', '0.2'], {
      stdout: out.write,
      stderr: (s) => (stderr += s),
      cwd: dir,
      env: env(),
      isTTY: false,
    });
    await out.until((s) => s.includes('burndown: 0/2 merged'));
    gh.merge('acme/repo-a', 1);
    await out.until((s) => /change\.repo-a: open -> merged/.test(s));
    // Not a TTY: only the change is printed, then the burndown that counts it.
    await out.until((s) => /\d\d:\d\d:\d\d burndown: 1\/2 merged \[#{10}\.{10}\]/.test(s));
    expect(out.text()).not.toMatch(/change\.repo-b: /);
    gh.merge('acme/repo-b', 1);
    expect(await done).toBe(0);
    expect(out.text()).toMatch(/change\.repo-b: open -> merged/);
    expect(out.text()).toContain('burndown: 2/2 merged');
    expect(out.text()).toContain('All 2 pull requests are merged or closed: the watch ends.');
    // 3 GETs per pull request per look, 5 looks a second: the watch says it is past GitHub's hourly allowance.
    expect(stderr).toBe(
      'orchestrate: at this interval the watch makes about 108000 GitHub requests an hour (a token has 5000); past the limit each look waits as GitHub asks. A longer --interval spares it.\n',
    );
    // Each look was recorded: the burndown of report.html and the run view reads them.
    const merged = readObservations(runDir).filter((o) => o.state === 'merged');
    expect(new Set(merged.map((o) => o.key))).toEqual(new Set(['change.repo-a', 'change.repo-b']));

    // On a terminal the table is redrawn in place with the burndown over time; all merged: one frame, then the end.
    const tty = watched();
    const code = await main(['status', runDir, '--watch', '--interval', '0.2'], {
      stdout: tty.write,
      stderr: (s) => (stderr += s),
      cwd: dir,
      env: env(),
      isTTY: true,
    });
    expect(code).toBe(0);
    expect(tty.text().startsWith('\x1b[H\x1b[2J')).toBe(true);
    expect(tty.text()).toMatch(/merged over time [▁-█]+█\n/);
    for (const t of [out.text(), tty.text(), stderr]) expect(t).not.toContain(TOKEN);
  });
});
