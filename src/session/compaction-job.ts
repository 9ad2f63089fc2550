// Compaction as a staged job recorded in the session itself:
//   cut_point          the plan (first kept entry, tokens before, split turn)
//   summary_requested  one per attempt
//   attempt_failed     a retryable failure, with the error and the backoff before the next attempt
//   gave_up            a human-readable reason (no compaction entry follows)
//   compaction         the result ("done"), carrying the job id
// Context rebuild ignores job entries, so a job that never reached its compaction entry (crash,
// give-up) leaves the context exactly as before; the next compaction simply starts a new job and
// notes which unfinished one it replaces. Run it between agent runs, never during one.
import { randomBytes } from 'node:crypto';
import { latestCompactionIndex } from './build-context.js';
import {
  DEFAULT_COMPACTION_SETTINGS,
  SESSION_DEFAULTS,
  type CompactionSettings,
  type RetrySettings,
} from './defaults.js';
import {
  prepareCompactionOrReason,
  type CompactionPreparation,
  type NoCompactionReason,
} from './prepare-compaction.js';
import type { CompactionJobFields, SessionStore } from './session-store.js';
import { compact, type CompactionResult, type SummarizeOptions } from './summarize.js';
import { KEPT_NOTHING, type CompactionJobEntry, type FileLists, type SessionEntry } from './types.js';

/** What a host hook may decide before the model is asked: veto, or supply the summary itself. */
export type CompactionHookDecision = { cancel: true; reason?: string } | { summary: string; details?: FileLists };

export interface RunCompactionOptions extends SummarizeOptions {
  settings?: CompactionSettings;
  /** Tokens every request carries besides its messages (system prompt, tools); see PrepareOptions. */
  overheadTokens?: number;
  retry?: Partial<RetrySettings>;
  beforeCompact?: (
    preparation: CompactionPreparation,
    signal: AbortSignal | undefined,
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
  ) => CompactionHookDecision | void | Promise<CompactionHookDecision | void>;
}

export type CompactionOutcome =
  | {
      status: 'compacted';
      jobId: string;
      entryId: string;
      result: CompactionResult;
      attempts: number;
      fromHook: boolean;
    }
  | { status: 'skipped'; reason: NoCompactionReason; message: string }
  | { status: 'cancelled'; message: string }
  | { status: 'aborted'; jobId?: string; message: string }
  | { status: 'failed'; jobId?: string; attempts: number; message: string };

/**
 * A compaction that was asked for and did not happen. `reason` says why a skip was a skip, so a
 * caller that treats "nothing to compact" differently reads the field, never the message.
 */
export class CompactionNotDoneError extends Error {
  constructor(
    readonly status: 'skipped' | 'cancelled' | 'aborted' | 'failed',
    message: string,
    readonly reason?: NoCompactionReason,
  ) {
    super(message);
  }
}

const SKIP_MESSAGES: Record<NoCompactionReason, string> = {
  already_compacted: 'Already compacted: nothing was added since the last compaction.',
  nothing_to_compact: 'Nothing to compact: the session is smaller than the part that is always kept.',
};

/** The latest job on the path that has neither a compaction entry nor a give-up. */
export function findIncompleteCompactionJob(
  path: readonly SessionEntry[],
): { jobId: string; entries: CompactionJobEntry[] } | undefined {
  const stop = latestCompactionIndex(path);
  const finished = new Set<string>();
  let found: { jobId: string; entries: CompactionJobEntry[] } | undefined;
  for (let i = path.length - 1; i > stop; i--) {
    const e = path[i]!;
    if (e.type !== 'compaction_job') continue;
    if (e.stage === 'gave_up') finished.add(e.jobId);
    else if (!finished.has(e.jobId)) {
      if (!found) found = { jobId: e.jobId, entries: [] };
      if (found.jobId === e.jobId) found.entries.unshift(e);
    }
  }
  return found;
}

function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The result as recorded: a compaction that kept nothing points at itself (SessionStore.appendCompaction). */
function keptIdResolved(result: CompactionResult, entryId: string): CompactionResult {
  return result.firstKeptEntryId === KEPT_NOTHING ? { ...result, firstKeptEntryId: entryId } : result;
}

/** Prepares, summarizes (with retries) and appends the compaction, recording every stage. */
export async function runCompaction(store: SessionStore, options: RunCompactionOptions): Promise<CompactionOutcome> {
  const settings = options.settings ?? DEFAULT_COMPACTION_SETTINGS;
  const retry: RetrySettings = { ...SESSION_DEFAULTS.summaryRetry, ...options.retry };
  const path = store.currentPath();
  const prepared = prepareCompactionOrReason(path, settings, {
    contextWindow: options.model.contextWindow,
    overheadTokens: options.overheadTokens,
  });
  if ('reason' in prepared)
    return { status: 'skipped', reason: prepared.reason, message: SKIP_MESSAGES[prepared.reason] };
  const preparation = prepared.preparation;
  const unfinished = findIncompleteCompactionJob(path);

  let decision: CompactionHookDecision | undefined;
  if (options.beforeCompact) {
    try {
      decision = (await options.beforeCompact(preparation, options.signal)) ?? undefined;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return {
        status: 'failed',
        attempts: 0,
        message: `Compaction hook failed: ${why}. Nothing was recorded; fix the hook or compact without it.`,
      };
    }
  }
  if (decision && 'cancel' in decision)
    return { status: 'cancelled', message: decision.reason ?? 'Compaction cancelled by a hook.' };

  const jobId = randomBytes(4).toString('hex');
  let expectedLeaf = store.leafId;
  // Each stage is one append; if anything else moved the leaf meanwhile, the job stops untouched.
  const record = (write: () => string): string | undefined => {
    if (store.leafId !== expectedLeaf) return undefined;
    expectedLeaf = write();
    return expectedLeaf;
  };
  const job = (fields: CompactionJobFields): string | undefined => record(() => store.appendCompactionJob(fields));
  const changed = (attempts: number): CompactionOutcome => ({
    status: 'failed',
    jobId,
    attempts,
    message:
      'The session changed while compacting (its leaf moved); the compaction was dropped and the context is unchanged.',
  });

  const cutPoint: CompactionJobFields = {
    type: 'compaction_job',
    jobId,
    stage: 'cut_point',
    firstKeptEntryId: preparation.firstKeptEntryId,
    tokensBefore: preparation.tokensBefore,
    isSplitTurn: preparation.isSplitTurn,
    summarizeCount: preparation.messagesToSummarize.length + preparation.turnPrefixMessages.length,
  };
  if (unfinished) cutPoint.restartsJobId = unfinished.jobId;
  if (job(cutPoint) === undefined) return changed(0);

  if (decision && 'summary' in decision) {
    const { summary, details } = decision;
    const entryId = record(() =>
      store.appendCompaction(summary, preparation.firstKeptEntryId, preparation.tokensBefore, details, true, jobId),
    );
    if (entryId === undefined) return changed(0);
    const result = keptIdResolved(
      {
        summary,
        firstKeptEntryId: preparation.firstKeptEntryId,
        tokensBefore: preparation.tokensBefore,
        details: details ?? { readFiles: [], modifiedFiles: [] },
      },
      entryId,
    );
    return { status: 'compacted', jobId, entryId, result, attempts: 0, fromHook: true };
  }

  for (let attempt = 1; ; attempt++) {
    if (
      job({
        type: 'compaction_job',
        jobId,
        stage: 'summary_requested',
        attempt,
        provider: options.model.provider,
        modelId: options.model.id,
      }) === undefined
    ) {
      return changed(attempt - 1);
    }
    const outcome = await compact(preparation, options);
    if (outcome.ok) {
      const r = outcome.value;
      const entryId = record(() =>
        store.appendCompaction(r.summary, r.firstKeptEntryId, r.tokensBefore, r.details, false, jobId),
      );
      if (entryId === undefined) return changed(attempt);
      return {
        status: 'compacted',
        jobId,
        entryId,
        result: keptIdResolved(r, entryId),
        attempts: attempt,
        fromHook: false,
      };
    }
    const giveUp = (reason: string): CompactionOutcome | undefined =>
      job({ type: 'compaction_job', jobId, stage: 'gave_up', attempts: attempt, reason }) === undefined
        ? changed(attempt)
        : undefined;
    if (outcome.aborted) {
      const message = 'Compaction was aborted; the context is unchanged.';
      return giveUp(message) ?? { status: 'aborted', jobId, message };
    }
    if (!outcome.retryable || attempt >= retry.maxAttempts) {
      const message =
        `Compaction gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${outcome.error} ` +
        (outcome.retryable
          ? 'The provider kept failing; try again later.'
          : 'Retrying would not help; check the model, key and settings.') +
        ' The context is unchanged.';
      return giveUp(message) ?? { status: 'failed', jobId, attempts: attempt, message };
    }
    const delay = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
    if (
      job({
        type: 'compaction_job',
        jobId,
        stage: 'attempt_failed',
        attempt,
        error: outcome.error,
        retryInMs: delay,
      }) === undefined
    )
      return changed(attempt);
    if (!(await sleep(delay, options.signal))) {
      const message = 'Compaction was aborted while waiting to retry; the context is unchanged.';
      return giveUp(message) ?? { status: 'aborted', jobId, message };
    }
  }
}
