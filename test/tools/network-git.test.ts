// The product's network git (tools/network-git.ts) with real git and real repositories: it runs
// in a git folder of its own that reads the workspace's objects (and their alternates, as a
// `git clone --shared` has) but none of its config, pushes a commit of the workspace to a local
// bare repository, fetches a branch and keeps its objects in the workspace's store, and refuses a
// `.git` symlink leading out of the workspace.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkspaceRepositoryError, withNetworkGit, workspaceObjectStore } from '../../src/tools/network-git.js';

const root = mkdtempSync(join(tmpdir(), 'orch-netgit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
    .toString()
    .trim();

function repoWithCommit(name: string): string {
  const dir = join(root, name);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  writeFileSync(join(dir, 'a.txt'), `${name}\n`);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', name);
  return dir;
}

describe('network git', () => {
  it("reads objects through the workspace's alternates and none of its config", async () => {
    const origin = repoWithCommit('origin');
    const shared = join(root, 'shared');
    git(root, 'clone', '-q', '--shared', origin, shared);
    const head = git(shared, 'rev-parse', 'HEAD');
    // The clone's objects live in origin's store only (alternates), and its config says odd things.
    git(shared, 'config', 'remote.pushDefault', 'nowhere');
    git(shared, 'config', 'user.name', 'from the workspace');
    const bare = join(root, 'remote.git');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    const listed = await withNetworkGit(shared, [], async (g) => {
      const pushed = await g.git(['push', '-q', bare, `${head}:refs/heads/x`], { kind: 'local', path: bare });
      expect(pushed.stderr).toBe('');
      expect(pushed.code).toBe(0);
      return g.git(['config', '--list', '--show-origin'], { kind: 'local', path: bare });
    });
    expect(git(bare, 'rev-parse', 'refs/heads/x')).toBe(head);
    const config = listed.stdout.toString('utf8');
    expect(config).not.toContain('from the workspace');
    expect(config).not.toContain('nowhere');
    expect(config).not.toMatch(/^file:[^\t]*shared/m);
  });

  it("a fetched branch's objects are kept in the workspace's store", async () => {
    const work = repoWithCommit('work');
    const upstream = join(root, 'upstream.git');
    git(root, 'clone', '-q', '--bare', work, upstream);
    const other = join(root, 'other');
    git(root, 'clone', '-q', upstream, other);
    writeFileSync(join(other, 'b.txt'), 'new\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-qm', 'new');
    git(other, 'push', '-q', 'origin', 'main');
    const tip = git(other, 'rev-parse', 'HEAD');
    const base = git(work, 'rev-parse', 'HEAD');
    await withNetworkGit(work, [base], async (g) => {
      const r = await g.git(['fetch', '-q', upstream, 'refs/heads/main:refs/fetched'], {
        kind: 'local',
        path: upstream,
      });
      expect(r.code).toBe(0);
      g.keepFetched();
    });
    expect(git(work, 'cat-file', '-t', tip)).toBe('commit');
    expect(git(work, 'show', `${tip}:b.txt`)).toBe('new');
  });

  it('refuses a .git symlink that leads out of the workspace', () => {
    const elsewhere = repoWithCommit('elsewhere');
    const ws = join(root, 'ws');
    execFileSync('mkdir', [ws]);
    symlinkSync(join(elsewhere, '.git'), join(ws, '.git'));
    expect(() => workspaceObjectStore(ws)).toThrow(WorkspaceRepositoryError);
    expect(() => workspaceObjectStore(ws)).toThrow(/outside the repository/);
    expect(workspaceObjectStore(elsewhere).objects).toMatch(/elsewhere\/\.git\/objects$/);
  });
});
