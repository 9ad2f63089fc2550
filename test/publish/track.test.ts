// `orchestrate status` of a `forge: git` campaign whose remotes are new and empty (as `orchestrate
// init batch-refactor` makes them): the pushed branches are there, the base branch is not. Each
// changeset is pushed and not merged, with a note naming the missing branch, and the look
// succeeds; a remote that cannot be read at all is still an error (exit 1).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangesetStatus } from '../../src/publish/track.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { git, gitForgeRecipe, project, runCampaign } from './campaign-fixtures.js';

describe('status of a forge: git campaign on remotes without the base branch', () => {
  let dir = '';
  let runDir = '';
  const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir });
  beforeAll(async () => {
    ({ dir } = project('github', () => 'http://127.0.0.1:1'));
    // Empty bare remotes instead of clones holding main.
    for (const r of ['repo-a', 'repo-b', 'repo-c']) {
      const bare = join(dir, 'remotes', `${r}.git`);
      rmSync(bare, { recursive: true, force: true });
      git(dir, 'init', '-q', '--bare', bare);
    }
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`));
    runDir = await runCampaign(dir);
    const pushed = await cli('publish', runDir, '--apply');
    expect(pushed.stderr).toBe('');
    expect(pushed.code).toBe(0);
  });
  afterAll(() => cleanupTempDirs());

  it('says pushed, not merged, names the missing branch, and exits 0', async () => {
    const json = await cli('status', runDir, '--json');
    expect(json.code).toBe(0);
    const s = JSON.parse(json.stdout) as { changesets: ChangesetStatus[] };
    expect(s.changesets.map((c) => [c.key, c.state, c.error])).toEqual([
      ['change.repo-a', 'pushed', undefined],
      ['change.repo-b', 'pushed', undefined],
    ]);
    const text = await cli('status', runDir);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('cannot fetch');
    expect(text.stderr).toContain(`change.repo-a: file://${dir}/remotes/repo-a.git has no branch main`);
    expect(text.stderr).toContain('set publish.base');
  });

  it('a remote that cannot be read is still a failed look (exit 1)', async () => {
    rmSync(join(dir, 'remotes', 'repo-b.git', 'objects'), { recursive: true, force: true });
    const text = await cli('status', runDir);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/change\.repo-b .*cannot fetch main/);
  });
});
