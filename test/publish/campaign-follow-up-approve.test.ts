// `follow_up.approve:` on the strict fake GitHub (Octokit on the wire, bare file:// remotes): repo-a's
// CI fails, repo-b gets two review comments. `publish --follow-up --apply` runs both rounds but
// pushes nothing and answers no comment: each round waits at its gate (approval_requested, gate
// follow_up) and the command says how to answer. A plain `publish --apply` does not push a waiting
// round either, nor one whose gate request a kill -9 cut off (asked again by the next --apply).
// `orchestrate approve --follow-up` lets the next --apply push repo-a's round; the MCP reject tool
// drops repo-b's (not pushed, no reply, not run again, and it counts against max_rounds).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectTool } from '../../src/mcp/control-tools.js';
import type { ServerContext, ToolCall } from '../../src/mcp/tool-table.js';
import { readChangesets } from '../../src/run/changesets.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { TOKEN, git, runCampaign } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

const REPOS = ['repo-a', 'repo-b'];

const SCRIPT = `conversations:
  - match: "Its checks failed[\\\\s\\\\S]*Change repo-a"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "goodbye from", newText: "farewell from" }] } }]
      - text: "repo-a: the test wants farewell"
  - match: "A reviewer asked for changes[\\\\s\\\\S]*Change repo-b"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "goodbye from repo-b", newText: "hi from repo-b." }] } }]
      - text: "repo-b: says hi"
${REPOS.map(
  (r) => `  - match: "Change ${r}"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
      - text: "${r}: greeting changed"`,
).join('\n')}
`;

const GATE = `{ prompt: "Push the agent's fix?" }`;

function recipeText(dir: string, apiUrl: string, gate = GATE, repos = REPOS): string {
  return `name: follow-through-gated
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
  follow_up: { on: [ci_failed, changes_requested], max_rounds: 1, approve: ${gate} }
tasks:
  - id: change
    agent: editor
    for_each: [${repos.join(', ')}]
    cwd: \${{ item }}
    prompt: "Change \${{ item }}"
`;
}

/** A project of `repos` (bare remotes beside them) on a fake GitHub whose CI fails repo-a until it says farewell. */
async function campaign(repos: readonly string[]): Promise<{ dir: string; gh: FakeGitHub }> {
  const files: Record<string, string> = { 'script.yaml': SCRIPT };
  for (const r of repos) files[`${r}/greet.txt`] = `hello from ${r}\n`;
  const dir = tempProject(files);
  const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
  for (const r of repos) {
    const repo = join(dir, r);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
    git(dir, 'clone', '-q', '--bare', repo, bare(r));
  }
  const greet = (r: string, rev: string) =>
    execFileSync('git', ['--git-dir', bare(r), 'show', `${rev}:greet.txt`]).toString();
  const gh = await fakeGitHub(TOKEN, Object.fromEntries(repos.map((r) => [`acme/${r}`, bare(r)])), {
    ci: (repo, sha) => {
      const r = repo.split('/')[1]!;
      const failing = r === 'repo-a' && greet(r, sha).includes('goodbye from repo-a');
      return [
        { name: 'test', conclusion: failing ? 'failure' : 'success', log: failing ? 'FAIL: wants farewell\n' : 'ok\n' },
      ];
    },
  });
  return { dir, gh };
}

describe('follow_up.approve: a gate before a follow-up round pushes', () => {
  let gh: FakeGitHub;
  let dir: string;
  let runDir: string;
  let runId: string;
  const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
  const env = () => ({ PATH: process.env.PATH, GITHUB_TOKEN: TOKEN });
  const cli = (...argv: string[]) => runCli([...argv, '--run-dir', join(dir, 'runs')], { cwd: dir, env: env() });
  const head = (r: string) => git(bare(r), 'rev-parse', `campaign/${r}`).trim();
  const greet = (r: string, rev: string) =>
    execFileSync('git', ['--git-dir', bare(r), 'show', `${rev}:greet.txt`]).toString();
  const of = (type: string, key: string) =>
    events(runDir).filter((e) => e.type === type && 'key' in e && e.key === key);
  let published: Record<string, string>;

  beforeAll(async () => {
    ({ dir, gh } = await campaign(REPOS));
    writeFileSync(join(dir, 'recipe.yaml'), recipeText(dir, gh.url));
    runDir = await runCampaign(dir);
    runId = basename(runDir);
    const p = await cli('publish', runDir, '--apply');
    expect(p.code, p.stdout + p.stderr).toBe(0);
    published = Object.fromEntries(REPOS.map((r) => [r, head(r)]));
    gh.review('acme/repo-b', 'campaign/repo-b', {
      user: 'octocat',
      state: 'CHANGES_REQUESTED',
      comments: [
        { path: 'greet.txt', line: 1, body: 'Say hi instead' },
        { path: 'greet.txt', line: 1, body: 'End with a full stop' },
      ],
    });
  });
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('runs the rounds but pushes nothing and answers nothing until approved; says how to approve', async () => {
    const r = await cli('publish', runDir, '--follow-up', '--apply');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('change.repo-a: awaiting approval  round 1 is waiting for approval: Push the agent');
    expect(r.stdout).toContain(
      `orchestrate approve ${runId} --follow-up --task change --instance change.repo-a (or reject), then publish ${runId} --follow-up --apply`,
    );
    expect(r.stdout).toContain('change.repo-b: awaiting approval');
    expect(r.stdout).toContain('change.repo-b round 1 (changes requested) on campaign/repo-b: greet.txt');
    expect(REPOS.map(head)).toEqual(REPOS.map((x) => published[x]));
    expect(gh.ci.comments.filter((c) => c.inReplyTo !== undefined)).toEqual([]);
    for (const key of ['change.repo-a', 'change.repo-b']) {
      expect(of('instance_followup_end', key)).toHaveLength(1);
      expect(of('instance_followup_pushed', key)).toEqual([]);
      expect(of('approval_requested', key)).toMatchObject([{ gate: 'follow_up', round: 1, task: 'change' }]);
    }

    // Neither a plain publish --apply (which rebuilds the branch with its rounds) nor another
    // --follow-up --apply pushes a waiting round, or runs it again.
    const again = await cli('publish', runDir, '--follow-up', '--apply');
    expect(again.stdout).toContain('change.repo-a: awaiting approval');
    const plain = await cli('publish', runDir, '--apply');
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(REPOS.map(head)).toEqual(REPOS.map((x) => published[x]));
    expect(of('instance_followup_start', 'change.repo-a')).toHaveLength(1);
    expect(readChangesets(runDir)!.changesets.map((c) => c.followUps)).toEqual([undefined, undefined]);
  });

  it('a kill -9 between a round’s end and its gate request: the round is not pushed, and is asked again', async () => {
    // The log as a kill -9 right after repo-a's instance_followup_end leaves it: its request never written.
    const log = join(runDir, 'run.jsonl');
    const lines = readFileSync(log, 'utf8').split('\n');
    const cut = lines.filter((l) => !(l.includes('"approval_requested"') && l.includes('"change.repo-a"')));
    expect(cut.length).toBe(lines.length - 1);
    writeFileSync(log, cut.join('\n'));
    const plain = await cli('publish', runDir, '--apply', '--only', 'change.repo-a');
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(head('repo-a')).toBe(published['repo-a']);
    const r = await cli('publish', runDir, '--follow-up', '--apply', '--only', 'change.repo-a');
    expect(r.stdout).toContain('change.repo-a: awaiting approval  round 1 is waiting for approval');
    expect(head('repo-a')).toBe(published['repo-a']);
    expect(of('approval_requested', 'change.repo-a')).toHaveLength(1);
    expect(of('instance_followup_start', 'change.repo-a')).toHaveLength(1);
  });

  it('an answer naming no waiting round says which rounds wait', async () => {
    const r = await cli('approve', runDir, '--follow-up', '--task', 'chnage');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no follow-up round of chnage is waiting for approval; did you mean --task change?');
    expect(r.stderr).toContain('--task change --instance change.repo-a (round 1)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('approved: the next --apply pushes the round; rejected: dropped, never pushed or answered, counts as a round', async () => {
    const ok = await cli('approve', runDir, '--follow-up', '--instance', 'change.repo-a', '--as', 'ana');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('approved follow-up change.repo-a round 1');
    // repo-b's is rejected through the MCP server's reject tool (the same delivery as the CLI).
    const ctx = {
      cwd: dir,
      env: env(),
      runsDir: join(dir, 'runs'),
      progressMs: 1_000,
      launcher: undefined as never,
      log: () => undefined,
      clientName: () => 'test-client',
    } satisfies ServerContext;
    const no = await rejectTool.handler(
      { run: runId, follow_up: true, instance: 'change.repo-b', note: 'wrong fix' },
      {} as ToolCall,
      ctx,
    );
    expect(no.text).toContain('rejected follow-up change.repo-b round 1: it is dropped');
    expect(of('approval_given', 'change.repo-b')).toMatchObject([{ via: 'mcp', note: 'wrong fix', round: 1 }]);
    // Answered, nothing pushed yet: the push is the next --apply's.
    expect(REPOS.map(head)).toEqual(REPOS.map((x) => published[x]));

    const r = await cli('publish', runDir, '--follow-up', '--apply');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // repo-a: its round's commit on top of the published one; CI passes on it.
    expect(git(bare('repo-a'), 'rev-parse', 'campaign/repo-a^').trim()).toBe(published['repo-a']);
    expect(greet('repo-a', 'campaign/repo-a')).toBe('farewell from repo-a\n');
    expect(of('instance_followup_pushed', 'change.repo-a')).toMatchObject([{ round: 1, commit: head('repo-a') }]);
    // repo-b: dropped. Not pushed, no comment answered, not run again on the same comments.
    expect(head('repo-b')).toBe(published['repo-b']);
    expect(gh.ci.comments.filter((c) => c.inReplyTo !== undefined)).toEqual([]);
    expect(r.stdout).toContain('change.repo-b: none  round 1 on this evidence was rejected by');
    expect(of('instance_followup_start', 'change.repo-b')).toHaveLength(1);
    const cs = readChangesets(runDir)!.changesets;
    expect(cs.find((c) => c.key === 'change.repo-a')!.followUps).toMatchObject([{ round: 1, commit: head('repo-a') }]);
    expect(cs.find((c) => c.key === 'change.repo-b')!.followUps).toBeUndefined();

    // New comments on repo-b: the rejected round counts against max_rounds (1).
    gh.review('acme/repo-b', 'campaign/repo-b', {
      user: 'octocat',
      state: 'CHANGES_REQUESTED',
      comments: [{ path: 'greet.txt', line: 1, body: 'Please try again' }],
    });
    const more = await cli('publish', runDir, '--follow-up', '--apply', '--only', 'change.repo-b');
    expect(more.stdout).toContain('change.repo-b: max rounds  1 follow-up rounds done (max_rounds)');
    expect(of('instance_followup_start', 'change.repo-b')).toHaveLength(1);
    // Publishing again pushes nothing new: the approved round is already there, the rejected one never is.
    const heads = REPOS.map(head);
    const again = await cli('publish', runDir, '--apply');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(REPOS.map(head)).toEqual(heads);
  });
});

describe('follow_up.approve with a timeout', () => {
  it('a gate nobody answers by its deadline is answered by on_timeout at the next --apply, which pushes the round', async () => {
    const { dir, gh } = await campaign(['repo-a']);
    try {
      const gate = '{ timeout: 1ms, on_timeout: approve }';
      writeFileSync(join(dir, 'recipe.yaml'), recipeText(dir, gh.url, gate, ['repo-a']));
      const runDir = await runCampaign(dir);
      const cli = (...argv: string[]) =>
        runCli([...argv, '--run-dir', join(dir, 'runs')], {
          cwd: dir,
          env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
        });
      const bare = join(dir, 'remotes', 'repo-a.git');
      expect((await cli('publish', runDir, '--apply')).code).toBe(0);
      const published = git(bare, 'rev-parse', 'campaign/repo-a').trim();
      const first = await cli('publish', runDir, '--follow-up', '--apply');
      expect(first.stdout).toContain('change.repo-a: awaiting approval  round 1 is waiting for approval');
      expect(first.stdout).toContain('then approved)');
      expect(git(bare, 'rev-parse', 'campaign/repo-a').trim()).toBe(published);
      // The deadline (1 ms after the request) has passed by the time the next command reads the log.
      const second = await cli('publish', runDir, '--follow-up', '--apply');
      expect(second.code, second.stdout + second.stderr).toBe(0);
      expect(git(bare, 'rev-parse', 'campaign/repo-a^').trim()).toBe(published);
      const given = events(runDir).filter((e) => e.type === 'approval_given');
      expect(given).toMatchObject([
        { gate: 'follow_up', round: 1, decision: 'approved', by: 'timeout', via: 'timeout' },
      ]);
    } finally {
      await gh.close();
      cleanupTempDirs();
    }
  });
});
