// A GitLab API that cannot be reached (a wrong publish.base_url, the network down) is said as such:
// no answer from its address with the reason (fetch itself says only "fetch failed") and what to
// check. The real client against a port nothing listens on.
import { describe, expect, it } from 'vitest';
import { gitlabForge } from '../../src/publish/gitlab-forge.js';
import { closedPort } from './fake-forges.js';

describe('GitLab forge errors', () => {
  it('an API nobody answers: no answer from its address, with why', async () => {
    const port = await closedPort();
    const forge = gitlabForge({ token: 'glpat-unused', baseUrl: `http://127.0.0.1:${port}/api/v4` });
    const err = await forge.get('acme/a', 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toMatch(
      new RegExp(
        `^ForgeError: GitLab .*: no answer from http://127\\.0\\.0\\.1:${port} \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): check publish\\.base_url and the network$`,
      ),
    );
  }, 60_000);
});
