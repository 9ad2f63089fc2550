// `orchestrate publish <run> --rebase KEY --apply`, offline: a campaign is published to a strict
// fake GitHub API (bare file:// remotes); then main moves on with a change that conflicts with
// repo-a's patch, so the fake reports its pull request as not mergeable (status: needs_rebase).
// The rebase runs repo-a's agent again for real (the scripted model answers only a first message
// that carries the old summary), on the new base: the branch's new commit has the new main as
// parent, the same pull request is updated (no new one), status no longer says needs_rebase, and
// changesets.json and run.jsonl record the rebase. A branch someone else pushed to is refused
// before any model call; without --apply nothing is pushed; a killed rebase changes nothing; an
// unknown key gets a did-you-mean, an unpublished one says what to do.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChangesets } from '../../src/run/changesets.js';
import { RunStore } from '../../src/run/run-store.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, events } from '../orchestrator/helpers/run-fixtures.js';
import {
  CAMPAIGN_SCRIPT,
  TOKEN,
  filesUnder,
  git,
  project,
  recipe,
  runCampaign,
  forgeRepos,
} from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

// The rebase conversation comes first: it matches only a rebase message that quotes repo-a's old summary.
const SCRIPT = `conversations:
  - match: "must be redone on the current code[\\\\s\\\\S]*Summary of the earlier change:[\\\\s\\\\S]*repo-a: greeting changed[\\\\s\\\\S]*The earlier change as a patch"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
      - text: "repo-a: greeting changed again, on the new base"
${CAMPAIGN_SCRIPT.replace(/^conversations:\n/, '')}`;

describe('publish --rebase', () => {
  let gh: FakeGitHub;
  let dir: string;
  let runDir: string;
  const cli = (...argv: string[]) =>
    runCli([...argv, '--run-dir', join(dir, 'runs')], {
      cwd: dir,
      env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
    });
  let clones = 0;
  const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
  /** Commits `text` as greet.txt on `branch` of repository `r`'s remote, as someone else would. */
  const pushAs = (r: string, branch: string, file: string, text: string): string => {
    const w = join(dir, `clone-${++clones}`);
    git(dir, 'clone', '-q', '-b', branch, `file://${bare(r)}`, w);
    writeFileSync(join(w, file), text);
    git(w, 'add', '-A');
    git(w, '-c', 'user.name=x', '-c', 'user.email=x@example.com', 'commit', '-qm', `someone's change on ${branch}`);
    git(w, 'push', '-q', 'origin', branch);
    return git(w, 'rev-parse', 'HEAD').trim();
  };
  const rebaseEvents = () =>
    events(runDir).filter((e) => e.type === 'instance_rebase_start' || e.type === 'instance_rebase_end');

  beforeAll(async () => {
    dir = project('github', () => 'http://127.0.0.1:1').dir;
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    // No labels or reviewers: each is one more write, and the client spaces writes a second apart as GitHub asks.
    const spec = recipe(dir, 'github', gh.url, 'Change the greeting of ${{ repo.name }}');
    writeFileSync(join(dir, 'recipe.yaml'), spec.replace(/\n {2}labels: \[campaign\]\n {2}reviewers: \[octocat\]/, ''));
    writeFileSync(join(dir, 'script.yaml'), SCRIPT);
    runDir = await runCampaign(dir);
  });
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('names an unknown key with a did-you-mean, and an unpublished changeset with what to do', async () => {
    const unknown = await cli('publish', runDir, '--rebase', 'change.repo-x');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no changeset "change\.repo-x" in run \S+; did you mean change\.repo-[ab]\?/);
    expect(unknown.stderr).toContain('changesets: change.repo-a, change.repo-b');
    const unpublished = await cli('publish', runDir, '--rebase', 'change.repo-a');
    expect(unpublished.code).toBe(2);
    expect(unpublished.stderr).toMatch(/change\.repo-a was never published \(unpublished\)/);
    expect(unpublished.stderr).toMatch(/publish it first: orchestrate publish \S+ --apply --only change\.repo-a/);
    expect(rebaseEvents()).toEqual([]);
  });

  it('re-runs the agent on the new base, replaces the branch commit and updates the same pull request', async () => {
    // Only repo-a is published (fewer writes).
    expect((await cli('publish', runDir, '--apply', '--only', 'change.repo-a')).code).toBe(0);
    const before = readChangesets(runDir)!.changesets[0]!;
    const oldSummary = before.summary!;
    expect(oldSummary).toContain('repo-a: greeting changed');
    // main moves on with a change to the very line the patch changes: the pull request conflicts.
    const newMain = pushAs('repo-a', 'main', 'greet.txt', 'hello there from repo-a\n');
    const stale = JSON.parse((await cli('status', runDir, '--json')).stdout) as {
      changesets: { key: string; mergeable: string }[];
    };
    expect(stale.changesets[0]).toMatchObject({ key: 'change.repo-a', mergeable: 'needs_rebase' });
    const writesBefore = gh.writes.length;

    const r = await cli('publish', runDir, '--rebase', 'change.repo-a', '--apply');
    expect(r.stderr).not.toContain('orchestrate:');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `change.repo-a: rebased onto main ${newMain.slice(0, 12)} (was ${before.baseCommit.slice(0, 12)})`,
    );
    // The pull request's title and body say the same as before (the task, what was done, the files):
    // only its branch moves.
    expect(r.stdout).toMatch(/change\.repo-a: pushed\s+https:\/\/github\.example\/acme\/repo-a\/pull\/1/);

    // The branch holds the change redone on the new main, as one commit on top of it.
    expect(git(bare('repo-a'), 'rev-parse', 'campaign/repo-a^').trim()).toBe(newMain);
    expect(git(bare('repo-a'), 'show', 'campaign/repo-a:greet.txt')).toBe('goodbye there from repo-a\n');
    // The same pull request, updated in place: no new one.
    expect(gh.pulls.filter((p) => p.repo === 'acme/repo-a').map((p) => [p.number, p.state])).toEqual([[1, 'open']]);
    const writes = gh.writes.slice(writesBefore);
    expect(writes.filter((w) => w.startsWith('POST') && w.endsWith('/pulls'))).toEqual([]);
    // The body still states the task and what was done, not the product's rebase request to the model.
    expect(gh.pulls[0]!.body).toMatch(/^## Goal\nChange repo-a\n\n## Progress\n### Done\n- \[x\] edit greet\.txt\n/);
    expect(gh.pulls[0]!.body).not.toContain('must be redone');

    const after = JSON.parse((await cli('status', runDir, '--json')).stdout) as {
      changesets: { key: string; mergeable: string }[];
    };
    expect(after.changesets[0]).toMatchObject({ key: 'change.repo-a', mergeable: 'mergeable' });

    // changesets.json: the new base, patch and summary, and the record of the rebase.
    const c = readChangesets(runDir)!.changesets[0]!;
    expect(c).toMatchObject({
      baseCommit: newMain,
      patchFile: 'patches/change.repo-a.rebase-2.diff',
      pushedCommit: git(bare('repo-a'), 'rev-parse', 'campaign/repo-a').trim(),
      pr: { number: 1 },
      diffstat: { files: 1, insertions: 1, deletions: 1 },
      rebases: [{ base: 'main', fromCommit: before.baseCommit, baseCommit: newMain, at: expect.any(Number) }],
    });
    expect(c.summary).toContain('greeting changed again, on the new base');
    expect(readFileSync(join(runDir, c.patchFile), 'utf8')).toContain('+goodbye there from repo-a');
    expect(existsSync(join(runDir, before.patchFile))).toBe(true);

    // The re-run is an attempt of the run: its session (whose first message quotes the old
    // summary), its model calls and its start and end in run.jsonl; its worktree is gone.
    const session = readFileSync(join(runDir, 'sessions', 'change.repo-a.rebase-2.jsonl'), 'utf8');
    const firstUser = session.split('\n').find((l) => l.includes('"role":"user"'))!;
    expect(firstUser).toContain('must be redone on the current code');
    expect(firstUser).toContain(JSON.stringify(oldSummary.trim()).slice(1, 40));
    const log = events(runDir);
    expect(rebaseEvents().map((e) => [e.type, e.key, e.attempt, 'ok' in e ? e.ok : undefined])).toEqual([
      ['instance_rebase_start', 'change.repo-a', 2, undefined],
      ['instance_rebase_end', 'change.repo-a', 2, true],
    ]);
    expect(log.some((e) => e.type === 'call_usage' && e.key === 'change.repo-a' && e.attempt === 2)).toBe(true);
    expect(existsSync(join(runDir, 'worktrees', 'change.repo-a.rebase-2'))).toBe(false);
    const start = log.find((e) => e.type === 'instance_start' && e.key === 'change.repo-a');
    expect(start).toMatchObject({ item: 'repo-a', prompt: 'Change repo-a' });
    for (const f of filesUnder(runDir)) expect(readFileSync(f).includes(TOKEN), f).toBe(false);
  });

  it("refuses a branch holding someone else's commit before any model call; a killed rebase or one without --apply pushes nothing", async () => {
    const theirs = pushAs('repo-a', 'campaign/repo-a', 'extra.txt', 'mine\n');
    pushAs('repo-a', 'main', 'greet.txt', 'hello once more from repo-a\n');
    const before = readChangesets(runDir)!.changesets[0]!;
    const r = await cli('publish', runDir, '--rebase', 'change.repo-a', '--apply');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /refusing to rebase change\.repo-a: campaign\/repo-a on \S+ is at [0-9a-f]{12}, a commit orchestrate did not push/,
    );
    expect(git(bare('repo-a'), 'rev-parse', 'campaign/repo-a').trim()).toBe(theirs);
    expect(rebaseEvents()).toHaveLength(2);
    expect(readChangesets(runDir)!.changesets[0]).toEqual(before);

    // A rebase killed after it started (a start, no end) changes nothing of the changeset, not
    // even its commit's date (the same change stays the same commit).
    RunStore.open(runDir).append({
      type: 'instance_rebase_start',
      ...{ task: 'change', key: 'change.repo-a', attempt: 3, parent: 'change', base: 'main' },
      ...{ baseCommit: 'f'.repeat(40), fromCommit: before.baseCommit, sessionFile: 'sessions/x.jsonl' },
    });
    expect((await cli('publish', runDir)).code).toBe(0);
    const { updatedAt: _u, ...now } = readChangesets(runDir)!.changesets[0]! as typeof before & { updatedAt?: number };
    expect(now).toEqual(before);
    const show = await cli('show', runDir);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/change\.repo-a/);

    // Without --apply the rebase runs and records, prints the new preview, and pushes nothing.
    const newest = git(bare('repo-a'), 'rev-parse', 'main').trim();
    const preview = await cli('publish', runDir, '--rebase', 'change.repo-a');
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain(`change.repo-a: rebased onto main ${newest.slice(0, 12)}`);
    expect(preview.stdout).toContain('Nothing was pushed.');
    expect(git(bare('repo-a'), 'rev-parse', 'campaign/repo-a').trim()).toBe(theirs);
    expect(readChangesets(runDir)!.changesets[0]).toMatchObject({
      baseCommit: newest,
      patchFile: 'patches/change.repo-a.rebase-4.diff',
      pushedCommit: before.pushedCommit,
    });
    expect(existsSync(join(runDir, 'worktrees'))).toBe(false);

    // A remote that cannot be reached: said, exit 1, before any model call.
    renameSync(bare('repo-a'), `${bare('repo-a')}.moved`);
    const unreachable = await cli('publish', runDir, '--rebase', 'change.repo-a');
    renameSync(`${bare('repo-a')}.moved`, bare('repo-a'));
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/orchestrate: the remote \S+repo-a\.git does not exist/);
    expect(rebaseEvents()).toHaveLength(5);
  });
});
