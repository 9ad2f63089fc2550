// A campaign's changesets as `orchestrate publish` leaves them in a run folder (changesets.json):
// one fixture for the views, `status` and the web tests that read them (issue #43). Each test
// passes what its changesets have of their own (time, pull request, forge URL).
import { type Changeset, writeChangesets } from '../../src/run/changesets.js';

/** Repo `repo`'s published changeset of task `change` (acme/<repo> on github.example, branch campaign/<repo>). */
export function publishedChangeset(repo: string, own: Partial<Changeset> & Pick<Changeset, 'doneTs'>): Changeset {
  return {
    key: `change.${repo}`,
    task: 'change',
    instance: repo,
    forge: 'github',
    repo,
    remote: `https://github.example/acme/${repo}.git`,
    repository: `acme/${repo}`,
    branch: `campaign/${repo}`,
    base: 'main',
    baseCommit: '0'.repeat(40),
    patchFile: `patches/${repo}.diff`,
    title: `Change ${repo}`,
    body: '',
    commitMessage: `Change ${repo}`,
    draft: true,
    labels: [],
    reviewers: [],
    diffstat: { files: 2, insertions: 5, deletions: 1 },
    state: 'published',
    pr: { number: 7, url: `https://github.example/acme/${repo}/pull/7` },
    ...own,
  };
}

/** changesets.json of run r1 holding `changesets`. */
export function writeCampaignChangesets(runDir: string, updatedAt: number, changesets: Changeset[]): void {
  writeChangesets(runDir, { version: 1, runId: 'r1', updatedAt, changesets });
}
