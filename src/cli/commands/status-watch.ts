// `orchestrate status <run> --watch`: asks the forge how each changeset's pull request stands every
// interval (each look appended to changesets-status.jsonl, as a single `status` does), and shows it:
// on a terminal the table and the burndown redrawn in place; otherwise the table once, then only
// what changed, one line each (a log a script or CI can keep). It ends by itself once every pull
// request is merged or closed, and cleanly (exit 0) on Ctrl-C or SIGTERM. Rate limits: the forge
// clients wait as the API asks (Octokit's throttling plugin, GitLab's Retry-After); an interval
// that would spend more than GitHub's hourly allowance is pointed out. Tokens never reach output:
// forge errors come back redacted from trackRun.
import { burndownLine, burndownSparkline, formatChangesetStatus, mergedCount } from '../../display/changesets-text.js';
import { formatClock } from '../../display/format-units.js';
import { type TrackedChangeset, trackRun } from '../../publish/track.js';
import { burndown, progressCounts, readObservations } from '../../run/changesets.js';
import { followUpWaitingLine } from '../../run/follow-up-record.js';
import { type CliContext, EXIT } from '../cli-io.js';

export interface StatusWatchOptions {
  intervalMs: number;
  json: boolean;
  /** Aborted by Ctrl-C / SIGTERM: the watch stops after the look in progress. */
  signal: AbortSignal;
  /** Run after each look (status --watch --follow-up): the follow-up rounds and auto-merges. */
  afterLook?: () => Promise<unknown>;
}

/** GET requests one look makes per pull request (the pull, its checks, its reviews). */
const REQUESTS_PER_LOOK = 3;
/** GitHub's primary limit for a token, requests per hour. */
const GITHUB_HOURLY = 5000;

type Tracked = Awaited<ReturnType<typeof trackRun>>;

const CLEAR = '\x1b[H\x1b[2J';

const settled = (r: TrackedChangeset) => !r.url || r.state === 'merged' || r.state === 'closed';

/** What changed of one changeset between two looks ("open -> merged, checks pending -> passing"). */
function changes(before: TrackedChangeset | undefined, now: TrackedChangeset): string | undefined {
  if (!before) return `${now.state}${now.url ? ` ${now.url}` : ''}`;
  const out: string[] = [];
  if (before.state !== now.state) out.push(`${before.state} -> ${now.state}`);
  for (const f of ['checks', 'review', 'mergeable'] as const)
    if (before[f] !== now[f]) out.push(`${f} ${before[f] ?? '-'} -> ${now[f] ?? '-'}`);
  if (before.progress !== now.progress) out.push(`now ${now.progress.replace('_', ' ')}`);
  if (!before.autoMerge && now.autoMerge) out.push('auto-merge on');
  if (before.error !== now.error) out.push(now.error ? `error: ${now.error}` : 'the forge answers again');
  const [was, is] = [before.followUpWaiting, now.followUpWaiting];
  if (is && is.round !== was?.round) out.push(`follow-up ${followUpWaitingLine(is)}`);
  else if (was && !is) out.push(`follow-up round ${was.round} answered`);
  return out.length ? out.join(', ') : undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * One look at the forge for each changeset of the run (`status` and every round of `--watch`).
 * A number is the exit code after the error has been printed: the run has no changesets.json, or
 * the run folder cannot be read.
 */
export async function lookAtChangesets(
  runDir: string,
  ctx: CliContext,
  /** Warnings already printed (a watch says each once). */
  warned: Set<string> = new Set(),
): Promise<number | (Tracked & { file: NonNullable<Tracked['file']> })> {
  let tracked: Tracked;
  try {
    tracked = await trackRun(runDir, ctx.env);
  } catch (err) {
    ctx.stderr(`orchestrate: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.taskFailed;
  }
  const { file } = tracked;
  for (const w of tracked.warnings ?? []) {
    if (!warned.has(w)) ctx.stderr(`orchestrate: ${w}\n`);
    warned.add(w);
  }
  if (!file) {
    ctx.stderr(
      `orchestrate: ${runDir} has no changesets.json\n  hint: a run writes it when its recipe has a publish: block\n`,
    );
    return EXIT.usage;
  }
  return { ...tracked, file };
}

export async function watchStatus(runDir: string, ctx: CliContext, opts: StatusWatchOptions): Promise<number> {
  let previous: Map<string, TrackedChangeset> | undefined;
  let lastMerged = -1;
  let warned = false;
  const saidWarnings = new Set<string>();
  while (!opts.signal.aborted) {
    const tracked = await lookAtChangesets(runDir, ctx, saidWarnings);
    if (typeof tracked === 'number') return tracked;
    const { rows } = tracked;
    const now = Date.now();
    const obs = readObservations(runDir);
    const merged = mergedCount(obs);
    const withPr = rows.filter((r) => r.url).length;
    if (
      !warned &&
      rows.some((r) => r.url && tracked.file.changesets.some((c) => c.key === r.key && c.forge === 'github'))
    ) {
      warned = true;
      const perHour = Math.round((REQUESTS_PER_LOOK * withPr * 3_600_000) / opts.intervalMs);
      if (perHour > GITHUB_HOURLY / 2)
        ctx.stderr(
          `orchestrate: at this interval the watch makes about ${perHour} GitHub requests an hour (a token has ${GITHUB_HOURLY}); past the limit each look waits as GitHub asks. A longer --interval spares it.\n`,
        );
    }

    if (opts.json) {
      ctx.stdout(
        `${JSON.stringify({ ts: now, changesets: rows, merged, total: rows.length, progress: progressCounts(rows), burndown: burndown(obs, rows.length) })}\n`,
      );
    } else if (ctx.isTTY) {
      const spark = burndownSparkline(obs, rows.length, now, { unicode: true, width: 30 });
      ctx.stdout(
        `${CLEAR}${formatChangesetStatus(rows, merged)}${spark ? `merged over time ${spark}\n` : ''}\n` +
          `${formatClock(now)} · every ${opts.intervalMs / 1000}s · Ctrl-C stops\n`,
      );
    } else if (!previous) {
      ctx.stdout(formatChangesetStatus(rows, merged));
    } else {
      for (const r of rows) {
        const what = changes(previous.get(r.key), r);
        if (what) ctx.stdout(`${formatClock(now)} ${r.key}: ${what}\n`);
      }
      if (merged !== lastMerged) ctx.stdout(`${formatClock(now)} ${burndownLine(rows.length, merged)}\n`);
    }
    previous = new Map(rows.map((r) => [r.key, r]));
    lastMerged = merged;

    await opts.afterLook?.();
    if (rows.every(settled)) {
      const without = rows.length - withPr;
      const tail = without ? ` (${without} without a pull request)` : '';
      const msg =
        withPr === 0
          ? `No pull request to watch${tail}: \`orchestrate publish <run> --apply\` opens them.`
          : `All ${withPr} pull requests are merged or closed${tail}: the watch ends.`;
      (opts.json ? ctx.stderr : ctx.stdout)(`${msg}\n`);
      return EXIT.ok;
    }
    await sleep(opts.intervalMs, opts.signal);
  }
  ctx.stderr('orchestrate: status --watch stopped\n');
  return EXIT.ok;
}
