// What publishing needs from a forge (GitHub, GitLab), whatever its API: find, open, update and
// close the pull/merge request of a branch, read how it stands (state, checks, review,
// mergeable), the evidence a follow-up needs (failing jobs' logs, review comments), answer review
// comments and turn on the forge's own auto-merge. Tokens come from the environment
// (GITHUB_TOKEN / GH_TOKEN, GITLAB_TOKEN) or, for GitHub, `gh auth token`; they are handed to the client and the push, and never printed,
// logged or written to the run folder (errors carry the API's message, never the request).
import { spawnSync } from 'node:child_process';
import type { ForgeKind } from '../recipe/publish-spec.js';
import { forgeGitHost } from '../recipe/publish-transport.js';

export interface PullRequestInput {
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
}

export interface PullRequest {
  number: number;
  url: string;
  title: string;
  body: string;
  state: 'open' | 'closed' | 'merged';
  draft: boolean;
  labels: string[];
  /** Users asked for a review (and those who reviewed already: asking them again changes nothing). */
  reviewers: string[];
  headSha?: string;
}

export interface PullRequestStatus {
  state: 'open' | 'draft' | 'merged' | 'closed';
  url: string;
  checks: 'passing' | 'failing' | 'pending' | 'none';
  review: 'approved' | 'changes_requested' | 'review_required' | 'none';
  mergeable: 'mergeable' | 'needs_rebase' | 'unknown';
  /** The commit the forge sees at the head of the branch (what CI ran on). */
  headSha?: string;
  /** Names of the failing checks, commit statuses or pipeline jobs. */
  failing?: string[];
  /** Review comments (line comments, discussions) that no reply of orchestrate answers yet. */
  unanswered?: number;
  /** The forge's own auto-merge is on (GitHub auto-merge, GitLab merge when the pipeline succeeds). */
  autoMerge?: boolean;
}

/** One failing check of a pull request's head, with the end of its log when the forge keeps one. */
export interface CiFailure {
  /** Stable across looks at the same head: the check run, status context or job. */
  id: string;
  name: string;
  kind: 'check' | 'status' | 'job';
  url?: string;
  /** What the forge says of it (a check's title and summary, a status's description). */
  summary?: string;
  /** The whole job log as the forge serves it (GitHub Actions logs, GitLab job trace). */
  log?: string;
}

/** A review comment someone left on a line (GitHub review comment, GitLab diff discussion note). */
export interface ReviewComment {
  /** The comment's id (what a reply answers). */
  id: string;
  /** The thread it starts (GitLab: the discussion id; GitHub: the comment's own id). */
  thread: string;
  author: string;
  body: string;
  path?: string;
  line?: number;
  /** A reply of orchestrate (it carries ANSWER_MARK) follows it in its thread. */
  answered: boolean;
}

/**
 * The mark every reply orchestrate writes carries (an HTML comment: reviewers do not see it): a
 * look at the forge tells answered comments from unanswered ones, so a restarted follow-up
 * never answers a comment twice.
 */
export const ANSWER_MARK = '<!-- orchestrate: follow-up reply -->';

/** What `enableAutoMerge` did: turned the forge's auto-merge on, or merged right away (nothing left to wait for). */
export type AutoMergeOutcome = 'enabled' | 'already' | 'merged';

/** Every call that changes something on the forge is one of the create/update/add/request/close/reply/enable methods. */
export interface Forge {
  /** The open pull request whose head is `head` (into `base`), if any. */
  findOpen(repository: string, head: string, base: string): Promise<PullRequest | undefined>;
  get(repository: string, number: number): Promise<PullRequest>;
  create(repository: string, input: PullRequestInput): Promise<PullRequest>;
  /** `draft`: mark the pull request ready for review (false) or turn it back into a draft (true). */
  update(repository: string, number: number, change: { title?: string; body?: string; draft?: boolean }): Promise<void>;
  addLabels(repository: string, number: number, labels: string[]): Promise<void>;
  requestReviewers(repository: string, number: number, reviewers: string[]): Promise<void>;
  close(repository: string, number: number): Promise<void>;
  status(repository: string, number: number): Promise<PullRequestStatus>;
  /** The failing checks of the head commit `sha`, with their logs. */
  ciFailures(repository: string, number: number, sha: string): Promise<CiFailure[]>;
  /** The line comments of reviewers (not orchestrate's own replies), oldest first. */
  reviewComments(repository: string, number: number): Promise<ReviewComment[]>;
  /** Answers `comment` in its thread (the body gets ANSWER_MARK). */
  reply(repository: string, number: number, comment: ReviewComment, body: string): Promise<void>;
  /** The forge's own auto-merge: it merges once its required checks (and approvals) pass. */
  enableAutoMerge(repository: string, number: number): Promise<AutoMergeOutcome>;
}

/** A forge answered with an error: its HTTP status and the API's own message (no request, no token). */
export class ForgeError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ForgeError';
  }
}

/** What to do when a forge's token is missing: said the same way by publish and status. */
export function missingTokenMessage(forge: 'github' | 'gitlab'): string {
  return forge === 'github'
    ? 'no GitHub token: set GITHUB_TOKEN (or GH_TOKEN), or log in with `gh auth login`'
    : 'no GitLab token: set GITLAB_TOKEN (a token with the api scope)';
}

/**
 * The token for `forge`, or undefined. GitHub: GITHUB_TOKEN, GH_TOKEN, then `gh auth token` (when
 * gh is installed and logged in); GitLab: GITLAB_TOKEN.
 */
export function forgeToken(forge: ForgeKind, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (forge === 'gitlab') return env.GITLAB_TOKEN || undefined;
  if (forge !== 'github') return undefined;
  if (env.GITHUB_TOKEN) return env.GITHUB_TOKEN;
  if (env.GH_TOKEN) return env.GH_TOKEN;
  const r = spawnSync('gh', ['auth', 'token'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 10_000,
  });
  const token = r.status === 0 ? r.stdout.trim() : '';
  return token || undefined;
}

/** The API base of a forge: the public one unless publish.base_url names an Enterprise / self-hosted one. */
export function apiBase(forge: 'github' | 'gitlab', baseUrl: string | undefined): string {
  if (baseUrl) return baseUrl.replace(/\/+$/, '');
  return forge === 'github' ? 'https://api.github.com' : 'https://gitlab.com/api/v4';
}

/** The host git pushes to for this forge (the token is sent there and nowhere else). */
export function gitHost(forge: 'github' | 'gitlab', baseUrl: string | undefined): string {
  return forgeGitHost(forge, baseUrl);
}

/** owner/name (GitLab: group/.../name) of an https remote URL, when it is one. */
export function repositoryFromUrl(url: string): string | undefined {
  const m = /^https:\/\/[^/]+\/(.+?)(?:\.git)?\/?$/.exec(url);
  return m?.[1];
}

/** The Authorization header git sends over https with this token (the forge's documented user names). */
export function pushAuthHeader(forge: 'github' | 'gitlab', token: string): string {
  const user = forge === 'github' ? 'x-access-token' : 'oauth2';
  return `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;
}

/** `text` with every occurrence of the secrets replaced (an error message that might quote a URL or a header). */
export function withoutSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
