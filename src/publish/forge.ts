// What publishing needs from a forge (GitHub, GitLab), whatever its API: find, open, update and
// close the pull/merge request of a branch, and read how it stands (state, checks, review,
// mergeable). Tokens come from the environment (GITHUB_TOKEN / GH_TOKEN, GITLAB_TOKEN) or, for
// GitHub, `gh auth token`; they are handed to the client and the push, and never printed,
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
}

/** Every call that changes something on the forge is one of the create/update/add/request/close methods. */
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
