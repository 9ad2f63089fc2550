// A follow-up round waiting at its gate (publish.follow_up.approve) is named wherever the
// changeset's state appears: `orchestrate status` (its table is the one `--watch` draws), `status
// --json`, `orchestrate show` and `show --json`, report.html, and the web page's snapshot (the
// changeset's row and a follow_up gate the page can answer), each with the command that approves
// it, its deadline and its on_timeout; a `--watch` without a terminal says when it was answered.
// Once approved, none of them says it waits. One repository on the strict fake GitHub (Octokit on
// the wire) whose CI fails until the agent's round fixes it.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { buildHtmlReport } from '../../src/display/html-report.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { readChangesets } from '../../src/run/changesets.js';
import type { ChangesetStatus } from '../../src/publish/track.js';
import type { FollowUpWaiting } from '../../src/run/follow-up-record.js';
import { runSnapshot } from '../../src/web/run-snapshot.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { TOKEN, git, runCampaign } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

const SCRIPT = `conversations:
  - match: "Its checks failed[\\\\s\\\\S]*Change repo-a"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "goodbye from", newText: "farewell from" }] } }]
      - text: "repo-a: the test wants farewell"
  - match: "Change repo-a"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
      - text: "repo-a: greeting changed"
`;

function recipeText(dir: string, apiUrl: string): string {
  return `name: follow-through-waiting
provider: scripted
script: script.yaml
agents:
  editor: { tools: [read, edit] }
publish:
  forge: github
  base_url: ${apiUrl}
  remote: file://${dir}/remotes/\${{ repo.name }}.git
  repository: acme/\${{ repo.name }}
  branch: campaign/\${{ repo.name }}
  draft: false
  follow_up: { on: [ci_failed], max_rounds: 2, approve: { prompt: "Push the fix?", timeout: 8h, on_timeout: reject } }
tasks:
  - id: change
    agent: editor
    for_each: [repo-a]
    cwd: \${{ item }}
    prompt: "Change \${{ item }}"
`;
}

describe('a follow-up round waiting for approval, in every view of its changeset', () => {
  let gh: FakeGitHub;
  let dir: string;
  let runDir: string;
  let runId: string;
  let answer: string;
  const cli = (...argv: string[]) =>
    runCli([...argv, '--run-dir', join(dir, 'runs')], {
      cwd: dir,
      env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
    });

  beforeAll(async () => {
    dir = tempProject({ 'script.yaml': SCRIPT, 'repo-a/greet.txt': 'hello from repo-a\n' });
    const repo = join(dir, 'repo-a');
    const bare = join(dir, 'remotes', 'repo-a.git');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
    git(dir, 'clone', '-q', '--bare', repo, bare);
    gh = await fakeGitHub(
      TOKEN,
      { 'acme/repo-a': bare },
      {
        ci: (_repo, sha) => {
          const text = execFileSync('git', ['--git-dir', bare, 'show', `${sha}:greet.txt`]).toString();
          const failing = text.includes('goodbye from repo-a');
          return [
            {
              name: 'test',
              conclusion: failing ? 'failure' : 'success',
              log: failing ? 'FAIL: wants farewell\n' : 'ok\n',
            },
          ];
        },
      },
    );
    writeFileSync(join(dir, 'recipe.yaml'), recipeText(dir, gh.url));
    runDir = await runCampaign(dir);
    runId = basename(runDir);
    answer = `orchestrate approve ${runId} --follow-up --task change --instance change.repo-a`;
    const p = await cli('publish', runDir, '--apply');
    expect(p.code, p.stdout + p.stderr).toBe(0);
    const f = await cli('publish', runDir, '--follow-up', '--apply');
    expect(f.stdout).toContain('change.repo-a: awaiting approval');
    // A hang guard, not a speed limit: a run, a publish and a follow-up round take minutes on a loaded 2-core machine.
  }, 240_000);
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('status, status --json, show, show --json and the web snapshot name the round, how to answer it and its timeout', async () => {
    const json = await cli('status', runDir, '--json');
    expect(json.code, json.stderr).toBe(0);
    const s = JSON.parse(json.stdout) as { changesets: ChangesetStatus[] };
    const w = s.changesets[0]!.followUpWaiting!;
    expect(w).toMatchObject({ round: 1, reason: 'ci_failed', onTimeout: 'reject', answer });
    expect(w.prompt).toContain('Push the fix? — change.repo-a round 1 (ci failed) on campaign/repo-a: greet.txt');
    // The deadline the gate's request wrote (8h after it was asked).
    const asked = events(runDir).find((e) => e.type === 'approval_requested' && e.gate === 'follow_up');
    expect(asked).toMatchObject({ deadline: w.deadline, onTimeout: 'reject' });
    const line = `change.repo-a: round 1 waiting for approval: ${answer} (or reject); on timeout at ${new Date(w.deadline!).toISOString()}: rejected`;

    const text = await cli('status', runDir);
    expect(text.stdout).toContain(line);
    expect(text.stdout).toContain('  Push the fix? — change.repo-a round 1');

    const show = await cli('show', runDir);
    expect(show.stdout).toContain(line);
    const showJson = JSON.parse((await cli('show', runDir, '--json')).stdout) as {
      followUpsWaiting?: (FollowUpWaiting & { task: string; instance: string })[];
    };
    expect(showJson.followUpsWaiting).toMatchObject([
      { task: 'change', instance: 'change.repo-a', round: 1, deadline: w.deadline, onTimeout: 'reject', answer },
    ]);

    const folder = loadRunFolder(runDir);
    const html = buildHtmlReport(folder);
    expect(html).toContain('<h3>Follow-up rounds waiting for approval</h3>');
    expect(html).toContain(
      `<b>change.repo-a</b>: round 1 waiting for approval: ${answer} (or reject); on timeout at ${new Date(w.deadline!).toISOString()}: rejected`,
    );
    const snap = runSnapshot(folder.state, runDir, undefined);
    expect(snap.changesets?.rows[0]?.followUpWaiting).toMatchObject({ round: 1, deadline: w.deadline, answer });

    // `orchestrate runs` names the gate beside the run, as it names an instance's or a publish gate.
    const runs = await cli('runs');
    expect(runs.stdout).toContain('waiting: follow-up:change.repo-a');
    const listed = JSON.parse((await cli('runs', '--json')).stdout) as { runId: string; waiting?: string[] }[];
    expect(listed.find((r) => r.runId === runId)?.waiting).toEqual(['follow-up:change.repo-a']);
    expect(snap.gates).toMatchObject([
      { kind: 'follow_up', task: 'change', instance: 'change.repo-a', round: 1, state: 'waiting', onTimeout: 'reject' },
    ]);
  });

  it('status --watch (no terminal) shows the waiting round, then says it was answered; once approved, no view says it waits', async () => {
    let text = '';
    const waiters: { test: (s: string) => boolean; resolve: () => void }[] = [];
    const until = (test: (s: string) => boolean) =>
      new Promise<void>((resolve) => (test(text) ? resolve() : waiters.push({ test, resolve })));
    const watching = main(['status', runDir, '--watch', '--interval', '0.2', '--run-dir', join(dir, 'runs')], {
      stdout: (s) => {
        text += s;
        for (const w of waiters.splice(0))
          if (w.test(text)) w.resolve();
          else waiters.push(w);
      },
      stderr: () => undefined,
      cwd: dir,
      env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
      isTTY: false,
    });
    await until((s) => s.includes(`change.repo-a: round 1 waiting for approval: ${answer} (or reject)`));

    const ok = await cli('approve', runDir, '--follow-up', '--instance', 'change.repo-a');
    expect(ok.code, ok.stderr).toBe(0);
    await until((s) => /\d\d:\d\d:\d\d change\.repo-a: follow-up round 1 answered/.test(s));
    // The watch ends once the pull request is merged.
    gh.merge('acme/repo-a', readChangesets(runDir)!.changesets[0]!.pr!.number);
    expect(await watching).toBe(0);

    const json = JSON.parse((await cli('status', runDir, '--json')).stdout) as { changesets: ChangesetStatus[] };
    expect(json.changesets[0]!.followUpWaiting).toBeUndefined();
    expect((await cli('status', runDir)).stdout).not.toContain('waiting for approval');
    expect((await cli('show', runDir)).stdout).not.toContain('waiting for approval');
    expect((await cli('runs')).stdout).not.toContain('follow-up:');
    expect(buildHtmlReport(loadRunFolder(runDir))).not.toContain('waiting for approval');
    const snap = runSnapshot(loadRunFolder(runDir).state, runDir, undefined);
    expect(snap.changesets?.rows[0]?.followUpWaiting).toBeUndefined();
    expect(snap.gates).toMatchObject([{ kind: 'follow_up', round: 1, state: 'approved' }]);
  });
});
