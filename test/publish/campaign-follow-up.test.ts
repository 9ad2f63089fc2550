// A campaign that follows through, offline: four repositories changed by the scripted agent, four
// pull requests on the strict fake GitHub (Octokit on the wire, bare file:// remotes). CI is
// computed from each commit's content by the fake: repo-a's check fails with a log that says
// why. A reviewer asks for changes on repo-b with two line comments. `publish --follow-up` previews;
// `--follow-up --apply` is killed with SIGKILL while repo-a's round runs its agent, then run
// again: repo-a's agent gets the failing log, its fix is pushed as one new commit on top (the
// check passes on it), repo-b's agent gets both comments, a new commit is pushed and both comments
// are answered, and the forge's auto-merge is turned on for repo-c and repo-d (merge_when). Each
// branch moved once per round (its reflog), a second --follow-up --apply and a publish --apply push
// and answer nothing again, and the token is in no file of the run.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_MARK } from '../../src/publish/forge.js';
import type { ChangesetStatus } from '../../src/publish/track.js';
import { readChangesets } from '../../src/run/changesets.js';
import { runCli } from '../cli/run-cli.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';
import { cleanupTempDirs, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { TOKEN, filesUnder, git, runCampaign } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

const REPOS = ['repo-a', 'repo-b', 'repo-c', 'repo-d'];
const ROOT = resolve(import.meta.dirname, '../..');

/** The agent: changes every greeting; its follow-ups fix repo-a's check and answer repo-b's review. */
function script(delayRepoA: boolean): string {
  return `conversations:
  - match: "Its checks failed[\\\\s\\\\S]*Change repo-a[\\\\s\\\\S]*expected .farewell from repo-a."
    turns:
      - ${delayRepoA ? 'delay_ms: 3600000\n        ' : ''}tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "goodbye from", newText: "farewell from" }] } }]
      - text: "repo-a: the test wants farewell"
  - match: "A reviewer asked for changes[\\\\s\\\\S]*Change repo-b[\\\\s\\\\S]*Say hi instead[\\\\s\\\\S]*End with a full stop"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "goodbye from repo-b", newText: "hi from repo-b." }] } }]
      - text: "repo-b: says hi, with a full stop"
${REPOS.map(
  (r) => `  - match: "Change ${r}"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
      - text: "${r}: greeting changed"`,
).join('\n')}
`;
}

function recipeText(dir: string, apiUrl: string): string {
  return `name: follow-through
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
  title: "Change the greeting of \${{ repo.name }}"
  draft: false
  follow_up: { on: [ci_failed, changes_requested, conflict], max_rounds: 2 }
  merge_when: [ci_passed]
tasks:
  - id: change
    agent: editor
    for_each: [${REPOS.join(', ')}]
    cwd: \${{ item }}
    prompt: "Change \${{ item }}"
`;
}

/** The log GitHub Actions keeps of a failing job: timestamped lines, colours, the failure at the end. */
const FAILING_LOG = [
  '2026-12-06T06:00:00.0000000Z ##[group]Run npm test',
  '2026-12-06T06:00:01.0000000Z \x1b[32mPASS\x1b[0m other.test',
  ...Array.from({ length: 300 }, (_, i) => `2026-12-06T06:00:02.0000000Z noise line ${i}`),
  "2026-12-06T06:00:03.0000000Z \x1b[31mFAIL\x1b[0m greet.test: expected 'farewell from repo-a' but got 'goodbye from repo-a'",
  '2026-12-06T06:00:03.1000000Z ##[error]Process completed with exit code 1.',
  '',
].join('\n');

// Limits of 120 s only turn a hang into a failure: a test runs follow-up rounds with their agents
// and starts the CLI as a process, which took over 30 s with a load average of 50.
describe('campaign follow-up: CI and review feedback back to the agents until merged', { timeout: 120_000 }, () => {
  let gh: FakeGitHub;
  let dir: string;
  let runDir: string;
  const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
  const env = () => ({ PATH: process.env.PATH, GITHUB_TOKEN: TOKEN });
  const cli = (...argv: string[]) => runCli([...argv, '--run-dir', join(dir, 'runs')], { cwd: dir, env: env() });
  /** Each update of the branch on its remote (the bare repository's reflog), newest first. */
  const moves = (r: string) =>
    git(bare(r), 'reflog', 'show', '--format=%H', `refs/heads/campaign/${r}`).split('\n').filter(Boolean);
  const head = (r: string) => git(bare(r), 'rev-parse', `campaign/${r}`).trim();
  const greet = (r: string, rev: string) =>
    execFileSync('git', ['--git-dir', bare(r), 'show', `${rev}:greet.txt`]).toString();
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    const files: Record<string, string> = { 'script.yaml': script(true) };
    for (const r of REPOS) files[`${r}/greet.txt`] = `hello from ${r}\n`;
    dir = tempProject(files);
    for (const r of REPOS) {
      const repo = join(dir, r);
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '-A');
      git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
      git(dir, 'clone', '-q', '--bare', repo, bare(r));
      git(bare(r), 'config', 'core.logAllRefUpdates', 'always');
    }
    gh = await fakeGitHub(TOKEN, Object.fromEntries(REPOS.map((r) => [`acme/${r}`, bare(r)])), {
      // CI runs the repository's test on each commit: repo-a's wants "farewell".
      ci: (repo, sha) => {
        const r = repo.split('/')[1]!;
        const failing = r === 'repo-a' && greet(r, sha).includes('goodbye from repo-a');
        return [{ name: 'test', conclusion: failing ? 'failure' : 'success', log: failing ? FAILING_LOG : 'ok\n' }];
      },
      // Branch protection: an approval is required, so auto-merge waits for it.
      require: { approval: true },
    });
    writeFileSync(join(dir, 'recipe.yaml'), recipeText(dir, gh.url));
    runDir = await runCampaign(dir);
    const published = await cli('publish', runDir, '--apply');
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    expect(gh.pulls.map((p) => [p.repo, p.state])).toEqual(REPOS.map((r) => [`acme/${r}`, 'open']));
  }, 120_000);
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await gh?.close();
    cleanupTempDirs();
  });

  it('previews what each pull request needs, running and pushing nothing', async () => {
    gh.review('acme/repo-b', 'campaign/repo-b', {
      user: 'octocat',
      state: 'CHANGES_REQUESTED',
      comments: [
        { path: 'greet.txt', line: 1, body: 'Say hi instead' },
        { path: 'greet.txt', line: 1, body: 'End with a full stop' },
      ],
    });
    const before = REPOS.map(head);
    const r = await cli('publish', runDir, '--follow-up');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('change.repo-a: preview  would send back:\nCheck "test" failed');
    // The end of the log, where the job names its failure, without timestamps or colours; the start cut.
    expect(r.stdout).toContain("FAIL greet.test: expected 'farewell from repo-a' but got 'goodbye from repo-a'");
    expect(r.stdout).toMatch(/\[\d+ earlier lines cut\]/);
    expect(r.stdout).not.toContain('noise line 0\n');
    expect(r.stdout).toContain('change.repo-b: preview  would send back:\n- greet.txt:1 (octocat): Say hi instead');
    expect(r.stdout).toContain("change.repo-c: preview  would turn on the forge's auto-merge");
    expect(r.stdout).toContain('Nothing was run or pushed.');
    expect(REPOS.map(head)).toEqual(before);
    expect(events(runDir).filter((e) => e.type.startsWith('instance_followup'))).toEqual([]);
  });

  it('a round killed while its agent runs is run again; each round pushes one commit, answers each comment once, and auto-merge goes on', async () => {
    const before = Object.fromEntries(REPOS.map((r) => [r, head(r)]));
    // kill -9 while repo-a's round runs its agent (its first turn waits an hour).
    child = spawn(
      process.execPath,
      [
        ...CLI_NODE_ARGS,
        'publish',
        runDir,
        '--follow-up',
        '--apply',
        '--only',
        'change.repo-a',
        '--run-dir',
        join(dir, 'runs'),
      ],
      { cwd: ROOT, env: { ...env(), HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' }, stdio: 'ignore' },
    );
    const started = () =>
      existsSync(join(runDir, 'run.jsonl')) &&
      readFileSync(join(runDir, 'run.jsonl'), 'utf8').includes('"instance_followup_start"');
    await new Promise<void>((done) => {
      const w = watch(runDir, () => {
        if (started()) {
          w.close();
          done();
        }
      });
      if (started()) {
        w.close();
        done();
      }
    });
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(head('repo-a')).toBe(before['repo-a']);

    // The agent answers at once now (the recipe and script read again).
    writeFileSync(join(dir, 'script.yaml'), script(false));
    const r = await cli('publish', runDir, '--follow-up', '--apply', '--reload-recipe');
    expect(
      r.stderr.replace(/^orchestrate: the recipe and its files are read as they are now[^\n]*\n/m, ''),
    ).not.toContain('orchestrate:');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/change\.repo-a: followed up {2}[0-9a-f]{12} on campaign\/repo-a/);
    expect(r.stdout).toMatch(/change\.repo-b: followed up {2}[0-9a-f]{12} on campaign\/repo-b/);
    expect(r.stdout).toContain('change.repo-c: auto merge');
    expect(r.stdout).toContain('change.repo-d: auto merge');

    // repo-a: one new commit on top of the old one (no force push), and the check passes on it.
    expect(git(bare('repo-a'), 'rev-parse', 'campaign/repo-a^').trim()).toBe(before['repo-a']);
    expect(greet('repo-a', 'campaign/repo-a')).toBe('farewell from repo-a\n');
    expect(moves('repo-a')).toEqual([head('repo-a'), before['repo-a']]);
    // repo-b: one new commit, both comments answered once, in their threads.
    expect(git(bare('repo-b'), 'rev-parse', 'campaign/repo-b^').trim()).toBe(before['repo-b']);
    expect(greet('repo-b', 'campaign/repo-b')).toBe('hi from repo-b.\n');
    expect(moves('repo-b')).toEqual([head('repo-b'), before['repo-b']]);
    const roots = gh.ci.comments.filter((c) => c.inReplyTo === undefined);
    const replies = gh.ci.comments.filter((c) => c.inReplyTo !== undefined);
    expect(replies.map((c) => c.inReplyTo).sort()).toEqual(roots.map((c) => c.id).sort());
    for (const reply of replies) {
      expect(reply.body).toContain(`Changed in ${head('repo-b').slice(0, 12)} (greet.txt), follow-up round 1.`);
      expect(reply.body).toContain('repo-b: says hi, with a full stop');
      expect(reply.body).toContain(ANSWER_MARK);
    }
    // repo-c and repo-d: untouched, auto-merge on (waiting for the approval the branch requires).
    expect(moves('repo-c')).toEqual([before['repo-c']]);
    expect([...gh.ci.autoMerge].sort()).toEqual(['acme/repo-c#1', 'acme/repo-d#1']);

    // The run log: repo-a's round 1 started twice (killed, then again), ended and was pushed once.
    const fu = events(runDir).filter((e) => e.type.startsWith('instance_followup'));
    const of = (key: string) =>
      fu.filter((e) => 'key' in e && e.key === key).map((e) => [e.type, 'round' in e ? e.round : 0]);
    expect(of('change.repo-a')).toEqual([
      ['instance_followup_start', 1],
      ['instance_followup_start', 1],
      ['instance_followup_end', 1],
      ['instance_followup_pushed', 1],
    ]);
    expect(of('change.repo-b')).toEqual([
      ['instance_followup_start', 1],
      ['instance_followup_end', 1],
      ['instance_followup_pushed', 1],
    ]);
    // Its model calls are the run's (budgets count them).
    const a = fu.find((e) => e.type === 'instance_followup_end' && e.key === 'change.repo-a') as { attempt: number };
    expect(
      events(runDir).some((e) => e.type === 'call_usage' && e.key === 'change.repo-a' && e.attempt === a.attempt),
    ).toBe(true);
    const cs = readChangesets(runDir)!.changesets;
    expect(cs.find((c) => c.key === 'change.repo-a')).toMatchObject({
      pushedCommit: head('repo-a'),
      followUps: [{ round: 1, reason: 'ci_failed', commit: head('repo-a') }],
    });

    const status = JSON.parse((await cli('status', runDir, '--json')).stdout) as {
      changesets: ChangesetStatus[];
      progress: Record<string, number>;
    };
    expect(status.changesets.map((c) => [c.key, c.checks, c.unanswered, c.autoMerge, c.followUps])).toEqual([
      ['change.repo-a', 'passing', 0, false, 1],
      ['change.repo-b', 'passing', 0, false, 1],
      ['change.repo-c', 'passing', 0, true, undefined],
      ['change.repo-d', 'passing', 0, true, undefined],
    ]);
  });

  it('running again pushes and answers nothing twice; the approval merges an auto-merge pull request', async () => {
    const heads = REPOS.map(head);
    const comments = gh.ci.comments.length;
    const again = await cli('publish', runDir, '--follow-up', '--apply');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    // repo-b still says "changes requested" (the reviewer has not looked again), but nothing is unanswered.
    expect(again.stdout).toContain('change.repo-b: none');
    // repo-a's CI passes now: its auto-merge goes on.
    expect(again.stdout).toContain('change.repo-a: auto merge');
    expect(REPOS.map(head)).toEqual(heads);
    expect(gh.ci.comments.length).toBe(comments);
    // publish --apply builds the same branch again (the change's commit, then the round's): nothing is pushed.
    const republish = await cli('publish', runDir, '--apply');
    expect(republish.code).toBe(0);
    expect(republish.stdout).not.toMatch(/: pushed/);
    expect(REPOS.map(head)).toEqual(heads);
    expect(moves('repo-a')).toHaveLength(2);

    gh.review('acme/repo-c', 'campaign/repo-c', { user: 'octocat', state: 'APPROVED' });
    const status = await cli('status', runDir);
    expect(status.stdout).toMatch(/change\.repo-c\s+merged/);
    expect(status.stdout).toContain('burndown: 1/4 merged');
    for (const f of filesUnder(runDir)) expect(readFileSync(f).includes(TOKEN), f).toBe(false);
  });
});
