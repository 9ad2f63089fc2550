// A recipe's publish.draft changed after its pull requests were opened: the next `publish --apply`
// flips each open pull request in place, with one state-changing request and no new pull request.
// GitHub: REST's PATCH /pulls ignores `draft` (the strict fake does too), so the flip must go
// through GraphQL's markPullRequestReadyForReview / convertPullRequestToDraft. GitLab: the
// "Draft: " title prefix is the draft state. One run serves both forges: task `gh` publishes
// repo-a to the fake GitHub, task `gl` repo-b to the fake GitLab.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { runPublishing } from '../../src/publish/run-publishing.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { GL_TOKEN, REPOS, TOKEN, project, withoutReloadNotice } from './campaign-fixtures.js';
import { type FakeGitHub, type FakeGitLab, fakeGitHub, fakeGitLab } from './fake-forges.js';

const recipe = (dir: string, gh: string, gl: string, draft: boolean) => `name: drafts
provider: scripted
script: script.yaml
agents:
  editor: { tools: [read, edit] }
publish:
  remote: file://${dir}/remotes/\${{ repo.name }}.git
  repository: acme/\${{ repo.name }}
  branch: campaign/\${{ repo.name }}
  title: "Change \${{ repo.name }}"
  draft: ${draft}
tasks:
  - id: gh
    agent: editor
    for_each: [repo-a]
    cwd: \${{ item }}
    prompt: "Change \${{ item }}"
    publish: { forge: github, base_url: "${gh}" }
  - id: gl
    agent: editor
    for_each: [repo-b]
    cwd: \${{ item }}
    prompt: "Change \${{ item }}"
    publish: { forge: gitlab, base_url: "${gl}/api/v4" }
`;

describe('publish --apply after draft: changed', () => {
  let gh: FakeGitHub | undefined;
  let gl: FakeGitLab | undefined;
  afterAll(async () => {
    await gh?.close();
    await gl?.close();
    cleanupTempDirs();
  });

  it('flips the open pull / merge requests in place: one request each, no new one; again: none', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:9');
    const remotes = Object.fromEntries(REPOS.map((r) => [`acme/${r}`, join(dir, 'remotes', `${r}.git`)]));
    gh = await fakeGitHub(TOKEN, remotes);
    gl = await fakeGitLab(GL_TOKEN, remotes);
    const write = (draft: boolean) => writeFileSync(join(dir, 'recipe.yaml'), recipe(dir, gh!.url, gl!.url, draft));
    write(true);
    const run = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { ...runPublishing(), runsDir: join(dir, 'runs') },
    );
    if (!run.ok) throw new Error(JSON.stringify(run));
    const env = { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN, GITLAB_TOKEN: GL_TOKEN };
    const apply = () =>
      // The recipe's draft: is edited between applies: --reload-recipe takes it over the run's captured copy.
      runCli(['publish', run.outcome.dir, '--apply', '--reload-recipe', '--run-dir', join(dir, 'runs')], {
        cwd: dir,
        env,
      });
    const drafts = () => [...gh!.pulls, ...gl!.pulls].map((p) => [p.repo, p.number, p.title, p.draft]);
    const writesSince = (g: number, l: number) => [...gh!.writes.slice(g), ...gl!.writes.slice(l)];

    const opened = await apply();
    expect(withoutReloadNotice(opened.stderr)).toBe('');
    expect(drafts()).toEqual([
      ['acme/repo-a', 1, 'Change repo-a', true],
      ['acme/repo-b', 1, 'Draft: Change repo-b', true],
    ]);

    write(false);
    let g = gh.writes.length;
    let l = gl.writes.length;
    const ready = await apply();
    expect(ready.code).toBe(0);
    expect(ready.stdout).toMatch(/gh\.repo-a: updated/);
    expect(ready.stdout).toMatch(/gl\.repo-b: updated/);
    expect(writesSince(g, l)).toEqual([
      'POST /graphql markPullRequestReadyForReview',
      'PUT /api/v4/projects/acme%2Frepo-b/merge_requests/1',
    ]);
    expect(drafts()).toEqual([
      ['acme/repo-a', 1, 'Change repo-a', false],
      ['acme/repo-b', 1, 'Change repo-b', false],
    ]);

    g = gh.writes.length;
    l = gl.writes.length;
    const again = await apply();
    expect(again.stdout).toMatch(/gh\.repo-a: unchanged/);
    expect(writesSince(g, l)).toEqual([]);

    write(true);
    const back = await apply();
    expect(back.code).toBe(0);
    expect(writesSince(g, l)).toEqual([
      'POST /graphql convertPullRequestToDraft',
      'PUT /api/v4/projects/acme%2Frepo-b/merge_requests/1',
    ]);
    expect(drafts()).toEqual([
      ['acme/repo-a', 1, 'Change repo-a', true],
      ['acme/repo-b', 1, 'Draft: Change repo-b', true],
    ]);
    for (const o of [opened, ready, again, back]) {
      expect(o.stdout + o.stderr).not.toContain(TOKEN);
      expect(o.stdout + o.stderr).not.toContain(GL_TOKEN);
    }
  });
});
