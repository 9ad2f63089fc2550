// Moving within a session (navigate / rewind, with an optional branch summary) and branching
// into a new session file (fork). The session layer does the tree work; this file decides how
// the branch summary is written (extractive for scripted runs, else a model call), and what
// AgentSession.navigate / fork report (their results and session_navigate / session_fork events).
import { dirname } from 'node:path';
import type { Model, StreamOptions } from '../ai/types.js';
import {
  BRANCH_SUMMARY_PREAMBLE,
  collectEntriesForBranchSummary,
  navigateTree,
  prepareBranchEntries,
  type NavigateOptions,
} from '../session/branch-summary.js';
import { SESSION_DEFAULTS } from '../session/defaults.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompleteFunction } from '../session/summarize.js';
import type { ForkResult, NavigateResult } from './agent-session-types.js';
import { buildExtractiveSummary } from './extractive-summary.js';
import type { AgentSessionEvent } from './session-events.js';

export interface NavigationRequest {
  summarize?: boolean;
  customInstructions?: string;
  label?: string;
  /** Cancels the branch summary's model call; the navigation is then cancelled (the session is unchanged). */
  signal?: AbortSignal;
}

export interface NavigationContext {
  store: SessionStore;
  model: Model;
  complete: CompleteFunction;
  streamOptions: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'>;
  summaries: 'model' | 'extractive';
}

/** The session layer's navigate options for a request. */
export function navigateOptions(c: NavigationContext, targetId: string, request: NavigationRequest): NavigateOptions {
  const nav: NavigateOptions = {};
  if (request.label !== undefined) nav.label = request.label;
  if (!request.summarize) return nav;
  if (c.summaries === 'model') {
    nav.summarize = {
      model: c.model,
      complete: c.complete,
      customInstructions: request.customInstructions,
      streamOptions: c.streamOptions,
    };
    if (request.signal) nav.summarize.signal = request.signal;
    return nav;
  }
  const { entries } = collectEntriesForBranchSummary(c.store, c.store.leafId, targetId);
  const d = SESSION_DEFAULTS.branchSummary;
  const prepared = prepareBranchEntries(entries, (c.model.contextWindow || d.fallbackContextWindow) - d.reserveTokens);
  if (prepared.messages.length > 0) {
    const s = buildExtractiveSummary({
      messages: prepared.messages,
      fileOps: prepared.fileOps,
    });
    nav.providedSummary = { summary: BRANCH_SUMMARY_PREAMBLE + s.summary, details: s.details };
  }
  return nav;
}

/**
 * A new store holding the path before the user message `entryId` (same folder, or memory),
 * and that message's text. Throws with a clear message for anything but a user message.
 */
export function forkStore(store: SessionStore, entryId: string): { next: SessionStore; text: string } {
  const entry = store.getEntry(entryId);
  if (!entry) throw new Error(`Cannot fork from ${entryId}: no such entry in this session.`);
  if (entry.type !== 'message' || entry.message.role !== 'user') {
    const what = entry.type === 'message' ? `${entry.message.role} message` : `${entry.type} entry`;
    throw new Error(
      `Cannot fork from ${entryId}: it is a ${what}; fork from a user message (use navigate to move within this session).`,
    );
  }
  const content = entry.message.content;
  const text = typeof content === 'string' ? content : content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const next = store.createBranchedSession(entry.parentId, store.path !== undefined ? dirname(store.path) : ':memory:');
  return { next, text };
}

/**
 * Moves the store's leaf to `targetId` (rewind / branch). Returns the result, and the
 * session_navigate event when the leaf moved (the agent's context must then be rebuilt).
 */
export async function moveLeaf(
  c: NavigationContext,
  targetId: string,
  request: NavigationRequest,
): Promise<{ result: NavigateResult; event?: AgentSessionEvent }> {
  const fromLeafId = c.store.leafId;
  const outcome = await navigateTree(c.store, targetId, navigateOptions(c, targetId, request));
  if (outcome.status === 'failed' || outcome.status === 'aborted') throw new Error(outcome.message);
  const result: NavigateResult = { leafId: outcome.leafId };
  if (outcome.status !== 'moved') return { result };
  if (outcome.editorText !== undefined) result.editorText = outcome.editorText;
  if (outcome.summaryEntryId !== undefined) result.summaryEntryId = outcome.summaryEntryId;
  const event: AgentSessionEvent = { type: 'session_navigate', fromLeafId, toLeafId: outcome.leafId };
  if (result.summaryEntryId) event.summaryEntryId = result.summaryEntryId;
  if (result.editorText !== undefined) event.editorText = result.editorText;
  return { result, event };
}

/** The result and the session_fork event of a fork from `old` into `next`. */
export function forkReport(
  old: SessionStore,
  next: SessionStore,
  text: string,
): { result: ForkResult; event: AgentSessionEvent } {
  const result: ForkResult = { text, sessionId: next.id };
  if (next.path !== undefined) result.sessionFile = next.path;
  const event: AgentSessionEvent = { type: 'session_fork', sessionId: next.id };
  if (old.path !== undefined) event.fromSessionFile = old.path;
  if (next.path !== undefined) event.sessionFile = next.path;
  return { result, event };
}
