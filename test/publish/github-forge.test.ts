// A GitHub API that cannot be reached (a wrong publish.base_url, the network down) is said as such:
// no answer from its address, with the reason and what to check; Octokit calls it a 500, which
// GitHub never said. The real Octokit client against a port nothing listens on.
import { describe, expect, it } from 'vitest';
import { githubForge } from '../../src/publish/github-forge.js';
import { closedPort } from './fake-forges.js';

describe('GitHub forge errors', () => {
  it('an API nobody answers: no answer from its address, not "500"', async () => {
    const port = await closedPort();
    const forge = githubForge({ token: 'ghp_unusedToken', baseUrl: `http://127.0.0.1:${port}` });
    const err = await forge.get('acme/a', 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toBe(
      `ForgeError: GitHub get pull request #1: no answer from http://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}): check publish.base_url and the network`,
    );
  }, 60_000);
});
