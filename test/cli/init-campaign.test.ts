// The batch-refactor example as a newcomer runs it, offline: `orchestrate init batch-refactor`
// copies it and makes bare remotes in remotes/; the run ends with changesets.json and pushes
// nothing; `orchestrate publish <run>` previews; `--apply` pushes one branch per changed
// repository (forge: git) holding exactly the refactor; applying again pushes nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readChangesets } from '../../src/run/changesets.js';
import { runCli } from './run-cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const branches = (bare: string): string[] =>
  execFileSync('git', ['--git-dir', bare, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/'])
    .toString()
    .split('\n')
    .filter(Boolean);

describe('init batch-refactor: the whole campaign loop offline', () => {
  it('run, preview, apply to the bare remotes init made, apply again changes nothing', {
    timeout: 120_000,
  }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'orch-init-campaign-'));
    dirs.push(cwd);
    const env = { PATH: process.env.PATH, ORCHESTRATE_HOME: join(cwd, '.home') };
    const init = await runCli(['init', 'batch-refactor'], { cwd, env });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(
      'bare remotes for publishing: remotes/repo-a.git, remotes/repo-b.git, remotes/repo-c.git',
    );
    expect(init.stdout).toContain('orchestrate publish <run>');
    for (const r of ['repo-a', 'repo-b', 'repo-c']) expect(branches(join(cwd, 'remotes', `${r}.git`))).toEqual([]);

    const run = await runCli(['recipe.yaml'], { cwd, env });
    expect(run.code, run.stderr).toBe(0);
    const runId = readdirSync(join(cwd, '.orchestrate', 'runs'))[0]!;
    const runDir = join(cwd, '.orchestrate', 'runs', runId);
    const file = readChangesets(runDir)!;
    expect(file.changesets.map((c) => [c.repo, c.state])).toEqual([
      ['work/repo-a', 'unpublished'],
      ['work/repo-b', 'unpublished'],
    ]);
    for (const r of ['repo-a', 'repo-b', 'repo-c']) expect(branches(join(cwd, 'remotes', `${r}.git`))).toEqual([]);

    const preview = await runCli(['publish', runId], { cwd, env });
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toContain('title    repo-b: log() -> logger.info()');
    expect(preview.stdout).toContain('Nothing was pushed.');

    const apply = await runCli(['publish', runId, '--apply'], { cwd, env });
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/refactor\.work-repo-a: pushed/);
    // The apply ends with the next step of the campaign loop (it used to end on the last push).
    expect(apply.stdout.trimEnd().split('\n').at(-1)).toBe(
      `track them: orchestrate status ${runId} (--watch to follow until they are merged)`,
    );
    const bareA = join(cwd, 'remotes', 'repo-a.git');
    expect(branches(bareA)).toEqual([`orchestrate/${runId}/repo-a`]);
    expect(branches(join(cwd, 'remotes', 'repo-c.git'))).toEqual([]);
    const show = execFileSync('git', [
      '--git-dir',
      bareA,
      'show',
      `orchestrate/${runId}/repo-a:src/greet.js`,
    ]).toString();
    expect(show).toContain('logger.info(`hello ${name}`)');
    expect(
      execFileSync('git', ['--git-dir', bareA, 'log', '-1', '--format=%s', `orchestrate/${runId}/repo-a`])
        .toString()
        .trim(),
    ).toBe('Replace log() with logger.info()');

    const again = await runCli(['publish', runId, '--apply'], { cwd, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/refactor\.work-repo-a: unchanged/);
    expect(again.stdout).not.toContain('track them');
    const status = await runCli(['status', runId], { cwd, env });
    expect(status.stdout).toMatch(/refactor\.work-repo-a\s+pushed/);
  });
});
