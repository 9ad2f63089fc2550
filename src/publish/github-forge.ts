// GitHub (and GitHub Enterprise through publish.base_url) as a Forge, through @octokit/rest with
// the throttling plugin (primary and secondary rate limits: waits as GitHub asks, writes spaced
// as its guidelines say) and the retry plugin (server errors retried with backoff). Octokit's
// own logging is silenced: nothing it would print reaches the user's terminal or the run folder.
// CI is read from both of GitHub's kinds (check runs and commit statuses), a failing Actions job's
// log from the Actions logs API, review comments from the pulls comments API; auto-merge is
// GraphQL's enablePullRequestAutoMerge (a pull request with nothing left to wait for is merged).
// Octokit is loaded on the first call, not with this module: every `orchestrate run` imports
// publish/, and most runs never talk to GitHub.
// Types only (erased): they also bring the plugins' options (throttle, retry) into Octokit's.
import type { ThrottlingOptions } from '@octokit/plugin-throttling';
import type {} from '@octokit/plugin-retry';
import {
  ANSWER_MARK,
  type CiFailure,
  type Forge,
  ForgeError,
  type PullRequest,
  type PullRequestStatus,
  type ReviewComment,
  apiBase,
} from './forge.js';

/** Rate-limit waits are retried this many times before the call fails. */
const LIMIT_RETRIES = 3;

/** Check run conclusions that fail a pull request's CI. */
const FAILED_CONCLUSIONS = ['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure'];

function split(repository: string): { owner: string; repo: string } {
  const i = repository.indexOf('/');
  if (i <= 0 || i === repository.length - 1 || repository.indexOf('/', i + 1) >= 0)
    throw new ForgeError(`"${repository}" is not a GitHub repository (owner/name); set publish.repository`);
  return { owner: repository.slice(0, i), repo: repository.slice(i + 1) };
}

/** The API's message and status, never the request (its headers hold the token). */
function wrap(err: unknown, what: string): ForgeError {
  if (err instanceof ForgeError) return err;
  const e = err as {
    status?: number;
    message?: string;
    response?: { data?: { message?: string } };
    request?: { url?: string };
  };
  // No response: the server was never reached (Octokit calls that a 500, which GitHub did not say).
  if (!e.response && e.request)
    return new ForgeError(
      `GitHub ${what}: no answer from ${originOf(e.request.url)} (${e.message ?? String(err)}): check publish.base_url and the network`,
    );
  const message = e.response?.data?.message ?? e.message ?? String(err);
  return new ForgeError(`GitHub ${what}: ${e.status ? `${e.status} ` : ''}${message}`, e.status);
}

/** scheme://host:port of a request's URL (never its path or query). */
function originOf(url: string | undefined): string {
  try {
    return new URL(url ?? '').origin;
  } catch {
    return 'the API';
  }
}

async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw wrap(err, what);
  }
}

export interface GitHubForgeOptions {
  token: string;
  /** API base (Enterprise: https://host/api/v3); default https://api.github.com. */
  baseUrl?: string;
  /** Told each time a rate limit makes a call wait (seconds). */
  onWait?: (message: string) => void;
}

/** The Octokit client with the throttling and retry plugins, loaded when the first call needs it. */
async function makeClient(opts: GitHubForgeOptions) {
  const [{ Octokit }, { throttling }, { retry }] = await Promise.all([
    import('@octokit/rest'),
    import('@octokit/plugin-throttling'),
    import('@octokit/plugin-retry'),
  ]);
  const Client = Octokit.plugin(throttling, retry);
  const quiet = () => {};
  const throttle: ThrottlingOptions = {
    onRateLimit: (retryAfter, options, _o, retryCount) => {
      opts.onWait?.(`GitHub rate limit on ${options.method} ${options.url}: waiting ${retryAfter}s`);
      return retryCount < LIMIT_RETRIES;
    },
    onSecondaryRateLimit: (retryAfter, options, _o, retryCount) => {
      opts.onWait?.(`GitHub secondary rate limit on ${options.method} ${options.url}: waiting ${retryAfter}s`);
      return retryCount < LIMIT_RETRIES;
    },
  };
  return new Client({
    auth: opts.token,
    baseUrl: apiBase('github', opts.baseUrl),
    userAgent: 'orchestrate',
    log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
    throttle,
    retry: { retries: 3 },
  });
}

export function githubForge(opts: GitHubForgeOptions): Forge {
  let made: ReturnType<typeof makeClient> | undefined;
  const client = () => {
    made ??= makeClient(opts);
    return made;
  };

  const pullRequest = async (owner: string, repo: string, number: number): Promise<PullRequest> => {
    const [{ data }, reviews] = await Promise.all([
      (await client()).rest.pulls.get({ owner, repo, pull_number: number }),
      (await client()).rest.pulls.listReviews({ owner, repo, pull_number: number, per_page: 100 }),
    ]);
    const reviewers = new Set<string>();
    for (const r of data.requested_reviewers ?? []) if (r?.login) reviewers.add(r.login);
    for (const r of reviews.data) if (r.user?.login) reviewers.add(r.user.login);
    return {
      number: data.number,
      url: data.html_url,
      title: data.title,
      body: data.body ?? '',
      state: data.merged ? 'merged' : data.state === 'open' ? 'open' : 'closed',
      draft: data.draft === true,
      labels: data.labels.map((l) => l.name).filter((n): n is string => typeof n === 'string'),
      reviewers: [...reviewers],
      headSha: data.head.sha,
    };
  };

  /** CI of a commit: its check runs and its commit statuses (GitHub keeps both, and either can fail). */
  const ciOf = async (
    owner: string,
    repo: string,
    sha: string,
  ): Promise<{ checks: PullRequestStatus['checks']; failures: CiFailure[] }> => {
    const [checks, statuses] = await Promise.all([
      (await client()).rest.checks.listForRef({ owner, repo, ref: sha, per_page: 100 }),
      (await client()).rest.repos.getCombinedStatusForRef({ owner, repo, ref: sha, per_page: 100 }),
    ]);
    const failures: CiFailure[] = [];
    let pending = false;
    for (const r of checks.data.check_runs) {
      if (r.status !== 'completed') pending = true;
      else if (FAILED_CONCLUSIONS.includes(r.conclusion ?? ''))
        failures.push({
          id: String(r.id),
          name: r.name,
          kind: 'check',
          ...(r.html_url ? { url: r.html_url } : {}),
          ...(r.output?.title || r.output?.summary
            ? { summary: [r.output.title, r.output.summary].filter(Boolean).join(': ') }
            : {}),
        });
    }
    for (const st of statuses.data.statuses) {
      if (st.state === 'pending') pending = true;
      else if (st.state === 'failure' || st.state === 'error')
        failures.push({
          id: `status:${st.context}`,
          name: st.context,
          kind: 'status',
          ...(st.target_url ? { url: st.target_url } : {}),
          ...(st.description ? { summary: st.description } : {}),
        });
    }
    const any = checks.data.check_runs.length + statuses.data.statuses.length > 0;
    return {
      checks: !any ? 'none' : failures.length ? 'failing' : pending ? 'pending' : 'passing',
      failures,
    };
  };

  /** Reviewers' line comments, each marked answered when a reply of orchestrate follows it in its thread. */
  const reviewCommentsOf = async (owner: string, repo: string, number: number): Promise<ReviewComment[]> => {
    const { data } = await (await client()).rest.pulls.listReviewComments({
      owner,
      repo,
      pull_number: number,
      per_page: 100,
    });
    return data
      .filter((c) => !c.body.includes(ANSWER_MARK))
      .map((c) => {
        const thread = c.in_reply_to_id ?? c.id;
        const line = c.line ?? c.original_line;
        return {
          id: String(c.id),
          thread: String(thread),
          author: c.user?.login ?? 'someone',
          body: c.body,
          path: c.path,
          ...(typeof line === 'number' ? { line } : {}),
          // A thread is answered by a reply of orchestrate after this comment (GitHub threads are flat).
          answered: data.some((r) => r.body.includes(ANSWER_MARK) && r.in_reply_to_id === thread && r.id > c.id),
        };
      });
  };

  return {
    findOpen: (repository, head, base) =>
      call('list pull requests', async () => {
        const { owner, repo } = split(repository);
        const { data } = await (await client()).rest.pulls.list({
          owner,
          repo,
          head: `${owner}:${head}`,
          base,
          state: 'open',
        });
        const first = data[0];
        return first ? pullRequest(owner, repo, first.number) : undefined;
      }),
    get: (repository, number) =>
      call(`get pull request #${number}`, () => {
        const { owner, repo } = split(repository);
        return pullRequest(owner, repo, number);
      }),
    create: (repository, input) =>
      call('create pull request', async () => {
        const { owner, repo } = split(repository);
        const { data } = await (await client()).rest.pulls.create({ owner, repo, ...input });
        return {
          number: data.number,
          url: data.html_url,
          title: data.title,
          body: data.body ?? '',
          state: 'open',
          draft: data.draft === true,
          labels: [],
          reviewers: [],
          headSha: data.head.sha,
        };
      }),
    update: (repository, number, change) =>
      call(`update pull request #${number}`, async () => {
        const { owner, repo } = split(repository);
        const { draft, ...fields } = change;
        if (fields.title !== undefined || fields.body !== undefined)
          await (await client()).rest.pulls.update({ owner, repo, pull_number: number, ...fields });
        if (draft === undefined) return;
        // PATCH /pulls ignores `draft`: only GraphQL's two mutations change it (by the node id).
        const { data } = await (await client()).rest.pulls.get({ owner, repo, pull_number: number });
        if (data.draft === draft) return;
        const mutation = draft ? 'convertPullRequestToDraft' : 'markPullRequestReadyForReview';
        await (await client()).graphql(
          `mutation($id: ID!) { ${mutation}(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`,
          { id: data.node_id },
        );
      }),
    addLabels: (repository, number, labels) =>
      call(`label pull request #${number}`, async () => {
        const { owner, repo } = split(repository);
        await (await client()).rest.issues.addLabels({ owner, repo, issue_number: number, labels });
      }),
    requestReviewers: (repository, number, reviewers) =>
      call(`request reviewers on #${number}`, async () => {
        const { owner, repo } = split(repository);
        await (await client()).rest.pulls.requestReviewers({ owner, repo, pull_number: number, reviewers });
      }),
    close: (repository, number) =>
      call(`close pull request #${number}`, async () => {
        const { owner, repo } = split(repository);
        await (await client()).rest.pulls.update({ owner, repo, pull_number: number, state: 'closed' });
      }),
    status: (repository, number) =>
      call(`status of pull request #${number}`, async (): Promise<PullRequestStatus> => {
        const { owner, repo } = split(repository);
        const { data } = await (await client()).rest.pulls.get({ owner, repo, pull_number: number });
        const [ci, reviews, comments] = await Promise.all([
          ciOf(owner, repo, data.head.sha),
          (await client()).rest.pulls.listReviews({ owner, repo, pull_number: number, per_page: 100 }),
          reviewCommentsOf(owner, repo, number),
        ]);
        // A reviewer's latest review counts (an approval after requested changes clears them).
        const latest = new Map<string, string>();
        for (const r of reviews.data) if (r.user?.login && r.state !== 'COMMENTED') latest.set(r.user.login, r.state);
        const states = [...latest.values()];
        return {
          state: data.merged ? 'merged' : data.state !== 'open' ? 'closed' : data.draft ? 'draft' : 'open',
          url: data.html_url,
          checks: ci.checks,
          review: states.includes('CHANGES_REQUESTED')
            ? 'changes_requested'
            : states.includes('APPROVED')
              ? 'approved'
              : (data.requested_reviewers?.length ?? 0) > 0
                ? 'review_required'
                : 'none',
          mergeable:
            data.mergeable_state === 'dirty' || data.mergeable_state === 'behind'
              ? 'needs_rebase'
              : data.mergeable === true
                ? 'mergeable'
                : 'unknown',
          headSha: data.head.sha,
          failing: ci.failures.map((f) => f.name),
          unanswered: comments.filter((c) => !c.answered).length,
          autoMerge: data.auto_merge != null,
        };
      }),
    ciFailures: (repository, number, sha) =>
      call(`failing checks of #${number}`, async () => {
        const { owner, repo } = split(repository);
        const { failures } = await ciOf(owner, repo, sha);
        for (const f of failures) {
          if (f.kind !== 'check') continue;
          // An Actions check run's id is its job's id; other apps' checks have no log here (404).
          try {
            const log = await (await client()).rest.actions.downloadJobLogsForWorkflowRun({
              owner,
              repo,
              job_id: Number(f.id),
            });
            if (typeof log.data === 'string') f.log = log.data;
          } catch (err) {
            if ((err as { status?: number }).status !== 404 && (err as { status?: number }).status !== 410) throw err;
          }
        }
        return failures;
      }),
    reviewComments: (repository, number) =>
      call(`review comments of #${number}`, () => {
        const { owner, repo } = split(repository);
        return reviewCommentsOf(owner, repo, number);
      }),
    reply: (repository, number, comment, body) =>
      call(`reply to review comment ${comment.id} on #${number}`, async () => {
        const { owner, repo } = split(repository);
        await (await client()).rest.pulls.createReplyForReviewComment({
          owner,
          repo,
          pull_number: number,
          comment_id: Number(comment.thread),
          body: `${body}\n\n${ANSWER_MARK}`,
        });
      }),
    enableAutoMerge: (repository, number) =>
      call(`auto-merge of #${number}`, async () => {
        const { owner, repo } = split(repository);
        const { data } = await (await client()).rest.pulls.get({ owner, repo, pull_number: number });
        if (data.auto_merge != null) return 'already';
        // GitHub refuses auto-merge on a pull request with nothing left to wait for (its
        // mergeable_state is clean): that one is merged now.
        if (data.mergeable_state === 'clean') {
          await (await client()).rest.pulls.merge({ owner, repo, pull_number: number, sha: data.head.sha });
          return 'merged';
        }
        await (await client()).graphql(
          'mutation($id: ID!) { enablePullRequestAutoMerge(input: { pullRequestId: $id }) { pullRequest { autoMergeRequest { enabledAt } } } }',
          { id: data.node_id },
        );
        return 'enabled';
      }),
  };
}
