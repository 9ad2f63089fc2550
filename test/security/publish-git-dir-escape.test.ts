// #37 item 6, the publishing part: the model can rewrite its repository's `.git` (a `.git` file
// saying `gitdir: x`, or a `commondir` naming another repository). `orchestrate publish --apply`
// must then neither write the change's commit into that other repository nor push from it: it
// refuses with what is wrong and where, and the other repository and the remote are unchanged.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { git, gitForgeRecipe, project, remoteBranches, runCampaign } from '../publish/campaign-fixtures.js';

/** Every object and ref of a repository, to tell that nothing was written into it. */
function contents(repo: string): string {
  return git(repo, 'count-objects', '-v') + git(repo, 'for-each-ref', '--format=%(objectname) %(refname)');
}

describe('publish refuses a .git or commondir that leads out of the repository (#37)', () => {
  let dir: string;
  let runDir: string;
  let victim: string;

  beforeAll(async () => {
    dir = project('github', () => 'http://127.0.0.1:1').dir;
    writeFileSync(join(dir, 'recipe.yaml'), gitForgeRecipe(dir, `file://${dir}/remotes/\${{ repo.name }}.git`));
    runDir = await runCampaign(dir);
    // Another repository on the machine, which the run was never given.
    victim = tempProject({ 'secret.txt': 'not yours\n' });
    git(victim, 'init', '-q', '-b', 'main');
    git(victim, 'add', '-A');
    git(victim, '-c', 'user.name=v', '-c', 'user.email=v@example.com', 'commit', '-qm', 'victim');
    // What the model writes: repo-a's git folder shares the victim's store (commondir), and
    // repo-b's .git becomes a file naming the victim's git folder.
    writeFileSync(join(dir, 'repo-a', '.git', 'commondir'), `${join(victim, '.git')}\n`);
    renameSync(join(dir, 'repo-b', '.git'), join(dir, 'repo-b-git-moved'));
    writeFileSync(join(dir, 'repo-b', '.git'), `gitdir: ${join(victim, '.git')}\n`);
  });
  afterAll(() => cleanupTempDirs());

  it('refuses both with the reason, and writes nothing into the other repository or the remotes', async () => {
    const before = contents(victim);
    const r = await runCli(['publish', runDir, '--apply'], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toMatch(
      /change\.repo-a: failed .*repo-a is not one orchestrate trusts: .*commondir names .*another repository's objects/,
    );
    expect(r.stdout).toMatch(
      /change\.repo-b: failed .*repo-b is not one orchestrate trusts: .*\.git names .*, outside its work tree/,
    );
    expect(contents(victim)).toBe(before);
    expect(remoteBranches(dir, 'repo-a')).toEqual(['refs/heads/main']);
    expect(remoteBranches(dir, 'repo-b')).toEqual(['refs/heads/main']);
  });
});
