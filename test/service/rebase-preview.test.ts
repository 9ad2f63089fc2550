// `orchestrate publish <run> --rebase [KEY] --dry-run` on a real campaign run (the scripted model
// on real worker threads, a real repository with a bare file:// remote as origin): three
// changesets of one repository, two of whose patches touch shared.txt. The dry run names that
// pair, and for each changeset what moved on main since, as the repository's remote-tracking
// branch knows it (after a git fetch); without one it says it was not checked. Nothing runs,
// nothing is fetched or written: the run folder's bytes stay as they were.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { git } from '../publish/campaign-fixtures.js';

afterAll(() => cleanupTempDirs());

const env = { PATH: process.env.PATH };
const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');
const edit = (path: string, from: string, to: string) =>
  `[{ name: edit, args: { path: ${path}, edits: [{ oldText: "${from}", newText: "${to}" }] } }]`;

function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(p, `${statSync(p).mtimeMs} ${readFileSync(p).toString('base64')}`);
    }
  };
  walk(dir);
  return out;
}

describe('publish --rebase --dry-run', { timeout: 180_000 }, () => {
  let dir: string;
  let repo: string;
  let runDir: string;
  const cli = (...argv: string[]) => runCli([...argv, '--run-dir', join(dir, 'runs')], { cwd: dir, env });
  const bare = () => join(dir, 'remotes', 'repo.git');

  beforeAll(async () => {
    dir = tempProject({
      'repo/shared.txt': `${lines}\n`,
      'repo/other.txt': 'other\n',
      'recipe.yaml': `name: campaign
provider: scripted
script: script.yaml
publish:
  forge: git
  remote: origin
  branch: "campaign/\${{ key }}"
tasks:
  - id: edit
    for_each: [top, bottom, other]
    cwd: repo
    isolation: worktree
    merge: patch
    prompt: "Edit the \${{ item }}"
`,
      'script.yaml': `conversations:
  - match: "Edit the top"
    turns:
      - tools: ${edit('shared.txt', 'line 1\\n', 'top\\n')}
      - text: done
  - match: "Edit the bottom"
    turns:
      - tools: ${edit('shared.txt', 'line 20\\n', 'bottom\\n')}
      - text: done
  - match: "Edit the other"
    turns:
      - tools: ${edit('other.txt', 'other', 'another')}
      - text: done
`,
    });
    repo = join(dir, 'repo');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
    git(dir, 'clone', '-q', '--bare', repo, bare());
    git(repo, 'remote', 'add', 'origin', `file://${bare()}`);
    git(repo, 'fetch', '-q', 'origin');
    const r = await runCli(['recipe.yaml', '--run-dir', 'runs'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    runDir = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
  });

  it('names the pair whose patches overlap, and what moved on the base since, without touching anything', async () => {
    const before = snapshot(runDir);
    const same = await cli('publish', runDir, '--rebase', '--dry-run');
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toContain('edit.top and edit.bottom: shared.txt in repo');
    expect(same.stdout).not.toMatch(/edit\.other and|and edit\.other/);
    expect(same.stdout).toMatch(
      /edit\.other: nothing the patch touches \(refs\/remotes\/origin\/main at [0-9a-f]{12}\)/,
    );

    // main moves on (someone's commit to other.txt), and the repository fetches it.
    const w = join(dir, 'clone');
    git(dir, 'clone', '-q', `file://${bare()}`, w);
    writeFileSync(join(w, 'other.txt'), 'other, changed on main\n');
    git(w, '-c', 'user.name=x', '-c', 'user.email=x@example.com', 'commit', '-qam', 'on main');
    git(w, 'push', '-q', 'origin', 'main');
    git(repo, 'fetch', '-q', 'origin');
    const moved = await cli('publish', runDir, '--rebase', '--dry-run', '--json');
    expect(moved.code, moved.stderr).toBe(0);
    const preview = JSON.parse(moved.stdout) as {
      overlaps: unknown[];
      baseMoved: { key: string; checked: boolean; files?: string[]; ref?: string }[];
    };
    expect(preview.overlaps).toEqual([{ a: 'edit.top', b: 'edit.bottom', repo: 'repo', files: ['shared.txt'] }]);
    expect(preview.baseMoved).toEqual([
      expect.objectContaining({ key: 'edit.top', checked: true, files: [], ref: 'refs/remotes/origin/main' }),
      expect.objectContaining({ key: 'edit.bottom', checked: true, files: [] }),
      expect.objectContaining({ key: 'edit.other', checked: true, files: ['other.txt'] }),
    ]);

    // One key: only the pairs it is in, and its own base.
    const one = await cli('publish', runDir, '--rebase', 'edit.bottom', '--dry-run');
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain('edit.top and edit.bottom: shared.txt in repo');
    expect(one.stdout).not.toContain('edit.other');

    // No remote-tracking branch: not checked, and what to do about it.
    git(repo, 'update-ref', '-d', 'refs/remotes/origin/main');
    const unknown = await cli('publish', runDir, '--rebase', 'edit.other', '--dry-run');
    expect(unknown.code, unknown.stderr).toBe(0);
    expect(unknown.stdout).toContain('edit.other: not checked: where main is now is not known on this machine');

    expect(snapshot(runDir)).toEqual(before);
    expect(events(runDir).some((e) => e.type === 'instance_rebase_start')).toBe(false);
  });

  it('--dry-run without --rebase, or with --apply, is a usage mistake; an unknown key too', async () => {
    const alone = await cli('publish', runDir, '--dry-run');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--dry-run previews a rebase: add --rebase');
    const apply = await cli('publish', runDir, '--rebase', 'edit.top', '--dry-run', '--apply');
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain('leave out --apply');
    const unknown = await cli('publish', runDir, '--rebase', 'edit.nope', '--dry-run');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no changeset "edit.nope"');
    expect(unknown.stderr).toContain('changesets: edit.top, edit.bottom, edit.other');
  });
});
