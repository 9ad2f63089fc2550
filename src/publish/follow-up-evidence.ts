// What a follow-up round sends back to the instance's agent, as text: the failing checks of its
// pull request with the tail of each failing job's log (cut like a tool result: the last lines,
// where a job names its failure), or the review comments not answered yet with their file and
// line. Also the evidence's id (what names a round: the head commit CI failed on, or the ids of
// the comments), the first message of the re-run, the commit message of a round and the reply
// each handled comment gets. Pure text in, text out.
import { truncateTail } from '../tools/truncate.js';
import type { CiFailure, ReviewComment } from './forge.js';

/** A terminal colour or cursor sequence (job logs are written for a terminal). */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');

/** How much of a failing job's log the agent reads (its end), as a tool result would be cut. */
const LOG_LINES = 120;
const LOG_BYTES = 12 * 1024;

export type FollowUpEvidence =
  | { reason: 'ci_failed'; id: string; headSha: string; failures: CiFailure[] }
  | { reason: 'changes_requested'; id: string; comments: ReviewComment[] };

export function ciEvidence(headSha: string, failures: CiFailure[]): FollowUpEvidence {
  return { reason: 'ci_failed', id: `ci:${headSha}`, headSha, failures };
}

export function reviewEvidence(comments: ReviewComment[]): FollowUpEvidence {
  const ids = comments.map((c) => c.id).sort();
  return { reason: 'changes_requested', id: `review:${ids.join(',')}`, comments };
}

/** The end of a job log as the agent reads it: colours and GitHub's line timestamps dropped, the last lines kept. */
export function logTail(log: string): string {
  const clean = log
    .replace(ANSI, '')
    .split('\n')
    .map((l) => l.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z /, '').trimEnd())
    .join('\n')
    .trimEnd();
  const t = truncateTail(clean, { maxLines: LOG_LINES, maxBytes: LOG_BYTES });
  return t.truncated ? `[${t.totalLines - t.outputLines} earlier lines cut]\n${t.content}` : t.content;
}

/** The evidence as the agent reads it. */
export function evidenceText(e: FollowUpEvidence): string {
  if (e.reason === 'ci_failed') {
    return e.failures
      .map((f) => {
        const head = `Check "${f.name}" failed${f.summary ? `: ${f.summary}` : ''}${f.url ? ` (${f.url})` : ''}`;
        return f.log ? `${head}\nThe end of its log:\n\`\`\`\n${logTail(f.log)}\n\`\`\`` : head;
      })
      .join('\n\n');
  }
  return e.comments
    .map(
      (c) =>
        `- ${c.path ?? '(the pull request)'}${c.line !== undefined ? `:${c.line}` : ''} (${c.author}): ${c.body.trim()}`,
    )
    .join('\n');
}

/** The first message of a follow-up round. */
export function followUpPrompt(args: {
  prompt: string;
  summary?: string;
  evidence: FollowUpEvidence;
  url: string;
  branch: string;
}): string {
  const why =
    args.evidence.reason === 'ci_failed'
      ? `Its checks failed on the latest commit. Find the cause in the failing log below and fix the change so the checks pass.`
      : `A reviewer asked for changes in these comments. Make the changes they ask for (each comment names its file and line).`;
  return [
    `You made this change before and it was published as ${args.url} (branch ${args.branch}). This working tree holds that branch as it was pushed. ${why} Change only what is needed for that; the fix is pushed as a new commit on the same branch.`,
    `The task:\n${args.prompt.trim()}`,
    `Summary of the change:\n${args.summary?.trim() || '(none was recorded)'}`,
    args.evidence.reason === 'ci_failed'
      ? `The failing checks:\n${evidenceText(args.evidence)}`
      : `The review comments:\n${evidenceText(args.evidence)}`,
  ].join('\n\n');
}

/** The commit message of a round: the same round always makes the same message (and commit). */
export function followUpMessage(reason: 'ci_failed' | 'changes_requested', round: number): string {
  return reason === 'ci_failed'
    ? `Fix the failing checks (follow-up ${round})`
    : `Address the review comments (follow-up ${round})`;
}

/** The answer a handled review comment gets: the commit that changed it and what the agent said. */
export function replyText(commit: string, round: number, files: readonly string[], said: string | undefined): string {
  const what = files.length ? ` (${files.join(', ')})` : '';
  const note = said?.trim() ? `\n\n${said.trim().slice(0, 1500)}` : '';
  return `Changed in ${commit.slice(0, 12)}${what}, follow-up round ${round}.${note}`;
}
