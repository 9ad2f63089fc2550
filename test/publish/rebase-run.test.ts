// `publish --rebase KEY --apply` when the base branch has not moved: it says so once (the line the
// command prints), runs no agent, and publishing changes nothing. forge: git, bare file:// remotes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { gitForgeRecipe, project, runCampaign } from './campaign-fixtures.js';

describe('publish --rebase on a base that has not moved', () => {
  afterAll(() => cleanupTempDirs());

  it('says nothing to rebase once and changes nothing', async () => {
    const { dir } = project('github', () => 'http://127.0.0.1:1');
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`));
    const runDir = await runCampaign(dir);
    const cli = (...a: string[]) => runCli([...a, '--run-dir', join(dir, 'runs')], { cwd: dir });
    expect((await cli('publish', runDir, '--apply', '--only', 'change.repo-a')).code).toBe(0);
    const r = await cli('publish', runDir, '--rebase', 'change.repo-a', '--apply');
    expect(r.code).toBe(0);
    const said = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes('nothing to rebase'));
    expect(said).toEqual([
      expect.stringMatching(
        /^change\.repo-a: main is still at [0-9a-f]{12}, the commit the change was made on: nothing to rebase$/,
      ),
    ]);
    expect(r.stdout).toMatch(/change\.repo-a: unchanged/);
  });
});
