// GitLab (gitlab.com, or self-hosted through publish.base_url) as a Forge, through its REST API v4
// with fetch: merge requests by source branch, drafts as GitLab marks them (a "Draft: " title),
// reviewers by user id, the head pipeline as checks, approvals as the review state. A 429 waits
// as Retry-After says and a server error is retried with backoff, a few times. A follow-up reads
// the head pipeline's failed jobs and their traces, and the diff discussions, and answers in the
// discussion; auto-merge is "merge when the pipeline succeeds".
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

const DRAFT = 'Draft: ';
const RETRIES = 3;

interface MergeRequest {
  iid: number;
  web_url: string;
  title: string;
  description: string | null;
  state: 'opened' | 'closed' | 'merged' | 'locked';
  draft?: boolean;
  labels?: string[];
  reviewers?: { id: number; username: string }[];
  sha?: string;
  detailed_merge_status?: string;
  has_conflicts?: boolean;
  head_pipeline?: { id?: number; status?: string; sha?: string } | null;
  merge_when_pipeline_succeeds?: boolean;
}

interface Note {
  id: number;
  body: string;
  author?: { username?: string };
  system?: boolean;
  position?: { new_path?: string; new_line?: number | null; old_path?: string; old_line?: number | null } | null;
}

export interface GitLabForgeOptions {
  token: string;
  /** API base (self-hosted: https://host/api/v4); default https://gitlab.com/api/v4. */
  baseUrl?: string;
  onWait?: (message: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function gitlabForge(opts: GitLabForgeOptions): Forge {
  const base = apiBase('gitlab', opts.baseUrl);
  const project = (repository: string) => `${base}/projects/${encodeURIComponent(repository)}`;

  const request = async <T>(method: string, url: string, what: string, body?: unknown, raw = false): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, {
          method,
          headers: {
            'PRIVATE-TOKEN': opts.token,
            accept: 'application/json',
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch (err) {
        if (attempt < RETRIES) {
          await sleep(1000 * 2 ** attempt);
          continue;
        }
        // fetch says only "fetch failed"; why is in its cause (ECONNREFUSED, a certificate ...).
        const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
        const why = cause ?? (err instanceof Error ? err.message : String(err));
        throw new ForgeError(
          `GitLab ${what}: no answer from ${new URL(base).origin} (${why}): check publish.base_url and the network`,
        );
      }
      if ((res.status === 429 || res.status >= 500) && attempt < RETRIES) {
        const after = Number(res.headers.get('retry-after'));
        const waitMs = Number.isFinite(after) && after > 0 ? after * 1000 : 1000 * 2 ** attempt;
        opts.onWait?.(`GitLab ${res.status} on ${what}: waiting ${Math.round(waitMs / 1000)}s`);
        await sleep(waitMs);
        continue;
      }
      const text = await res.text();
      if (!res.ok) {
        let message = text.slice(0, 300);
        try {
          const j = JSON.parse(text) as { message?: unknown; error?: unknown };
          message = JSON.stringify(j.message ?? j.error ?? j);
        } catch {
          // not JSON: the start of the text
        }
        throw new ForgeError(`GitLab ${what}: ${res.status} ${message}`, res.status);
      }
      if (raw) return text as T;
      return (text ? JSON.parse(text) : undefined) as T;
    }
  };

  const toPr = (mr: MergeRequest): PullRequest => ({
    number: mr.iid,
    url: mr.web_url,
    title: mr.title.startsWith(DRAFT) ? mr.title.slice(DRAFT.length) : mr.title,
    body: mr.description ?? '',
    state: mr.state === 'merged' ? 'merged' : mr.state === 'opened' ? 'open' : 'closed',
    draft: mr.draft === true || mr.title.startsWith(DRAFT),
    labels: mr.labels ?? [],
    reviewers: (mr.reviewers ?? []).map((r) => r.username),
    ...(mr.sha ? { headSha: mr.sha } : {}),
  });
  const mr = (repository: string, number: number) =>
    request<MergeRequest>('GET', `${project(repository)}/merge_requests/${number}`, `get merge request !${number}`);

  /** The failed jobs of a pipeline (names and links; their traces are read by ciFailures). */
  const failedJobs = async (repository: string, pipeline: number): Promise<CiFailure[]> => {
    const jobs = await request<{ id: number; name: string; web_url?: string; failure_reason?: string }[]>(
      'GET',
      `${project(repository)}/pipelines/${pipeline}/jobs?scope[]=failed&per_page=100`,
      `failed jobs of pipeline ${pipeline}`,
    );
    return jobs.map((j) => ({
      id: String(j.id),
      name: j.name,
      kind: 'job' as const,
      ...(j.web_url ? { url: j.web_url } : {}),
      ...(j.failure_reason ? { summary: j.failure_reason } : {}),
    }));
  };

  /** The notes of diff discussions (by reviewers), each answered when a later note of orchestrate is in its discussion. */
  const reviewCommentsOf = async (repository: string, number: number): Promise<ReviewComment[]> => {
    const discussions = await request<{ id: string; notes: Note[] }[]>(
      'GET',
      `${project(repository)}/merge_requests/${number}/discussions?per_page=100`,
      `discussions of !${number}`,
    );
    const out: ReviewComment[] = [];
    for (const d of discussions) {
      d.notes.forEach((n, i) => {
        if (n.system || !n.position || n.body.includes(ANSWER_MARK)) return;
        const line = n.position.new_line ?? n.position.old_line;
        out.push({
          id: String(n.id),
          thread: d.id,
          author: n.author?.username ?? 'someone',
          body: n.body,
          ...(n.position.new_path ? { path: n.position.new_path } : {}),
          ...(typeof line === 'number' ? { line } : {}),
          answered: d.notes.slice(i + 1).some((r) => r.body.includes(ANSWER_MARK)),
        });
      });
    }
    return out;
  };

  return {
    findOpen: async (repository, head, target) => {
      const q = new URLSearchParams({ state: 'opened', source_branch: head, target_branch: target });
      const list = await request<MergeRequest[]>(
        'GET',
        `${project(repository)}/merge_requests?${q}`,
        'list merge requests',
      );
      return list[0] ? toPr(list[0]) : undefined;
    },
    get: async (repository, number) => toPr(await mr(repository, number)),
    create: async (repository, input) =>
      toPr(
        await request<MergeRequest>('POST', `${project(repository)}/merge_requests`, 'create merge request', {
          source_branch: input.head,
          target_branch: input.base,
          title: input.draft ? `${DRAFT}${input.title}` : input.title,
          description: input.body,
        }),
      ),
    update: async (repository, number, change) => {
      const body: Record<string, string> = {};
      if (change.title !== undefined || change.draft !== undefined) {
        // GitLab keeps a draft in the title ("Draft: "): the title carries both changes.
        const current = await mr(repository, number);
        const wasDraft = current.draft === true || current.title.startsWith(DRAFT);
        const title = change.title ?? toPr(current).title;
        const next = (change.draft ?? wasDraft) ? `${DRAFT}${title}` : title;
        if (next !== current.title) body.title = next;
      }
      if (change.body !== undefined) body.description = change.body;
      if (Object.keys(body).length === 0) return;
      await request('PUT', `${project(repository)}/merge_requests/${number}`, `update merge request !${number}`, body);
    },
    addLabels: async (repository, number, labels) => {
      await request('PUT', `${project(repository)}/merge_requests/${number}`, `label merge request !${number}`, {
        add_labels: labels.join(','),
      });
    },
    requestReviewers: async (repository, number, reviewers) => {
      const current = await mr(repository, number);
      const ids = (current.reviewers ?? []).map((r) => r.id);
      for (const name of reviewers) {
        const users = await request<{ id: number }[]>(
          'GET',
          `${base}/users?username=${encodeURIComponent(name)}`,
          `find user ${name}`,
        );
        if (!users[0]) throw new ForgeError(`GitLab: no user "${name}" (publish.reviewers)`);
        ids.push(users[0].id);
      }
      await request('PUT', `${project(repository)}/merge_requests/${number}`, `request reviewers on !${number}`, {
        reviewer_ids: ids,
      });
    },
    close: async (repository, number) => {
      await request('PUT', `${project(repository)}/merge_requests/${number}`, `close merge request !${number}`, {
        state_event: 'close',
      });
    },
    status: async (repository, number): Promise<PullRequestStatus> => {
      const m = await mr(repository, number);
      const [approvals, comments, failures] = await Promise.all([
        request<{ approved?: boolean; approvals_left?: number }>(
          'GET',
          `${project(repository)}/merge_requests/${number}/approvals`,
          `approvals of !${number}`,
        ),
        reviewCommentsOf(repository, number),
        m.head_pipeline?.id && m.head_pipeline.status === 'failed'
          ? failedJobs(repository, m.head_pipeline.id)
          : Promise.resolve([]),
      ]);
      const pipeline = m.head_pipeline?.status;
      const pr = toPr(m);
      return {
        state: pr.state === 'open' && pr.draft ? 'draft' : pr.state,
        url: m.web_url,
        checks: !pipeline
          ? 'none'
          : pipeline === 'success'
            ? 'passing'
            : ['failed', 'canceled'].includes(pipeline)
              ? 'failing'
              : 'pending',
        review: approvals.approved
          ? 'approved'
          : m.detailed_merge_status === 'requested_changes'
            ? 'changes_requested'
            : (approvals.approvals_left ?? 0) > 0
              ? 'review_required'
              : 'none',
        mergeable:
          m.has_conflicts || m.detailed_merge_status === 'need_rebase' || m.detailed_merge_status === 'conflict'
            ? 'needs_rebase'
            : m.detailed_merge_status === 'mergeable'
              ? 'mergeable'
              : 'unknown',
        ...(m.sha ? { headSha: m.sha } : {}),
        failing: failures.map((f) => f.name),
        unanswered: comments.filter((c) => !c.answered).length,
        autoMerge: m.merge_when_pipeline_succeeds === true,
      };
    },
    ciFailures: async (repository, number, sha) => {
      const m = await mr(repository, number);
      const p = m.head_pipeline;
      if (!p?.id || p.sha !== sha || p.status !== 'failed') return [];
      const jobs = await failedJobs(repository, p.id);
      for (const j of jobs)
        j.log = await request<string>(
          'GET',
          `${project(repository)}/jobs/${j.id}/trace`,
          `trace of job ${j.id}`,
          undefined,
          true,
        );
      return jobs;
    },
    reviewComments: (repository, number) => reviewCommentsOf(repository, number),
    reply: async (repository, number, comment, body) => {
      await request(
        'POST',
        `${project(repository)}/merge_requests/${number}/discussions/${encodeURIComponent(comment.thread)}/notes`,
        `reply in discussion ${comment.thread} of !${number}`,
        { body: `${body}\n\n${ANSWER_MARK}` },
      );
    },
    enableAutoMerge: async (repository, number) => {
      const m = await mr(repository, number);
      if (m.merge_when_pipeline_succeeds) return 'already';
      const after = await request<MergeRequest>(
        'PUT',
        `${project(repository)}/merge_requests/${number}/merge`,
        `merge when the pipeline of !${number} succeeds`,
        { merge_when_pipeline_succeeds: true, ...(m.sha ? { sha: m.sha } : {}) },
      );
      return after.state === 'merged' ? 'merged' : 'enabled';
    },
  };
}
