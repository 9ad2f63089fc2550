// What the fake GitHub (fake-forges.ts) knows of CI and review, shaped as GitHub's REST API shapes
// it: check runs of a commit (an Actions job's check run id is its job id, and its log is served by
// the Actions logs API as a 302 to a signed download URL that needs no token), commit statuses
// (the combined status), reviews, review comments and replies to them (a reply answers a top-level
// comment only), merging (405 unless mergeable and nothing required is missing), and auto-merge
// (GraphQL's enablePullRequestAutoMerge: refused on a pull request that could merge now, "clean
// status", as GitHub does; once on, the pull request is merged as soon as it is clean). Branch
// protection is modelled by `require`: required checks (every check of the head passed) and a
// required approval. A `ci` function computes the checks of a commit from the repository itself,
// so a test's CI goes green only when the commit really fixes what it checks.
import type { ServerResponse } from 'node:http';
import type { FakePull } from './fake-forges.js';

export interface FakeCheck {
  name: string;
  /** null: still running. */
  conclusion: 'success' | 'failure' | null;
  /** The job's log (an Actions job); none: another app's check. */
  log?: string;
}

export interface FakeReviewInput {
  user: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  body?: string;
  comments?: { path: string; line: number; body: string }[];
}

interface CheckRun extends FakeCheck {
  id: number;
}

interface Review {
  id: number;
  pull: string;
  user: string;
  state: string;
  body: string;
  commit: string;
}

export interface FakeComment {
  id: number;
  pull: string;
  review?: number;
  inReplyTo?: number;
  path: string;
  line: number;
  body: string;
  user: string;
  commit: string;
}

export interface GitHubReviewOptions {
  /** The checks of a commit, computed once per commit (repo is owner/name). */
  ci?: (repo: string, sha: string) => FakeCheck[] | undefined;
  /** Branch protection: every check of the head must pass; an approval is needed. */
  require?: { checks?: boolean; approval?: boolean };
  /** The login the token belongs to (the author of replies). */
  login?: string;
}

type Send = (res: ServerResponse, status: number, data: unknown) => void;

const key = (p: FakePull) => `${p.repo}#${p.number}`;

export class GitHubReviewModel {
  readonly checks = new Map<string, CheckRun[]>();
  readonly statuses = new Map<string, { context: string; state: string; description: string }[]>();
  readonly reviews: Review[] = [];
  readonly comments: FakeComment[] = [];
  /** Pull requests with auto-merge on (repo#number). */
  readonly autoMerge = new Set<string>();
  private nextId = 1000;

  constructor(private readonly opts: GitHubReviewOptions = {}) {}

  /** The check runs of `repo`@`sha`: set by the test, or computed by `ci` the first time they are asked for. */
  runsOf(repo: string, sha: string): CheckRun[] {
    const k = `${repo}@${sha}`;
    let runs = this.checks.get(k);
    if (!runs) {
      runs = (this.opts.ci?.(repo, sha) ?? []).map((c) => ({ ...c, id: this.nextId++ }));
      this.checks.set(k, runs);
    }
    return runs;
  }

  setChecks(repo: string, sha: string, checks: FakeCheck[]): void {
    this.checks.set(
      `${repo}@${sha}`,
      checks.map((c) => ({ ...c, id: this.nextId++ })),
    );
  }

  setStatus(repo: string, sha: string, context: string, state: string, description = ''): void {
    const list = this.statuses.get(`${repo}@${sha}`) ?? [];
    this.statuses.set(`${repo}@${sha}`, [
      ...list.filter((s) => s.context !== context),
      { context, state, description },
    ]);
  }

  review(p: FakePull, r: FakeReviewInput): FakeComment[] {
    const review: Review = {
      id: this.nextId++,
      pull: key(p),
      user: r.user,
      state: r.state,
      body: r.body ?? '',
      commit: p.headSha,
    };
    this.reviews.push(review);
    const made = (r.comments ?? []).map((c) => ({
      id: this.nextId++,
      pull: key(p),
      review: review.id,
      path: c.path,
      line: c.line,
      body: c.body,
      user: r.user,
      commit: p.headSha,
    }));
    this.comments.push(...made);
    return made;
  }

  approved(p: FakePull): boolean {
    const latest = new Map<string, string>();
    for (const r of this.reviews) if (r.pull === key(p) && r.state !== 'COMMENTED') latest.set(r.user, r.state);
    const states = [...latest.values()];
    return states.includes('APPROVED') && !states.includes('CHANGES_REQUESTED');
  }

  /** GitHub's mergeable_state of an open pull request that merges without conflicts. */
  cleanOrBlocked(p: FakePull): 'clean' | 'blocked' {
    const req = this.opts.require ?? {};
    if (req.checks) {
      const runs = this.runsOf(p.repo, p.headSha);
      const statuses = this.statuses.get(`${p.repo}@${p.headSha}`) ?? [];
      const green =
        runs.length + statuses.length > 0 &&
        runs.every((r) => r.conclusion === 'success') &&
        statuses.every((s) => s.state === 'success');
      if (!green) return 'blocked';
    }
    if (req.approval && !this.approved(p)) return 'blocked';
    return 'clean';
  }

  autoMergeJson(p: FakePull): unknown {
    return this.autoMerge.has(key(p))
      ? { enabled_by: { login: this.opts.login ?? 'orchestrate-bot' }, merge_method: 'merge', commit_title: null }
      : null;
  }

  /**
   * The routes under /repos/{owner}/{repo} this model answers; false when `rest` is none of them.
   * `pull` finds a pull request of the repository by number.
   */
  async handle(
    res: ServerResponse,
    ctx: {
      repo: string;
      rest: string;
      method: string;
      body: Record<string, unknown>;
      baseUrl: string;
      pull: (n: string) => FakePull | undefined;
      mergeableState: (p: FakePull) => string;
      send: Send;
    },
  ): Promise<boolean> {
    const { repo, rest, method, body, send } = ctx;
    let r: RegExpExecArray | null = null;
    r = /^\/commits\/([^/]+)\/check-runs$/.exec(rest);
    if (r && method === 'GET') {
      const sha = decodeURIComponent(r[1]!);
      const runs = this.runsOf(repo, sha).map((c) => ({
        id: c.id,
        name: c.name,
        head_sha: sha,
        status: c.conclusion === null ? 'in_progress' : 'completed',
        conclusion: c.conclusion,
        html_url: `https://github.example/${repo}/actions/runs/1/job/${c.id}`,
        details_url: `https://github.example/${repo}/actions/runs/1/job/${c.id}`,
        output: { title: c.conclusion === 'failure' ? `${c.name} failed` : null, summary: null },
        app: { slug: c.log !== undefined ? 'github-actions' : 'other-ci' },
      }));
      send(res, 200, { total_count: runs.length, check_runs: runs });
      return true;
    }
    r = /^\/commits\/([^/]+)\/status$/.exec(rest);
    if (r && method === 'GET') {
      const sha = decodeURIComponent(r[1]!);
      const list = this.statuses.get(`${repo}@${sha}`) ?? [];
      const state = list.some((s) => s.state === 'failure' || s.state === 'error')
        ? 'failure'
        : list.length && list.every((s) => s.state === 'success')
          ? 'success'
          : 'pending';
      send(res, 200, {
        state,
        sha,
        total_count: list.length,
        statuses: list.map((s, i) => ({ id: i + 1, ...s, target_url: `https://ci.example/${s.context}` })),
      });
      return true;
    }
    r = /^\/actions\/jobs\/(\d+)\/logs$/.exec(rest);
    if (r && method === 'GET') {
      const id = Number(r[1]);
      const run = [...this.checks.entries()].find(
        ([k, runs]) => k.startsWith(`${repo}@`) && runs.some((x) => x.id === id),
      );
      const job = run?.[1].find((x) => x.id === id);
      if (!job || job.log === undefined) {
        send(res, 404, { message: 'Not Found' });
        return true;
      }
      res.writeHead(302, { location: `${ctx.baseUrl}/_job-logs/${id}?sig=signed` });
      res.end();
      return true;
    }
    r = /^\/pulls\/(\d+)\/reviews$/.exec(rest);
    if (r && method === 'GET') {
      const p = ctx.pull(r[1]!);
      if (!p) return this.sent(send(res, 404, { message: 'Not Found' }));
      send(
        res,
        200,
        this.reviews
          .filter((x) => x.pull === key(p))
          .map((x) => ({ id: x.id, user: { login: x.user }, state: x.state, body: x.body, commit_id: x.commit })),
      );
      return true;
    }
    r = /^\/pulls\/(\d+)\/comments$/.exec(rest);
    if (r && method === 'GET') {
      const p = ctx.pull(r[1]!);
      if (!p) return this.sent(send(res, 404, { message: 'Not Found' }));
      send(
        res,
        200,
        this.comments.filter((c) => c.pull === key(p)).map((c) => this.commentJson(c)),
      );
      return true;
    }
    r = /^\/pulls\/(\d+)\/comments\/(\d+)\/replies$/.exec(rest);
    if (r && method === 'POST') {
      const p = ctx.pull(r[1]!);
      const target = this.comments.find((c) => p && c.pull === key(p) && c.id === Number(r![2]));
      if (!p || !target) return this.sent(send(res, 404, { message: 'Not Found' }));
      if (typeof body.body !== 'string' || !body.body)
        return this.sent(
          send(res, 422, { message: 'Validation Failed', errors: [{ field: 'body', code: 'missing_field' }] }),
        );
      if (target.inReplyTo !== undefined)
        return this.sent(
          send(res, 422, {
            message: 'Validation Failed',
            errors: [{ message: 'replies to replies are not supported' }],
          }),
        );
      const reply: FakeComment = {
        ...target,
        id: this.nextId++,
        inReplyTo: target.id,
        body: body.body,
        user: this.opts.login ?? 'orchestrate-bot',
        commit: p.headSha,
      };
      delete reply.review;
      this.comments.push(reply);
      send(res, 201, this.commentJson(reply));
      return true;
    }
    r = /^\/pulls\/(\d+)\/merge$/.exec(rest);
    if (r && method === 'PUT') {
      const p = ctx.pull(r[1]!);
      if (!p) return this.sent(send(res, 404, { message: 'Not Found' }));
      if (typeof body.sha === 'string' && body.sha !== p.headSha)
        return this.sent(send(res, 409, { message: 'Head branch was modified. Review and try the merge again.' }));
      if (p.state !== 'open' || ctx.mergeableState(p) !== 'clean')
        return this.sent(send(res, 405, { message: 'Pull Request is not mergeable' }));
      p.state = 'closed';
      p.merged = true;
      send(res, 200, { sha: p.headSha, merged: true, message: 'Pull Request successfully merged' });
      return true;
    }
    return false;
  }

  /** GraphQL's enablePullRequestAutoMerge on `p`: GitHub's errors, or on. */
  enableAutoMerge(p: FakePull, mergeableState: string): string | undefined {
    if (p.state !== 'open') return 'Pull request is closed';
    if (p.draft) return 'Pull request Pull request is in draft state';
    if (mergeableState === 'clean') return 'Pull request Pull request is in clean status';
    if (mergeableState === 'dirty') return 'Pull request Pull request is in dirty status';
    this.autoMerge.add(key(p));
    return undefined;
  }

  /** GitHub merges a pull request with auto-merge on once it is clean. */
  settle(pulls: FakePull[], mergeableState: (p: FakePull) => string): void {
    for (const p of pulls)
      if (p.state === 'open' && this.autoMerge.has(key(p)) && mergeableState(p) === 'clean') {
        p.state = 'closed';
        p.merged = true;
      }
  }

  /** The signed download of a job's log (no token needed, as GitHub's log URLs). */
  serveLog(path: string, res: ServerResponse): boolean {
    const m = /^\/_job-logs\/(\d+)$/.exec(path);
    if (!m) return false;
    const job = [...this.checks.values()].flat().find((x) => x.id === Number(m[1]));
    if (!job?.log) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('BlobNotFound');
      return true;
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(job.log);
    return true;
  }

  /** A route answered (send's result is nothing: the answer is written). */
  private sent(_: unknown): true {
    return true;
  }

  private commentJson(c: FakeComment): Record<string, unknown> {
    return {
      id: c.id,
      pull_request_review_id: c.review ?? null,
      ...(c.inReplyTo !== undefined ? { in_reply_to_id: c.inReplyTo } : {}),
      path: c.path,
      line: c.line,
      original_line: c.line,
      side: 'RIGHT',
      body: c.body,
      user: { login: c.user },
      commit_id: c.commit,
      diff_hunk: '@@',
      html_url: `https://github.example/${c.pull.replace('#', '/pull/')}#discussion_r${c.id}`,
    };
  }
}
