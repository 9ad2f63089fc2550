// The MCP server's changeset_status and follow_up tools, their handlers called in-process against a
// campaign published to the strict fake GitHub (Octokit on the wire): changeset_status returns the
// ChangesetStatus objects with the burndown's counts; follow_up previews what each pull request
// needs without running anything, and with apply turns on the forge's auto-merge (merge_when), or
// merges a pull request with nothing left to wait for;
// a run without changesets is a tool error that says why.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { changesetStatusTool, followUpTool } from '../../src/mcp/campaign-tools.js';
import type { ServerContext, ToolCall } from '../../src/mcp/tool-table.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { REPOS, TOKEN, git, project, recipe, runCampaign } from '../publish/campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from '../publish/fake-forges.js';

describe('changeset_status and follow_up MCP tools', () => {
  let gh: FakeGitHub | undefined;
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('reports each pull request, previews the follow-up, and with apply turns on auto-merge', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
    gh = await fakeGitHub(TOKEN, Object.fromEntries(REPOS.map((r) => [`acme/${r}`, bare(r)])), {
      require: { approval: true },
    });
    const spec = recipe(dir, 'github', gh.url, 'Change ${{ repo.name }}')
      .replace(/\n {2}labels: \[campaign\]/, '')
      .replace(/\n {2}reviewers: \[octocat\]/, '')
      .replace('\n  body:', '\n  draft: false\n  follow_up: { on: [ci_failed] }\n  merge_when: [ci_passed]\n  body:');
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    const runDir = await runCampaign(dir);
    const env = { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN };
    expect((await runCli(['publish', runDir, '--apply'], { cwd: dir, env })).code).toBe(0);
    const sha = (r: string) => git(bare(r), 'rev-parse', `campaign/${r}`).trim();
    gh.setCheckRuns('acme/repo-a', sha('repo-a'), [{ name: 'test', conclusion: 'failure', log: 'FAIL: wrong word\n' }]);
    gh.setCheckRuns('acme/repo-b', sha('repo-b'), [{ name: 'test', conclusion: 'success', log: 'ok\n' }]);
    const ctx = {
      cwd: dir,
      env,
      runsDir: join(dir, 'runs'),
      progressMs: 1_000,
      launcher: undefined as never,
      log: () => undefined,
      clientName: () => 'test-client',
    } satisfies ServerContext;
    const call = {} as ToolCall;

    const status = await changesetStatusTool.handler({ run: runDir }, call, ctx);
    expect(status.data).toMatchObject({
      changesets: [
        { key: 'change.repo-a', progress: 'ci_failing', failing: ['test'] },
        { key: 'change.repo-b', progress: 'ready', checks: 'passing' },
      ],
      progress: { ci_failing: 1, ready: 1, merged: 0 },
    });
    expect(status.text).not.toContain(TOKEN);

    const preview = await followUpTool.handler({ run: runDir }, call, ctx);
    expect(preview.data).toMatchObject({
      apply: false,
      results: [
        {
          key: 'change.repo-a',
          outcome: 'preview',
          reason: 'ci_failed',
          detail: expect.stringContaining('FAIL: wrong word'),
        },
        { key: 'change.repo-b', outcome: 'preview', detail: "would turn on the forge's auto-merge" },
      ],
    });
    expect(gh.ci.autoMerge.size).toBe(0);
    const applied = await followUpTool.handler({ run: runDir, apply: true, only: ['change.repo-b'] }, call, ctx);
    expect(applied.data).toMatchObject({ results: [{ key: 'change.repo-b', outcome: 'auto_merge' }] });
    expect([...gh.ci.autoMerge]).toEqual(['acme/repo-b#1']);

    // Green and approved, nothing left to wait for: GitHub refuses auto-merge there ("clean status"),
    // so it is merged at once.
    gh.setCheckRuns('acme/repo-a', sha('repo-a'), [{ name: 'test', conclusion: 'success', log: 'ok\n' }]);
    gh.review('acme/repo-a', 'campaign/repo-a', { user: 'octocat', state: 'APPROVED' });
    const merged = await followUpTool.handler({ run: runDir, apply: true, only: ['change.repo-a'] }, call, ctx);
    expect(merged.data).toMatchObject({ results: [{ key: 'change.repo-a', outcome: 'merged' }] });
    expect(gh.pulls.find((p) => p.repo === 'acme/repo-a')).toMatchObject({ merged: true });

    await expect(changesetStatusTool.handler({ run: 'nope' }, call, ctx)).rejects.toThrow(/nope/);
  }, 120_000);
});
