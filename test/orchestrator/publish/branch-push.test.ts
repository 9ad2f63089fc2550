// Where a push goes and what it carries: a remote URL holding credentials or an ssh remote is
// refused with what to do; ./ paths resolve from the run's root; the token's Authorization header
// is only configured for a remote on the forge's own host (a remote the model redirected to
// another host gets none); secrets are cut out of error text.
import { describe, expect, it } from 'vitest';
import { pushTransport, resolveRemote } from '../../../src/orchestrator/publish/branch-push.js';
import { pushAuthHeader, repositoryFromUrl, withoutSecrets } from '../../../src/orchestrator/publish/forge.js';

const auth = { host: 'github.com', header: pushAuthHeader('github', 'ghp_secret1234') };

describe('publishing remotes', () => {
  it('refuses credentials in the URL and ssh remotes; ./ paths are local, from the root', async () => {
    const cred = await resolveRemote('/nowhere', 'https://me:ghp_x@github.com/acme/a.git', '/root');
    expect(cred).toMatchObject({ ok: false, error: expect.stringContaining('holds credentials') });
    const ssh = await resolveRemote('/nowhere', 'git@github.com:acme/a.git', '/root');
    expect(ssh).toMatchObject({ ok: false, error: expect.stringContaining('ssh is not supported') });
    expect(await resolveRemote('/nowhere', './remotes/a.git', '/root')).toEqual({
      ok: true,
      url: '/root/remotes/a.git',
      localPath: '/root/remotes/a.git',
    });
    expect(await resolveRemote('/nowhere', 'file:///srv/a.git', '/root')).toEqual({
      ok: true,
      url: 'file:///srv/a.git',
      localPath: '/srv/a.git',
    });
  });

  it("sends the token's header only to the forge's host", () => {
    const own = pushTransport('https://github.com/acme/a.git', undefined, auth);
    expect(own).toEqual({
      network: true,
      config: [['http.https://github.com/acme/a.git.extraHeader', `Authorization: ${auth.header}`]],
    });
    expect(pushTransport('https://evil.example/acme/a.git', undefined, auth)).toEqual({ network: true, config: [] });
    expect(pushTransport('/srv/a.git', '/srv/a.git', auth)).toEqual({ writable: ['/srv/a.git'] });
  });

  it('reads owner/name from an https remote and cuts secrets out of messages', () => {
    expect(repositoryFromUrl('https://github.com/acme/a.git')).toBe('acme/a');
    expect(repositoryFromUrl('https://gitlab.example/group/sub/a')).toBe('group/sub/a');
    expect(withoutSecrets('failed with ghp_secret1234 in it', ['ghp_secret1234'])).toBe('failed with [redacted] in it');
  });
});
