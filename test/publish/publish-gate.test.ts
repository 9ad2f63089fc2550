// The publish gate (approve: inside publish:), offline: three repositories with bare file://
// remotes, the scripted agent changing two of them. A live reject (the MCP reject tool) pushes nothing and makes
// `publish --apply` refuse, naming who and when, until `approve --publish` (offline, after the run
// ended) lets it push; a timeout with on_timeout: approve publishes at the run's end; a task gate's
// prompt renders its instance's item; on GitHub, an approved gate opens the pull requests through the API. (kill -9 + resume through the real CLI: publish-gate-kill.test.ts.)
// Every wait is on run.jsonl, never on the clock.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { runJson } from '../../src/display/run-json.js';
import { rejectTool } from '../../src/mcp/control-tools.js';
import type { ServerContext, ToolCall } from '../../src/mcp/tool-table.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { runPublishing } from '../../src/publish/run-publishing.js';
import { decidePublishGate } from '../../src/publish/publish-gate-rules.js';
import { readChangesets } from '../../src/run/changesets.js';
import { connectRunControl } from '../../src/run/run-control-client.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, ofType } from '../orchestrator/helpers/run-fixtures.js';
import { TOKEN, filesUnder, project, recipe, remoteBranches, forgeRepos } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';
import { gitRecipe, logOf, until } from './publish-gate-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('publish gate (forge git)', () => {
  let dir: string;
  const runsDir = () => join(dir, 'runs');
  const cli = (...argv: string[]) =>
    runCli([...argv, '--run-dir', runsDir()], { cwd: dir, env: { PATH: process.env.PATH, USER: 'tester' } });

  beforeAll(() => {
    dir = project('github', () => 'http://127.0.0.1:1').dir;
  });

  it('waits with nothing pushed; a reject ends the run unpublished and publish --apply refuses until approve --publish', async () => {
    writeFileSync(
      join(dir, 'recipe.yaml'),
      gitRecipe(dir, 'gated', '{ prompt: "Publish ${{ changesets.count }} for ${{ run.id }}?" }'),
    );
    const run = runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { ...runPublishing(), runsDir: runsDir(), runId: 'pg-reject' },
    );
    const runDir = join(runsDir(), 'pg-reject');
    const req = await until('the publish gate', () =>
      ofType(logOf(runDir), 'approval_requested').find((e) => e.gate === 'publish'),
    );
    // The task gates rendered their instance's item.
    expect(
      ofType(logOf(runDir), 'approval_requested')
        .filter((e) => e.gate === undefined)
        .map((e) => e.prompt),
    ).toEqual(['Change repo-a now?', 'Change repo-b now?', 'Change repo-c now?']);
    expect(req).toMatchObject({ task: 'change', key: 'change', onTimeout: 'reject' });
    expect(req.prompt).toBe(
      'Publish 2 for pg-reject? — 2 changesets in repo-a, repo-b: 2 files changed, 2 insertions(+), 2 deletions(-)',
    );
    expect(req.deadline).toBeUndefined();
    // Waiting: the changesets are computed, nothing is pushed, and --apply refuses with the reason.
    expect(readChangesets(runDir)!.changesets.map((c) => c.state)).toEqual(['unpublished', 'unpublished']);
    const early = await cli('publish', 'pg-reject', '--apply');
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('the publish gate of change is waiting for approval (Publish 2 for pg-reject?');
    expect(early.stderr).toContain('orchestrate approve pg-reject --publish');
    // show --json and the MCP server's run_status: the run waits, with the gate.
    expect(runJson(loadRunFolder(runDir))).toMatchObject({
      status: 'waiting',
      publishGates: { change: { state: 'waiting', onTimeout: 'reject' } },
    });
    const shown = await cli('show', 'pg-reject');
    expect(shown.stdout).toContain(
      'publish gate of change: waiting for approval: Publish 2 for pg-reject? — 2 changesets',
    );
    // orchestrate status and runs name the gate that waits.
    const status = await cli('status', 'pg-reject');
    expect(status.stdout).toContain(
      'publish gate of change: waiting for approval: Publish 2 for pg-reject? — 2 changesets',
    );
    expect(status.stdout).toContain('hint: orchestrate approve pg-reject --publish --task change (or reject)');
    expect(JSON.parse((await cli('status', 'pg-reject', '--json')).stdout)).toMatchObject({
      waitingPublishGates: [{ task: 'change', prompt: expect.stringMatching(/^Publish 2 for pg-reject\?/) }],
    });
    const listed = JSON.parse((await cli('runs', '--json')).stdout) as { runId: string; waiting?: string[] }[];
    expect(listed.find((r) => r.runId === 'pg-reject')).toMatchObject({
      status: 'running',
      waiting: ['publish:change'],
    });
    for (const r of ['repo-a', 'repo-b', 'repo-c']) expect(remoteBranches(dir, r)).toEqual(['refs/heads/main']);

    const control = connectRunControl(runDir);
    const wrong = await control.send({ action: 'reject', task: 'chnge', gate: 'publish', by: 'bob' });
    const taskGate = await control.send({ action: 'approve', task: 'change', by: 'bob' });
    expect(taskGate).toMatchObject({
      ok: false,
      error: 'change.repo-a has already ended (done); nothing to approve',
    });
    expect(wrong).toEqual({
      ok: false,
      code: 'refused',
      error: 'task chnge has no publish gate; did you mean "change"?',
    });
    // The MCP server's reject tool answers it (publish: true), logged via mcp with the client's name.
    const ctx = {
      cwd: dir,
      env: { USER: 'bob' },
      runsDir: runsDir(),
      progressMs: 1_000,
      launcher: undefined as never,
      log: () => undefined,
      clientName: () => 'test-client',
    } satisfies ServerContext;
    const no = await rejectTool.handler(
      { run: 'pg-reject', publish: true, note: 'not this week' },
      {} as ToolCall,
      ctx,
    );
    expect(no).toMatchObject({
      text: 'rejected the publish gate of change: nothing is pushed; the run ends with its changesets unpublished',
    });
    const out = await run;
    if (!out.ok) throw new Error(JSON.stringify(out));
    expect(out.outcome.status).toBe('succeeded');
    for (const r of ['repo-a', 'repo-b', 'repo-c']) expect(remoteBranches(dir, r)).toEqual(['refs/heads/main']);
    expect(ofType(logOf(runDir), 'changeset_published')).toEqual([]);

    const refused = await cli('publish', 'pg-reject', '--apply');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /the publish gate of change was rejected by .*mcp test-client.* via mcp at \S+: not this week; nothing was pushed\. To publish anyway: orchestrate approve pg-reject --publish/,
    );
    for (const r of ['repo-a', 'repo-b']) expect(remoteBranches(dir, r)).toEqual(['refs/heads/main']);

    const missing = await cli('approve', 'pg-reject');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--publish');
    const ok = await cli('approve', 'pg-reject', '--publish', '--as', 'carol', '--note', 'go after all');
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toContain('approved the publish gate of change: recorded in run pg-reject');
    expect(ok.stdout).toContain('`orchestrate publish pg-reject --apply` publishes the changesets');
    const given = ofType(logOf(runDir), 'approval_given').filter((e) => e.gate === 'publish');
    expect(given.map((g) => [g.decision, g.via, g.offline ?? false])).toEqual([
      ['rejected', 'mcp', false],
      ['approved', 'cli', true],
    ]);
    expect(given.map((g) => g.by)).toEqual([expect.stringContaining('mcp test-client'), 'carol']);
    const applied = await cli('publish', 'pg-reject', '--apply');
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/gated/repo-a', 'refs/heads/main']);
    expect(remoteBranches(dir, 'repo-c')).toEqual(['refs/heads/main']);
  }, 120_000);

  it('a timeout with on_timeout: approve publishes at the run end, each outcome in the log', async () => {
    // A fresh project: the first run's changes landed in these checkouts.
    dir = project('github', () => 'http://127.0.0.1:1').dir;
    writeFileSync(join(dir, 'recipe.yaml'), gitRecipe(dir, 'auto', '{ timeout: 50ms, on_timeout: approve }'));
    const out = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { ...runPublishing(), runsDir: runsDir(), runId: 'pg-auto' },
    );
    if (!out.ok) throw new Error(JSON.stringify(out));
    expect(out.outcome.status).toBe('succeeded');
    const log = logOf(out.outcome.dir);
    const req = ofType(log, 'approval_requested').find((e) => e.gate === 'publish')!;
    expect(req.prompt).toMatch(/^Publish the changesets of change\? — 2 changesets in repo-a, repo-b: /);
    const given = ofType(log, 'approval_given').find((e) => e.gate === 'publish')!;
    expect([given.decision, given.by, given.via]).toEqual(['approved', 'timeout', 'timeout']);
    expect(given.ts).toBeGreaterThanOrEqual(req.deadline!);
    expect(ofType(log, 'changeset_published').map((e) => [e.key, e.outcome])).toEqual([
      ['change.repo-a', 'pushed'],
      ['change.repo-b', 'pushed'],
    ]);
    // Published before the run ended.
    expect(log.findIndex((e) => e.type === 'changeset_published')).toBeLessThan(
      log.findIndex((e) => e.type === 'run_end'),
    );
    expect(remoteBranches(dir, 'repo-b')).toContain('refs/heads/auto/repo-b');
    expect(readChangesets(out.outcome.dir)!.changesets.map((c) => c.state)).toEqual(['published', 'published']);
  }, 120_000);

  it('an answer names the gates there are: none, or the nearest task', () => {
    const none = decidePublishGate(
      { runId: 'r1', gated: [], gates: new Map(), taskGated: ['deploy'] },
      { action: 'approve', task: '*', gate: 'publish' },
    );
    expect(none).toEqual({
      ok: false,
      error:
        'run r1 has no publish gate (no publish: block has approve:); its approval gates are on tasks (answer with --task): deploy',
    });
    const early = decidePublishGate(
      { runId: 'r1', gated: ['change'], gates: new Map() },
      { action: 'approve', task: '*', gate: 'publish' },
    );
    expect(early).toMatchObject({ ok: false, error: expect.stringContaining('has not reached the publish gate') });
  });

  it('approving every gate of an ended run approves those it asked or that have changesets, not every task with publish:', () => {
    const rejected = { state: 'rejected' as const, prompt: 'Publish?', requestedAt: 1, onTimeout: 'reject' as const };
    const board = {
      runId: 'r1',
      gated: ['change', 'inventory', 'review'],
      gates: new Map([['change', rejected]]),
      ended: true,
    };
    const every = { action: 'approve' as const, task: '*', gate: 'publish' as const };
    expect(decidePublishGate({ ...board, withChangesets: new Set(['change']) }, every)).toEqual({
      ok: true,
      tasks: ['change'],
    });
    // A run killed before it wrote its changesets: every gate it may reach is approved ahead.
    expect(decidePublishGate(board, every)).toEqual({ ok: true, tasks: ['change', 'inventory', 'review'] });
    // A task named is approved as asked.
    expect(decidePublishGate({ ...board, withChangesets: new Set(['change']) }, { ...every, task: 'review' })).toEqual({
      ok: true,
      tasks: ['review'],
    });
  });
});

describe('publish gate (forge github)', () => {
  let gh: FakeGitHub | undefined;
  afterAll(async () => {
    await gh?.close();
  });

  it('approved by its timeout, the run opens the pull requests on the API as publish --apply would', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    gh = await fakeGitHub(TOKEN, forgeRepos(dir));
    // No labels or reviewers (each is one more write, spaced a second apart as GitHub asks).
    const spec = recipe(dir, 'github', gh.url, 'Change ${{ repo.name }}')
      .replace(/\n {2}labels: \[campaign\]\n {2}reviewers: \[octocat\]/, '')
      .replace(/\n {2}branch: (.*)\n/, '\n  branch: $1\n  approve: { timeout: 50ms, on_timeout: approve }\n');
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    const out = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      {
        ...runPublishing(),
        runsDir: join(dir, 'runs'),
        runId: 'pg-github',
        env: { ...process.env, GITHUB_TOKEN: TOKEN },
      },
    );
    if (!out.ok) throw new Error(JSON.stringify(out));
    expect(out.outcome.status).toBe('succeeded');
    const log = logOf(out.outcome.dir);
    expect(
      ofType(log, 'approval_given')
        .filter((e) => e.gate === 'publish')
        .map((e) => e.decision),
    ).toEqual(['approved']);
    expect(ofType(log, 'changeset_published').map((e) => [e.key, e.outcome, e.detail])).toEqual([
      ['change.repo-a', 'opened', 'https://github.example/acme/repo-a/pull/1'],
      ['change.repo-b', 'opened', 'https://github.example/acme/repo-b/pull/1'],
    ]);
    expect(gh.pulls.map((p) => [p.repo, p.head, p.title, p.state])).toEqual([
      ['acme/repo-a', 'campaign/repo-a', 'Change repo-a', 'open'],
      ['acme/repo-b', 'campaign/repo-b', 'Change repo-b', 'open'],
    ]);
    expect(readChangesets(out.outcome.dir)!.changesets.map((c) => c.state)).toEqual(['published', 'published']);
    for (const f of filesUnder(out.outcome.dir)) expect(readFileSync(f, 'utf8'), f).not.toContain(TOKEN);
  }, 120_000);
});
