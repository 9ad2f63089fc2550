// Follow-up on GitLab (REST v4 through fetch, against the strict fake): `publish --follow-up`
// previews a failed pipeline's job by the end of its trace; `status --follow-up` looks, then sends a
// diff discussion back to repo-b's agent (a new commit on top of the branch, the discussion
// answered once) and turns on "merge when the pipeline succeeds" for repo-a, which the forge then
// merges once its pipeline passes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ANSWER_MARK } from '../../src/publish/forge.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { CAMPAIGN_SCRIPT, GL_TOKEN, REPOS, git, project, recipe, runCampaign } from './campaign-fixtures.js';
import { type FakeGitLab, fakeGitLab } from './fake-forges.js';

const SCRIPT = `conversations:
  - match: "A reviewer asked for changes[\\\\s\\\\S]*Change repo-b[\\\\s\\\\S]*Use a capital letter"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "howdy", newText: "Howdy" }] } }]
      - text: "repo-b: capitalised"
${CAMPAIGN_SCRIPT.replace(/^conversations:\n/, '')}`;

describe('campaign follow-up on GitLab', () => {
  let gl: FakeGitLab | undefined;
  afterAll(async () => {
    await gl?.close();
    cleanupTempDirs();
  });

  it('previews a failed job by its trace; status --follow-up answers a discussion with a new commit and turns on merge when the pipeline succeeds', async () => {
    const { dir } = project('gitlab', () => 'http://127.0.0.1:1/api/v4');
    const bare = (r: string) => join(dir, 'remotes', `${r}.git`);
    gl = await fakeGitLab(GL_TOKEN, Object.fromEntries(REPOS.map((r) => [`acme/${r}`, bare(r)])));
    const spec = recipe(dir, 'gitlab', `${gl.url}/api/v4`, 'Change ${{ repo.name }}')
      .replace(/\n {2}labels: \[campaign\]/, '')
      .replace(
        '\n  body:',
        '\n  draft: false\n  follow_up: { on: [ci_failed, changes_requested] }\n  merge_when: [ci_passed]\n  body:',
      );
    writeFileSync(join(dir, 'recipe.yaml'), spec);
    writeFileSync(join(dir, 'script.yaml'), SCRIPT);
    const runDir = await runCampaign(dir);
    const env = { PATH: process.env.PATH, GITLAB_TOKEN: GL_TOKEN };
    const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir, env });
    expect((await cli('publish', runDir, '--apply')).code).toBe(0);

    gl.setPipeline('acme/repo-a', 1, 'failed', [
      {
        name: 'test',
        status: 'failed',
        trace: 'Running tests\n\x1b[31mFAIL\x1b[0m greet: wrong word\nERROR: Job failed: exit code 1\n',
      },
      { name: 'build', status: 'success', trace: 'ok\n' },
    ]);
    const preview = await cli('publish', runDir, '--follow-up');
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain(
      'change.repo-a: preview  would send back:\nCheck "test" failed: script_failure (https://gitlab.example/acme/repo-a/-/jobs/',
    );
    expect(preview.stdout).toContain('FAIL greet: wrong word\nERROR: Job failed: exit code 1');
    expect(preview.stdout).not.toContain('"build"');

    const before = git(bare('repo-b'), 'rev-parse', 'campaign/repo-b').trim();
    gl.setPipeline('acme/repo-a', 1, 'running');
    gl.setPipeline('acme/repo-b', 1, 'success');
    gl.discuss('acme/repo-b', 'campaign/repo-b', 'maintainer', 'greet.txt', 1, 'Use a capital letter');
    const r = await cli('status', runDir, '--follow-up');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('change.repo-a: auto merge');
    expect(r.stdout).toMatch(/change\.repo-b: followed up {2}[0-9a-f]{12} on campaign\/repo-b/);
    expect(git(bare('repo-b'), 'rev-parse', 'campaign/repo-b^').trim()).toBe(before);
    expect(git(bare('repo-b'), 'show', 'campaign/repo-b:greet.txt')).toBe('Howdy from repo-b\n');
    const notes = gl.ci.discussions.flatMap((d) => d.notes);
    expect(notes.map((n) => [n.author, n.body.includes(ANSWER_MARK)])).toEqual([
      ['maintainer', false],
      ['orchestrate-bot', true],
    ]);
    expect(gl.pulls.find((p) => p.repo === 'acme/repo-a')?.merged).toBe(false);

    // Again, with repo-b's new commit in its pipeline: nothing is answered twice, its auto-merge goes
    // on; repo-a's pipeline passes and the forge merges it.
    gl.setPipeline('acme/repo-b', 1, 'running');
    const again = await cli('status', runDir, '--follow-up');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('change.repo-b: auto merge');
    expect(gl.ci.discussions.flatMap((d) => d.notes)).toHaveLength(2);
    gl.setPipeline('acme/repo-a', 1, 'success');
    const s = JSON.parse((await cli('status', runDir, '--json')).stdout) as {
      changesets: { state: string; autoMerge?: boolean }[];
    };
    expect(s.changesets.map((c) => [c.state, c.autoMerge])).toEqual([
      ['merged', true],
      ['open', true],
    ]);
  });
});
