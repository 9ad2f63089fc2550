// Strict fake GitHub and GitLab REST APIs on 127.0.0.1 for the campaign tests. They model the
// documented rules the publishing code depends on: authentication is required (401), unknown
// repositories and pull requests are 404, a pull request's head branch must exist on the remote
// (checked in the bare repository the fake's repository maps to) and only one open pull request
// may exist per head (GitHub 422, GitLab 409), missing required fields are 422/400; a GitHub pull
// request whose head conflicts with its base branch is not mergeable (mergeable_state dirty).
// Every request that changes state (not a GET) is counted, so a test can assert that applying
// again makes none. The fake GitHub can also serve over TLS and serve the repositories themselves
// over git's smart HTTP on the same host, as GitHub Enterprise does (git-smart-http.ts).
import { execFileSync } from 'node:child_process';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type FakeCheck,
  type FakeComment,
  type FakeReviewInput,
  GitHubReviewModel,
  type GitHubReviewOptions,
} from './fake-github-reviews.js';
import { type FakeJob, GitLabReviewModel } from './fake-gitlab-reviews.js';
import { GIT_HTTP_PATH, serveGit } from './git-smart-http.js';

export interface FakePull {
  number: number;
  repo: string;
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  labels: string[];
  reviewers: string[];
  headSha: string;
}

interface Common {
  url: string;
  pulls: FakePull[];
  /** Requests that changed state (method path), in order. */
  writes: string[];
  /** Every Authorization / PRIVATE-TOKEN value seen (to check the token went only here). */
  close(): Promise<void>;
}

function branchSha(bare: string, branch: string): string | undefined {
  try {
    return execFileSync('git', ['--git-dir', bare, 'rev-parse', '--verify', '-q', `refs/heads/${branch}`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return undefined;
  }
}

/** Whether `head` merges into `base` without conflicts (git merge-tree, nothing written but objects). */
function mergesCleanly(bare: string, base: string, head: string): boolean {
  try {
    execFileSync('git', ['--git-dir', bare, 'merge-tree', '--write-tree', `refs/heads/${base}`, `refs/heads/${head}`], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, data: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(data));
}

async function listen(server: Server, scheme = 'http'): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export interface FakeGitHub extends Common {
  /** Each smart HTTP request for a repository (with gitRoot): its path and whether it carried credentials. */
  gitRequests: { path: string; authorized: boolean }[];
  merge(repo: string, number: number): void;
  setChecks(repo: string, sha: string, conclusion: 'success' | 'failure' | null): void;
  /** CI and review (fake-github-reviews.ts): checks with logs, statuses, reviews, comments, auto-merge. */
  ci: GitHubReviewModel;
  /** Checks of `repo`@`sha` with names and logs. */
  setCheckRuns(repo: string, sha: string, checks: FakeCheck[]): void;
  /** A review of the open pull request of `head` (with line comments): the comments made. */
  review(repo: string, head: string, r: FakeReviewInput): FakeComment[];
}

export interface FakeGitHubOptions extends GitHubReviewOptions {
  /** Serve over https with this key and certificate. */
  tls?: { key: Buffer; cert: Buffer };
  /** Also serve the repositories under this folder (owner/name.git) over smart HTTP, token in Basic auth. */
  gitRoot?: string;
}

/** `repos`: "owner/name" -> the bare repository that stands for it. */
export async function fakeGitHub(
  token: string,
  repos: Record<string, string>,
  opts: FakeGitHubOptions = {},
): Promise<FakeGitHub> {
  const pulls: FakePull[] = [];
  const gitRequests: FakeGitHub['gitRequests'] = [];
  const writes: string[] = [];
  const ci = new GitHubReviewModel(opts);
  const nodeId = (p: FakePull) => `PR_${Buffer.from(`${p.repo}#${p.number}`).toString('base64url')}`;
  const pullJson = (p: FakePull, base: string) => ({
    number: p.number,
    node_id: nodeId(p),
    html_url: `https://github.example/${p.repo}/pull/${p.number}`,
    url: `${base}/repos/${p.repo}/pulls/${p.number}`,
    title: p.title,
    body: p.body,
    state: p.state,
    merged: p.merged,
    draft: p.draft,
    labels: p.labels.map((name, i) => ({ id: i + 1, name })),
    requested_reviewers: p.reviewers.map((login, i) => ({ id: i + 1, login })),
    head: { ref: p.head, sha: p.headSha, label: `${p.repo.split('/')[0]}:${p.head}` },
    base: { ref: p.base },
    ...mergeability(p),
    auto_merge: ci.autoMergeJson(p),
  });
  // As GitHub computes it: the head merges into the base branch of the bare repository, or conflicts (dirty).
  const mergeability = (p: FakePull) => {
    if (p.state !== 'open') return { mergeable: null, mergeable_state: 'unknown' };
    const clean = mergesCleanly(repos[p.repo]!, p.base, p.head);
    return { mergeable: clean, mergeable_state: clean ? ci.cleanOrBlocked(p) : 'dirty' };
  };
  const mergeableState = (p: FakePull) => mergeability(p).mergeable_state;
  const autoMergeMutation =
    /^\s*mutation\s*\(\s*\$(\w+)\s*:\s*ID!\s*\)\s*\{\s*enablePullRequestAutoMerge\s*\(\s*input\s*:\s*\{\s*pullRequestId\s*:\s*\$(\w+)\s*\}\s*\)\s*\{\s*pullRequest\s*\{\s*autoMergeRequest\s*\{\s*enabledAt\s*\}\s*\}\s*\}\s*\}\s*$/;
  // GitHub's GraphQL endpoint, only the two mutations that change a pull request's draft state
  // (REST cannot). As GitHub does, errors come back as 200 with an `errors` list.
  const graphql = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return send(res, 404, { message: 'Not Found' });
    const { query, variables } = (await bodyOf(req)) as { query?: unknown; variables?: Record<string, unknown> };
    const fail = (message: string, type?: string) => send(res, 200, { data: null, errors: [{ message, type }] });
    const auto = typeof query === 'string' ? autoMergeMutation.exec(query) : null;
    if (auto) {
      const id = variables?.[auto[1]!];
      const p = auto[1] === auto[2] ? pulls.find((x) => nodeId(x) === id) : undefined;
      if (!p) return fail(`Could not resolve to a node with the global id of '${String(id)}'`, 'NOT_FOUND');
      const refused = ci.enableAutoMerge(p, mergeableState(p));
      if (refused) return fail(refused, 'UNPROCESSABLE');
      writes.push('POST /graphql enablePullRequestAutoMerge');
      const enabledAt = new Date().toISOString();
      return send(res, 200, {
        data: { enablePullRequestAutoMerge: { pullRequest: { autoMergeRequest: { enabledAt } } } },
      });
    }
    const m =
      typeof query === 'string'
        ? /^\s*mutation\s*\(\s*\$(\w+)\s*:\s*ID!\s*\)\s*\{\s*(markPullRequestReadyForReview|convertPullRequestToDraft)\s*\(\s*input\s*:\s*\{\s*pullRequestId\s*:\s*\$(\w+)\s*\}\s*\)\s*\{\s*pullRequest\s*\{\s*isDraft\s*\}\s*\}\s*\}\s*$/.exec(
            query,
          )
        : null;
    if (!m || m[1] !== m[3]) return fail('this fake knows only the draft mutations; the query did not parse');
    const id = variables?.[m[1]!];
    const p = pulls.find((x) => nodeId(x) === id);
    if (!p) return fail(`Could not resolve to a node with the global id of '${String(id)}'`, 'NOT_FOUND');
    if (p.state !== 'open') return fail('Pull request is closed', 'UNPROCESSABLE');
    writes.push(`POST /graphql ${m[2]}`);
    p.draft = m[2] === 'convertPullRequestToDraft';
    return send(res, 200, { data: { [m[2]!]: { pullRequest: { isDraft: p.draft } } } });
  };
  let baseUrl = '';
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (ci.serveLog(path, res)) return;
      // The head of each open pull request is its branch now; one with auto-merge on merges once clean.
      for (const p of pulls) if (p.state === 'open') p.headSha = branchSha(repos[p.repo]!, p.head) ?? p.headSha;
      ci.settle(pulls, mergeableState);
      if (opts.gitRoot && GIT_HTTP_PATH.test(path)) {
        gitRequests.push({ path, authorized: req.headers.authorization !== undefined });
        return serveGit(req, res, opts.gitRoot, token);
      }
      const auth = req.headers.authorization;
      if (!auth) return send(res, 401, { message: 'Requires authentication', status: '401' });
      if (auth !== `token ${token}` && auth !== `Bearer ${token}`)
        return send(res, 401, { message: 'Bad credentials', status: '401' });
      const u = new URL(req.url ?? '/', baseUrl);
      if (u.pathname === '/graphql') return graphql(req, res);
      const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(u.pathname);
      if (!m) return send(res, 404, { message: 'Not Found' });
      const repo = `${m[1]}/${m[2]}`;
      const bare = repos[repo];
      if (!bare) return send(res, 404, { message: 'Not Found' });
      const rest = m[3] ?? '';
      const method = req.method ?? 'GET';
      const body = method === 'GET' ? {} : await bodyOf(req);
      if (method !== 'GET') writes.push(`${method} ${u.pathname}`);
      const pullOf = (n: string) => pulls.find((p) => p.repo === repo && p.number === Number(n));
      let r: RegExpExecArray | null;
      if (rest === '/pulls' && method === 'GET') {
        const head = u.searchParams.get('head');
        const state = u.searchParams.get('state') ?? 'open';
        const list = pulls.filter(
          (p) =>
            p.repo === repo &&
            (state === 'all' || p.state === state) &&
            (!head || `${repo.split('/')[0]}:${p.head}` === head) &&
            (!u.searchParams.get('base') || p.base === u.searchParams.get('base')),
        );
        return send(
          res,
          200,
          list.map((p) => pullJson(p, baseUrl)),
        );
      }
      if (rest === '/pulls' && method === 'POST') {
        for (const f of ['title', 'head', 'base'])
          if (typeof body[f] !== 'string')
            return send(res, 422, {
              message: 'Validation Failed',
              errors: [{ resource: 'PullRequest', field: f, code: 'missing_field' }],
            });
        const head = String(body.head).replace(/^[^:]+:/, '');
        const sha = branchSha(bare, head);
        if (!sha)
          return send(res, 422, {
            message: 'Validation Failed',
            errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }],
          });
        if (!branchSha(bare, String(body.base)))
          return send(res, 422, {
            message: 'Validation Failed',
            errors: [{ resource: 'PullRequest', field: 'base', code: 'invalid' }],
          });
        if (pulls.some((p) => p.repo === repo && p.head === head && p.state === 'open'))
          return send(res, 422, {
            message: 'Validation Failed',
            errors: [
              {
                resource: 'PullRequest',
                code: 'custom',
                message: `A pull request already exists for ${m[1]}:${head}.`,
              },
            ],
          });
        const p: FakePull = {
          number: pulls.filter((x) => x.repo === repo).length + 1,
          repo,
          head,
          base: String(body.base),
          title: String(body.title),
          body: typeof body.body === 'string' ? body.body : '',
          draft: body.draft === true,
          state: 'open',
          merged: false,
          labels: [],
          reviewers: [],
          headSha: sha,
        };
        pulls.push(p);
        return send(res, 201, pullJson(p, baseUrl));
      }
      r = /^\/pulls\/(\d+)$/.exec(rest);
      if (r) {
        const p = pullOf(r[1]!);
        if (!p) return send(res, 404, { message: 'Not Found' });
        if (method === 'GET') {
          p.headSha = branchSha(bare, p.head) ?? p.headSha;
          return send(res, 200, pullJson(p, baseUrl));
        }
        if (method === 'PATCH') {
          // Like GitHub, `draft` is not a field of this endpoint: it is ignored (GraphQL changes it).
          if (typeof body.title === 'string') p.title = body.title;
          if (typeof body.body === 'string') p.body = body.body;
          if (body.state === 'closed' || body.state === 'open') p.state = body.state;
          return send(res, 200, pullJson(p, baseUrl));
        }
      }
      r = /^\/pulls\/(\d+)\/requested_reviewers$/.exec(rest);
      if (r && method === 'POST') {
        const p = pullOf(r[1]!);
        if (!p) return send(res, 404, { message: 'Not Found' });
        if (!Array.isArray(body.reviewers)) return send(res, 422, { message: 'Validation Failed' });
        for (const x of body.reviewers as string[]) if (!p.reviewers.includes(x)) p.reviewers.push(x);
        return send(res, 201, pullJson(p, baseUrl));
      }
      r = /^\/issues\/(\d+)\/labels$/.exec(rest);
      if (r && method === 'POST') {
        const p = pullOf(r[1]!);
        if (!p) return send(res, 404, { message: 'Not Found' });
        if (!Array.isArray(body.labels)) return send(res, 422, { message: 'Validation Failed' });
        for (const x of body.labels as string[]) if (!p.labels.includes(x)) p.labels.push(x);
        return send(
          res,
          200,
          p.labels.map((name, i) => ({ id: i + 1, name })),
        );
      }
      if (await ci.handle(res, { repo, rest, method, body, baseUrl, pull: pullOf, mergeableState, send })) return;
      return send(res, 404, { message: 'Not Found' });
    })().catch((err: unknown) => send(res, 500, { message: String(err) }));
  };
  const server = opts.tls ? createHttpsServer(opts.tls, handler) : createServer(handler);
  baseUrl = await listen(server, opts.tls ? 'https' : 'http');
  return {
    url: baseUrl,
    pulls,
    writes,
    gitRequests,
    merge(repo, number) {
      const p = pulls.find((x) => x.repo === repo && x.number === number)!;
      p.state = 'closed';
      p.merged = true;
    },
    setChecks(repo, sha, conclusion) {
      ci.setChecks(repo, sha, [{ name: 'ci', conclusion }]);
    },
    ci,
    setCheckRuns(repo, sha, list) {
      ci.setChecks(repo, sha, list);
    },
    review(repo, head, r) {
      const p = pulls.find((x) => x.repo === repo && x.head === head && x.state === 'open');
      if (!p) throw new Error(`no open pull request of ${head} in ${repo}`);
      return ci.review(p, r);
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface FakeGitLab extends Common {
  setPipeline(project: string, iid: number, status: string | null, jobs?: FakeJob[]): void;
  /** CI and review (fake-gitlab-reviews.ts): pipelines, job traces, discussions, approvals, auto-merge. */
  ci: GitLabReviewModel;
  /** A diff discussion on the open merge request of `head`: its id. */
  discuss(project: string, head: string, author: string, path: string, line: number, body: string): string;
}

/** `projects`: "group/name" -> bare repository. The API lives under /api/v4. */
export async function fakeGitLab(token: string, projects: Record<string, string>): Promise<FakeGitLab> {
  const pulls: FakePull[] = [];
  const writes: string[] = [];
  const ci = new GitLabReviewModel();
  let baseUrl = '';
  const mrJson = (p: FakePull) => ({
    iid: p.number,
    web_url: `https://gitlab.example/${p.repo}/-/merge_requests/${p.number}`,
    title: p.title,
    description: p.body,
    state: p.merged ? 'merged' : p.state === 'open' ? 'opened' : 'closed',
    draft: p.title.startsWith('Draft: '),
    labels: p.labels,
    reviewers: p.reviewers.map((username, i) => ({ id: i + 1, username })),
    sha: p.headSha,
    detailed_merge_status: ci.mergeStatus(p),
    has_conflicts: false,
    head_pipeline: ci.headPipeline(p),
    merge_when_pipeline_succeeds: ci.isAutoMerge(p),
  });
  const server = createServer((req, res) => {
    void (async () => {
      if (req.headers['private-token'] !== token) return send(res, 401, { message: '401 Unauthorized' });
      const u = new URL(req.url ?? '/', baseUrl);
      const m = /^\/api\/v4\/projects\/([^/]+)(\/.*)?$/.exec(u.pathname);
      if (!m) return send(res, 404, { error: '404 Not Found' });
      const project = decodeURIComponent(m[1]!);
      const bare = projects[project];
      if (!bare) return send(res, 404, { message: '404 Project Not Found' });
      const rest = m[2] ?? '';
      const method = req.method ?? 'GET';
      const body = method === 'GET' ? {} : await bodyOf(req);
      if (method !== 'GET') writes.push(`${method} ${u.pathname}`);
      for (const p of pulls) if (p.state === 'open') p.headSha = branchSha(projects[p.repo]!, p.head) ?? p.headSha;
      ci.settle(pulls);
      const pull = (n: string) => pulls.find((x) => x.repo === project && x.number === Number(n));
      if (ci.handle(res, { project, rest, query: u.searchParams, method, body, pull, mrJson, send })) return;
      let r: RegExpExecArray | null;
      if (rest === '/merge_requests' && method === 'GET') {
        const q = u.searchParams;
        const list = pulls.filter(
          (p) =>
            p.repo === project &&
            (!q.get('source_branch') || p.head === q.get('source_branch')) &&
            (!q.get('target_branch') || p.base === q.get('target_branch')) &&
            (q.get('state') !== 'opened' || p.state === 'open'),
        );
        return send(res, 200, list.map(mrJson));
      }
      if (rest === '/merge_requests' && method === 'POST') {
        for (const f of ['source_branch', 'target_branch', 'title'])
          if (typeof body[f] !== 'string') return send(res, 400, { error: `${f} is missing` });
        const sha = branchSha(bare, String(body.source_branch));
        if (!sha) return send(res, 400, { message: ['Source branch does not exist'] });
        if (pulls.some((p) => p.repo === project && p.head === body.source_branch && p.state === 'open'))
          return send(res, 409, { message: ['Another open merge request already exists for this source branch'] });
        const p: FakePull = {
          number: pulls.filter((x) => x.repo === project).length + 1,
          repo: project,
          head: String(body.source_branch),
          base: String(body.target_branch),
          title: String(body.title),
          body: typeof body.description === 'string' ? body.description : '',
          draft: String(body.title).startsWith('Draft: '),
          state: 'open',
          merged: false,
          labels: [],
          reviewers: [],
          headSha: sha,
        };
        pulls.push(p);
        return send(res, 201, mrJson(p));
      }
      r = /^\/merge_requests\/(\d+)(\/approvals)?$/.exec(rest);
      if (r) {
        const p = pulls.find((x) => x.repo === project && x.number === Number(r![1]));
        if (!p) return send(res, 404, { message: '404 Not found' });
        if (r[2] && method === 'GET')
          return send(res, 200, { approved: ci.isApproved(p), approvals_left: ci.isApproved(p) ? 0 : 1 });
        if (method === 'GET') return send(res, 200, mrJson(p));
        if (method === 'PUT') {
          // A draft is its title's "Draft: " prefix (GitLab's PUT has no draft field).
          if (typeof body.title === 'string') {
            p.title = body.title;
            p.draft = body.title.startsWith('Draft: ');
          }
          if (typeof body.description === 'string') p.body = body.description;
          if (typeof body.add_labels === 'string')
            for (const l of body.add_labels.split(',')) if (l && !p.labels.includes(l)) p.labels.push(l);
          if (body.state_event === 'close') p.state = 'closed';
          return send(res, 200, mrJson(p));
        }
      }
      return send(res, 404, { error: '404 Not Found' });
    })().catch((err: unknown) => send(res, 500, { message: String(err) }));
  });
  baseUrl = await listen(server);
  return {
    url: baseUrl,
    pulls,
    writes,
    setPipeline(project, iid, status, jobs) {
      const p = pulls.find((x) => x.repo === project && x.number === iid);
      if (!p) throw new Error(`no merge request !${iid} in ${project}`);
      p.headSha = branchSha(projects[p.repo]!, p.head) ?? p.headSha;
      ci.setPipeline(p, status, jobs);
    },
    ci,
    discuss(project, head, author, path, line, body) {
      const p = pulls.find((x) => x.repo === project && x.head === head && x.state === 'open');
      if (!p) throw new Error(`no open merge request of ${head} in ${project}`);
      return ci.discuss(p, author, path, line, body);
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A port on 127.0.0.1 that nothing listens on (taken, then given back). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
