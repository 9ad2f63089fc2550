// How a publish remote travels, decided from the recipe alone: git's URL forms (https, ssh://,
// scp-like git@host:path, file://, paths, a remote's name) are told apart as git tells them; a
// github/gitlab forge's ssh address is the same repository over https (the token's transport),
// another host's is refused; `forge: git` keeps ssh. `orchestrate validate` states the transport
// of each publish target before anything runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRemote, remoteTransport, transportStatement } from '../../src/recipe/publish-transport.js';
import { runCli } from '../cli/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-publish-transport-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('publish remotes and their transport', () => {
  it("tells git's URL forms apart", () => {
    expect(parseRemote('https://github.com/acme/a.git')).toEqual({
      kind: 'https',
      host: 'github.com',
      path: 'acme/a.git',
    });
    expect(parseRemote('git@github.com:acme/a.git')).toEqual({
      kind: 'ssh',
      host: 'github.com',
      path: 'acme/a.git',
      user: 'git',
    });
    expect(parseRemote('ssh://git@host.example:2222/~/srv/a.git')).toEqual({
      kind: 'ssh',
      host: 'host.example',
      path: 'srv/a.git',
      user: 'git',
      port: '2222',
    });
    expect(parseRemote('host.example:a.git')).toEqual({ kind: 'ssh', host: 'host.example', path: 'a.git' });
    expect(parseRemote('file:///srv/a.git')).toEqual({ kind: 'local', path: 'file:///srv/a.git' });
    expect(parseRemote('./remotes/a:b.git')).toEqual({ kind: 'local', path: './remotes/a:b.git' });
    expect(parseRemote('origin')).toEqual({ kind: 'name', name: 'origin' });
    expect(parseRemote('http://github.com/acme/a.git')).toEqual({ kind: 'unsupported', scheme: 'http' });
  });

  it("a forge's ssh address is pushed over https to its host; forge: git keeps ssh", () => {
    expect(remoteTransport('github', undefined, 'git@github.com:acme/a')).toEqual({
      ok: true,
      via: 'https',
      url: 'https://github.com/acme/a.git',
    });
    expect(remoteTransport('github', 'https://127.0.0.1:8443/api/v3', 'git@127.0.0.1:acme/a.git')).toEqual({
      ok: true,
      via: 'https',
      url: 'https://127.0.0.1:8443/acme/a.git',
    });
    expect(remoteTransport('gitlab', undefined, 'git@github.com:acme/a.git')).toMatchObject({
      ok: false,
      error: expect.stringContaining('not on gitlab.com'),
    });
    expect(remoteTransport('git', undefined, 'git@github.com:acme/a.git')).toEqual({
      ok: true,
      via: 'ssh',
      url: 'git@github.com:acme/a.git',
    });
  });

  it('states the transport of a remote, templates included', () => {
    expect(transportStatement('github', undefined, 'https://github.com/acme/${{ repo.name }}.git')).toBe(
      'https with the github token (sent to github.com only)',
    );
    expect(transportStatement('github', undefined, 'git@github.com:acme/${{ repo.name }}.git')).toMatch(
      /^https with the github token \(the forge's ssh address/,
    );
    expect(transportStatement('gitlab', undefined, 'git@github.com:acme/x.git')).toMatch(/^refused when publishing/);
    expect(transportStatement('git', undefined, 'ssh://git@h.example/${{ repo.name }}')).toMatch(
      /^ssh with your ssh agent/,
    );
    expect(transportStatement('git', undefined, './remotes/${{ repo.name }}.git')).toBe(
      'a local repository (no network)',
    );
    // The URL origin had when the run started (recorded before any agent ran): no warning to give any more.
    expect(transportStatement('git', undefined, 'origin')).toMatch(
      /^each repository's remote "origin" as it was when the run started: https → /,
    );
    expect(transportStatement('git', undefined, 'origin')).not.toMatch(/rewrite/);
    expect(transportStatement('github', undefined, '${{ inputs.url }}')).toMatch(/^each repository's URL/);
  });

  it('validate says how each publish target travels', async () => {
    const file = join(dir, 'r.yaml');
    writeFileSync(
      file,
      `name: p
publish:
  forge: github
  remote: git@github.com:acme/\${{ repo.name }}.git
tasks:
  - id: change
    prompt: "change it"
  - id: mirror
    prompt: "mirror it"
    publish:
      forge: git
      remote: ssh://git@mirror.example/srv/\${{ repo.name }}.git
`,
    );
    const r = await runCli(['validate', file], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "publish change: forge github, remote git@github.com:acme/${{ repo.name }}.git → https with the github token (the forge's ssh address is pushed over https)",
    );
    expect(r.stdout).toMatch(
      /publish mirror: forge git, remote ssh:\/\/git@mirror\.example\/.* → ssh with your ssh agent/,
    );
    const j = await runCli(['validate', file, '--json'], { cwd: dir });
    expect(JSON.parse(j.stdout).publish.map((p: { tasks: string[] }) => p.tasks)).toEqual([['change'], ['mirror']]);
  });
});
