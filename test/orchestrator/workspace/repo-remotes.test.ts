// The remotes recorded before any agent ran (repo-remotes.ts) and how publishing resolves a
// remote's name from them: credentials never recorded, names with dots, a repository without
// remotes, the record kept across a later start without one, and the fallback for a run recorded
// before there were records (the repository as it is now, with a warning naming the risk).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveRemote } from '../../../src/publish/branch-push.js';
import {
  readRemotes,
  recordedRemotes,
  remotesFromConfig,
  withoutCredentials,
} from '../../../src/orchestrator/workspace/repo-remotes.js';
import type { RunEvent } from '../../../src/run/run-events.js';
import { foldEvents } from '../../../src/run/run-fold.js';
import { cleanupTempDirs, gitInit, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' }).toString();

describe('recorded remotes', () => {
  it('drops credentials: all userinfo of https, the password of ssh', () => {
    expect(withoutCredentials('https://bot:tok@git.example.com/a.git')).toBe('https://git.example.com/a.git');
    expect(withoutCredentials('https://tok@git.example.com/a.git')).toBe('https://git.example.com/a.git');
    expect(withoutCredentials('ssh://git:pw@host:22/a.git')).toBe('ssh://git@host:22/a.git');
    expect(withoutCredentials('ssh://git@host/a.git')).toBe('ssh://git@host/a.git');
    expect(withoutCredentials('git@github.com:acme/a.git')).toBe('git@github.com:acme/a.git');
    expect(withoutCredentials('/srv/a.git')).toBe('/srv/a.git');
    expect(remotesFromConfig('remote.up.stream.url\nhttps://u:p@h/x.git\0remote.origin.url\n/srv/a.git\0')).toEqual({
      'up.stream': 'https://h/x.git',
      origin: '/srv/a.git',
    });
  });

  it("reads a repository's remotes through the product's git; none is an empty record", async () => {
    const dir = tempProject({ 'repo/a.txt': 'a\n' });
    const repo = join(dir, 'repo');
    gitInit(repo);
    expect(await readRemotes(repo)).toEqual({});
    git(repo, 'remote', 'add', 'origin', '/srv/origin.git');
    git(repo, 'remote', 'add', 'my.fork', 'https://me:s3cret@example.com/fork.git');
    expect(await readRemotes(join(repo))).toEqual({
      origin: '/srv/origin.git',
      'my.fork': 'https://example.com/fork.git',
    });
  });

  it("resolves a name from the record, not from the repository's config as it is now", async () => {
    const dir = tempProject({ 'repo/a.txt': 'a\n' });
    const repo = join(dir, 'repo');
    gitInit(repo);
    git(repo, 'remote', 'add', 'origin', join(dir, 'elsewhere.git'));
    const recorded = { origin: join(dir, 'origin.git') };
    const r = await resolveRemote(repo, 'origin', dir, 'git', undefined, undefined, recorded);
    expect(r).toEqual({ ok: true, url: join(dir, 'origin.git'), via: 'local', localPath: join(dir, 'origin.git') });
    // A remote the agent added is not one the repository had.
    git(repo, 'remote', 'add', 'added', join(dir, 'added.git'));
    expect(await resolveRemote(repo, 'added', dir, 'git', undefined, undefined, recorded)).toEqual({
      ok: false,
      error: `${repo} had no remote "added" when the run started (it had "origin"); set publish.remote to a URL or to one of those`,
    });
    // A run recorded before records: the repository as it is now, with a warning naming the risk.
    const old = await resolveRemote(repo, 'origin', dir, 'git');
    expect(old).toMatchObject({ ok: true, url: join(dir, 'elsewhere.git') });
    expect(old.ok && old.warning).toMatch(
      /recorded before orchestrate kept each repository's remotes.*could have changed it/,
    );
  });

  it("the fold keeps an instance's record; another instance of the repository lends its own", () => {
    const base = { v: 1, ts: 1, runId: 'r', task: 't', parent: 't' } as const;
    const start = (key: string, attempt: number, remotes?: Record<string, string>) =>
      ({
        ...base,
        type: 'instance_start',
        key,
        attempt,
        baseTree: 'a'.repeat(40),
        repoRoot: 'repo',
        ...(remotes ? { remotes } : {}),
      }) as RunEvent;
    const fold = foldEvents([
      start('t.a', 1, { origin: '/srv/o.git' }),
      // A later start without a record (a publish --rebase re-run) keeps the first one.
      start('t.a', 2),
      start('t.b', 1),
    ]);
    expect(recordedRemotes(fold, 't', 't.a')).toEqual({ origin: '/srv/o.git' });
    expect(recordedRemotes(fold, 't', 't.b')).toEqual({ origin: '/srv/o.git' });
    expect(recordedRemotes(foldEvents([start('t.c', 1)]), 't', 't.c')).toBeUndefined();
  });
});
