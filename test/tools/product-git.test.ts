// The coordinator's first product git must not block its event loop (issue 32): bwrap's probe,
// the reading of the user's global git config and the sandbox's .gitconfig are made by child
// processes it awaits, never by spawnSync. This file's module state is fresh (vitest isolates
// files), so the git below is the process's first; spawnSync is wrapped to count its calls.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const syncCalls = vi.hoisted(() => [] as string[]);
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const spawnSync = ((file: string, ...rest: unknown[]) => {
    syncCalls.push(file);
    return (real.spawnSync as (...a: unknown[]) => unknown)(file, ...rest);
  }) as typeof real.spawnSync;
  return { ...real, spawnSync, default: { ...real, spawnSync } };
});

const { productGit } = await import('../../src/tools/product-git.js');
const { probeSandbox, probeSandboxAsync } = await import('../../src/tools/sandbox.js');
const { sandboxGitConfigAsync } = await import('../../src/tools/sandbox-git-config.js');

const dir = mkdtempSync(join(tmpdir(), 'product-git-async-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('product git readiness', () => {
  it('runs the first product git without a blocking child process, with the same probe verdict', async () => {
    execFileSync('git', ['init', '-q', dir], { stdio: 'ignore' });
    const [a, b] = await Promise.all([
      productGit(['rev-parse', '--show-toplevel'], { cwd: dir }),
      productGit(['rev-parse', '--is-inside-work-tree'], { cwd: dir }),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout.toString().trim()).toBe(realpathSync(dir));
    expect(b.stdout.toString().trim()).toBe('true');
    expect(syncCalls).toEqual([]);

    // One verdict per process: the blocking probe reads what the asynchronous one found.
    expect(probeSandbox()).toBe(await probeSandboxAsync());
    // A missing bwrap is told the same way by both (and the wrapper does see spawnSync).
    const missing = join(dir, 'no-bwrap');
    const async = await probeSandboxAsync(missing);
    expect(async).toMatchObject({ ok: false, reason: expect.stringContaining('is not installed') });
    expect(probeSandbox(`${missing}-sync`).reason).toBe(async.reason?.replaceAll(missing, `${missing}-sync`));
    expect(syncCalls).toEqual([`${missing}-sync`]);

    // The sandbox's .gitconfig: the identity only, the last value of each key as `git config --get` reads it.
    const home = join(dir, 'home');
    mkdirSync(home);
    writeFileSync(
      join(home, '.gitconfig'),
      '[user]\n\tname = Ann Lee\n\temail = old@example.com\n\temail = ann@example.com\n[credential]\n\thelper = store\n',
    );
    const made = readFileSync(await sandboxGitConfigAsync({ HOME: home, PATH: process.env.PATH }), 'utf8');
    expect(made).toContain('name = "Ann Lee"');
    expect(made).toContain('email = "ann@example.com"');
    expect(made).not.toMatch(/old@|credential|helper/);
  });
});
