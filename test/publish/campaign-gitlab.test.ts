// A campaign published to a strict fake GitLab API (REST v4 through fetch): two draft merge
// requests for the two changed repositories, none for the third; applying again changes
// nothing; status reads the head pipeline; the token appears in no output and no run file.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { runPublishing } from '../../src/publish/run-publishing.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { GL_TOKEN, REPOS, filesUnder, project, recipe } from './campaign-fixtures.js';
import { type FakeGitLab, fakeGitLab } from './fake-forges.js';

describe('campaign on GitLab', () => {
  let gl: FakeGitLab;
  let dir: string;
  afterAll(async () => {
    await gl?.close();
    cleanupTempDirs();
  });

  it('--apply opens two draft merge requests; applying again changes nothing; status reads the pipeline', async () => {
    dir = project('gitlab', () => 'http://127.0.0.1:1/api/v4').dir;
    gl = await fakeGitLab(
      GL_TOKEN,
      Object.fromEntries(REPOS.map((r) => [`acme/${r}`, join(dir, 'remotes', `${r}.git`)])),
    );
    writeFileSync(join(dir, 'recipe.yaml'), recipe(dir, 'gitlab', `${gl.url}/api/v4`, 'Change ${{ repo.name }}'));
    const run = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { ...runPublishing(), runsDir: join(dir, 'runs') },
    );
    if (!run.ok) throw new Error(JSON.stringify(run));
    const env = { PATH: process.env.PATH, GITLAB_TOKEN: GL_TOKEN };
    const opts = { cwd: dir, env };
    const runs = ['--run-dir', join(dir, 'runs')];
    const first = await runCli(['publish', run.outcome.dir, '--apply', ...runs], opts);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(gl.pulls.map((p) => [p.repo, p.head, p.title, p.labels])).toEqual([
      ['acme/repo-a', 'campaign/repo-a', 'Draft: Change repo-a', ['campaign']],
      ['acme/repo-b', 'campaign/repo-b', 'Draft: Change repo-b', ['campaign']],
    ]);
    const writes = gl.writes.length;
    const again = await runCli(['publish', run.outcome.dir, '--apply', ...runs], opts);
    expect(again.code).toBe(0);
    expect(gl.writes.length).toBe(writes);
    gl.setPipeline('acme/repo-a', 1, 'failed');
    const status = await runCli(['status', run.outcome.dir, '--json', ...runs], opts);
    const s = JSON.parse(status.stdout) as { changesets: { state: string; checks: string }[] };
    expect(s.changesets.map((c) => [c.state, c.checks])).toEqual([
      ['draft', 'failing'],
      ['draft', 'none'],
    ]);
    for (const o of [first, again, status]) expect(o.stdout + o.stderr).not.toContain(GL_TOKEN);
    for (const f of filesUnder(run.outcome.dir)) expect(readFileSync(f).includes(GL_TOKEN), f).toBe(false);
  });
});
