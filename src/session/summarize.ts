// Summary generation: turns a CompactionPreparation into the structured summary text with one
// or two model calls (history, plus the prefix of a split turn, generated in parallel).
//
// Two ways to ask for the history summary:
// - in the conversation (when the caller gives `conversation`: a provider with prompt caching):
//   the summarized messages go out exactly as the agent's loop sent them, under its system
//   prompt, tools and thinking settings, with the instruction appended as one more user message,
//   so everything before the instruction is a cache read. The model is told not to call tools;
//   tool_choice stays the conversation's (another value would invalidate its cached messages),
//   and only a reply that calls a tool anyway is asked again with tool_choice none.
// - as a transcript: the messages serialized into one user message under the summarizer's own
//   system prompt, tool results cut to a few KB. Used without `conversation` (providers without
//   caching), when the conversation would not fit the context window (an overflow recovery) or
//   the in-conversation request is refused as too long, and always for the prefix of a split
//   turn (its kept end is not in the request, so the model needs it framed as a separate text).
// The model call is injected (`complete`), so the runtime can route it through permits, budgets
// and its own retry policy; by default it is the provider registry's `complete`.
import { complete as registryComplete } from '../ai/registry.js';
import { isOverflowErrorText } from '../ai/overflow.js';
import type { AssistantMessage, Context, Message, Model, StreamOptions, ThinkingLevel, Tool } from '../ai/types.js';
import type { AgentMessage } from '../agent/types.js';
import { SESSION_DEFAULTS } from './defaults.js';
import { fileListsOf, formatFileLists, stripFileLists } from './file-operations.js';
import type { CompactionPreparation } from './prepare-compaction.js';
import { serializeConversation } from './serialize-conversation.js';
import type { FileLists } from './types.js';

/** Anything with the shape of the registry's `complete`. It should not throw (a throw is caught). */
export type CompleteFunction = (model: Model, context: Context, options?: StreamOptions) => Promise<AssistantMessage>;

export interface SummarizeOptions {
  model: Model;
  complete?: CompleteFunction;
  signal?: AbortSignal;
  /** Extra focus for this summary ("keep the API design details"). */
  customInstructions?: string;
  /** Passed through to the model call (apiKey, headers, onRetry...). */
  streamOptions?: Omit<StreamOptions, 'signal' | 'maxTokens' | 'reasoning'>;
  /** The conversation as the agent's loop sends it: history summaries are asked for inside it (cache reads). */
  conversation?: SummaryConversation;
}

/** What the agent's requests are made of, so a summary request can repeat their prefix byte for byte. */
export interface SummaryConversation {
  systemPrompt: string;
  tools?: Tool[];
  /** The loop's conversion of session messages for the model. */
  convertToLlm: (messages: readonly AgentMessage[]) => Message[];
  /** The conversation's thinking level (thinking settings are part of the messages' cache key). */
  reasoning?: ThinkingLevel;
}

export interface CompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details: FileLists;
}

/** Failures are values: `retryable` says whether trying again later may help. */
export type SummaryOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: string; retryable: boolean; aborted: boolean };

export const SUMMARY_SECTIONS = [
  '## Goal',
  '## Constraints & Preferences',
  '## Progress',
  '### Done',
  '### In Progress',
  '### Blocked',
  '## Key Decisions',
  '## Next Steps',
  '## Critical Context',
] as const;

export const SUMMARIZER_SYSTEM_PROMPT =
  'You write handoff summaries of conversations between a user and an AI coding assistant. ' +
  'Read the conversation you are given and reply with the structured summary only. ' +
  'Do not answer questions from the conversation, do not continue it, do not add commentary.';

const FORMAT = `Use exactly this format (keep every heading; write "(none)" under a heading with nothing to say):

## Goal
What the user wants to achieve, in one to three sentences.

## Constraints & Preferences
- Requirements, conventions and preferences the user stated

## Progress
### Done
- [x] Finished work
### In Progress
- [ ] Work started but not finished
### Blocked
- Problems that stop progress, with the exact error

## Key Decisions
- **Decision**: why it was made

## Next Steps
1. What should happen next, in order

## Critical Context
- Anything else needed to continue: data, references, open questions`;

const INITIAL_INSTRUCTIONS = `Summarize the conversation above so that another assistant can continue the work without it.

${FORMAT}

Be brief in every section. Keep exact file paths, function and variable names, commands and error messages.`;

const UPDATE_INSTRUCTIONS = `The conversation above continues the work described in <previous-summary>. Produce an updated summary:
- keep everything from the previous summary that still holds;
- add the new progress, decisions and context from the conversation;
- move items that are now finished from In Progress to Done;
- rewrite Next Steps for the current state;
- drop only what is clearly obsolete.

${FORMAT}

Be brief in every section. Keep exact file paths, function and variable names, commands and error messages.`;

const TURN_PREFIX_INSTRUCTIONS = `The conversation above is the beginning of a turn whose end is kept verbatim elsewhere. Summarize it so the kept part makes sense on its own:

## Original Request
What the user asked for in this turn.

## Early Progress
- What was done so far in this turn

## Context for Suffix
- What the remaining part of the turn needs to know: files, results, errors

Be brief. Keep exact file paths, names and error messages.`;

/** How the instruction of an in-conversation summary request begins (tests and proxies recognize it by this). */
export const IN_CONVERSATION_SUMMARY_OPENING =
  'Stop working now: do not call any tool and do not continue the task. Reply with text only.';
const STOP_AND_SUMMARIZE = IN_CONVERSATION_SUMMARY_OPENING;

const IN_CONVERSATION_INITIAL = `${STOP_AND_SUMMARIZE}

${INITIAL_INSTRUCTIONS}`;

const IN_CONVERSATION_UPDATE = `${STOP_AND_SUMMARIZE}

The conversation above starts with a summary of earlier work (in <summary>). Produce an updated summary of the whole work:
- keep everything from that summary that still holds;
- add the new progress, decisions and context from the conversation after it;
- move items that are now finished from In Progress to Done;
- rewrite Next Steps for the current state;
- drop only what is clearly obsolete.

${FORMAT}

Be brief in every section. Keep exact file paths, function and variable names, commands and error messages.`;

export const NO_PRIOR_HISTORY = 'No prior history.';

// Errors that a later attempt will not fix: bad credentials, a request the API rejects, a
// conversation too large for the summarizer itself.
const PERMANENT =
  /\b(401|403|invalid.?api.?key|authentication|unauthori[sz]ed|permission|invalid_request|prompt is too long|context.?(length|window)|too many tokens|maximum context)\b/i;

/** Whether a failed summary call is worth retrying (rate limits, overload, 5xx, network...). */
export function isRetryableSummaryError(message: string): boolean {
  return !PERMANENT.test(message);
}

export function summaryMaxTokens(model: Model, reserveTokens: number, share: number): number {
  return Math.max(256, Math.min(model.maxTokens || Number.MAX_SAFE_INTEGER, Math.floor(reserveTokens * share)));
}

async function callSummarizer(
  prompt: string,
  maxTokens: number,
  reasoning: boolean,
  options: SummarizeOptions,
): Promise<SummaryOutcome<string>> {
  const context: Context = {
    systemPrompt: SUMMARIZER_SYSTEM_PROMPT,
    messages: [{ role: 'user', content: [{ type: 'text', text: prompt }], timestamp: Date.now() }],
  };
  const streamOptions: StreamOptions = { ...options.streamOptions, maxTokens };
  if (reasoning && options.model.reasoning) streamOptions.reasoning = 'high';
  return (await askModel(context, streamOptions, options)).result;
}

/** The summary request inside the conversation (see the top of this file). */
async function callInConversation(
  messages: readonly AgentMessage[],
  instructions: string,
  maxTokens: number,
  conversation: SummaryConversation,
  options: SummarizeOptions,
): Promise<SummaryOutcome<string>> {
  const context: Context = {
    systemPrompt: conversation.systemPrompt,
    messages: [
      ...conversation.convertToLlm(messages),
      { role: 'user', content: [{ type: 'text', text: instructions }], timestamp: Date.now() },
    ],
  };
  if (conversation.tools?.length) context.tools = conversation.tools;
  const streamOptions: StreamOptions = { ...options.streamOptions, maxTokens };
  if (conversation.reasoning && options.model.reasoning) streamOptions.reasoning = conversation.reasoning;
  const first = await askModel(context, streamOptions, options);
  if (!first.calledTool || !context.tools) return first.result;
  // It called a tool although told not to: ask once more with tools switched off.
  return (await askModel(context, { ...streamOptions, toolChoice: 'none' }, options)).result;
}

/** One summary call; `calledTool` says the reply called a tool instead of writing the summary. */
async function askModel(
  context: Context,
  streamOptions: StreamOptions,
  options: SummarizeOptions,
): Promise<{ result: SummaryOutcome<string>; calledTool: boolean }> {
  const complete = options.complete ?? registryComplete;
  if (options.signal) streamOptions.signal = options.signal;
  const done = (
    result: SummaryOutcome<string>,
    calledTool = false,
  ): { result: SummaryOutcome<string>; calledTool: boolean } => ({ result, calledTool });
  let reply: AssistantMessage;
  try {
    reply = await complete(options.model, context, streamOptions);
  } catch (err) {
    const aborted = options.signal?.aborted === true;
    const message = err instanceof Error ? err.message : String(err);
    return done({
      ok: false,
      error: `Summarization failed: ${message}`,
      retryable: !aborted && isRetryableSummaryError(message),
      aborted,
    });
  }
  if (reply.stopReason === 'aborted' || options.signal?.aborted)
    return done({ ok: false, error: 'Summarization was aborted.', retryable: false, aborted: true });
  if (reply.stopReason === 'error') {
    const message = reply.errorMessage ?? 'unknown provider error';
    return done({
      ok: false,
      error: `Summarization failed: ${message}`,
      retryable: isRetryableSummaryError(message),
      aborted: false,
    });
  }
  const calledTool = reply.content.some((b) => b.type === 'toolCall');
  const text = reply.content
    .filter((b) => b.type === 'text')
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('\n')
    .trim();
  // A reply that calls a tool is a summary only if it wrote one before the call.
  if (calledTool && !/^#+\s*Goal\b/m.test(text))
    return done(
      {
        ok: false,
        error: 'Summarization failed: the model called a tool instead of writing the summary.',
        retryable: true,
        aborted: false,
      },
      true,
    );
  if (!text)
    return done({
      ok: false,
      error: 'Summarization failed: the model returned no text.',
      retryable: true,
      aborted: false,
    });
  return done({ ok: true, value: text });
}

/**
 * Characters a transcript may take so the summary request fits the model's window with its reply:
 * at 4 characters per token, with a fifth kept back because servers count tokens their own way
 * (a conversation that overflowed the window is summarized inside that window).
 */
export function transcriptChars(model: Pick<Model, 'contextWindow'>, replyTokens: number): number {
  return Math.max(8_000, Math.floor((model.contextWindow - replyTokens - 1_000) * 4 * 0.8));
}

/**
 * A compaction's focus, marked as guidance: it shapes the summary, and a model that copied it in
 * would show the product's instruction to whoever reads the summary (a plan, a pull request).
 */
function focusNote(customInstructions: string | undefined): string {
  const focus = customInstructions?.trim();
  return focus
    ? `\n\nThe focus below is guidance for writing the summary; do not copy it into the summary.\nAdditional focus: ${focus}`
    : '';
}

/** The user prompt of a history summary request. */
export function buildSummaryPrompt(
  messages: readonly AgentMessage[],
  previousSummary?: string,
  customInstructions?: string,
  maxChars?: number,
): string {
  const room = maxChars === undefined ? undefined : Math.max(0, maxChars - (previousSummary?.length ?? 0) - 4000);
  let prompt = `<conversation>\n${serializeConversation(messages, undefined, room)}\n</conversation>\n\n`;
  if (previousSummary) prompt += `<previous-summary>\n${previousSummary}\n</previous-summary>\n\n`;
  prompt += previousSummary ? UPDATE_INSTRUCTIONS : INITIAL_INSTRUCTIONS;
  return prompt + focusNote(customInstructions);
}

export function buildTurnPrefixPrompt(messages: readonly AgentMessage[], maxChars?: number): string {
  return `<conversation>\n${serializeConversation(messages, undefined, maxChars === undefined ? undefined : Math.max(0, maxChars - 2000))}\n</conversation>\n\n${TURN_PREFIX_INSTRUCTIONS}`;
}

/** The instruction appended to the conversation for an in-conversation summary. */
export function buildInConversationInstructions(previousSummary?: string, customInstructions?: string): string {
  return (previousSummary ? IN_CONVERSATION_UPDATE : IN_CONVERSATION_INITIAL) + focusNote(customInstructions);
}

/**
 * The messages of an in-conversation summary: what the agent's context held for them, i.e. the
 * previous compaction's summary message (when there is one) and then the summarized messages.
 */
function conversationMessages(messages: readonly AgentMessage[], previousSummary: string | undefined): AgentMessage[] {
  if (previousSummary === undefined) return [...messages];
  return [{ role: 'compactionSummary', summary: previousSummary, tokensBefore: 0, timestamp: 0 }, ...messages];
}

/**
 * Summary of `messages`, updating `previousSummary` when given: inside the conversation when
 * `options.conversation` is given and it fits the window (`contextTokens`: its estimated size),
 * else as a transcript (see the top of this file).
 */
export async function generateSummary(
  messages: readonly AgentMessage[],
  reserveTokens: number,
  options: SummarizeOptions,
  previousSummary?: string,
  contextTokens?: number,
): Promise<SummaryOutcome<string>> {
  const maxTokens = summaryMaxTokens(options.model, reserveTokens, SESSION_DEFAULTS.compaction.summaryMaxTokensShare);
  const conversation = options.conversation;
  const fits = contextTokens === undefined || contextTokens + maxTokens <= options.model.contextWindow;
  if (conversation && fits) {
    const instructions = buildInConversationInstructions(previousSummary, options.customInstructions);
    const outcome = await callInConversation(
      conversationMessages(messages, previousSummary),
      instructions,
      maxTokens,
      conversation,
      options,
    );
    // Too long after all (the estimate was low): the transcript cuts tool results and fits.
    if (outcome.ok || !isOverflowErrorText(outcome.error)) return outcome;
  }
  return callSummarizer(
    buildSummaryPrompt(
      messages,
      previousSummary,
      options.customInstructions,
      transcriptChars(options.model, maxTokens),
    ),
    maxTokens,
    true,
    options,
  );
}

/**
 * Produces the compaction summary. History and turn prefix (split turn) are requested in
 * parallel; file lists are appended as tagged blocks.
 */
export async function compact(
  preparation: CompactionPreparation,
  options: SummarizeOptions,
): Promise<SummaryOutcome<CompactionResult>> {
  const reserve = preparation.settings.reserveTokens;
  const history: Promise<SummaryOutcome<string>> =
    preparation.messagesToSummarize.length > 0
      ? generateSummary(
          preparation.messagesToSummarize,
          reserve,
          options,
          preparation.previousSummary,
          preparation.tokensBefore,
        )
      : Promise.resolve({ ok: true, value: preparation.previousSummary ?? NO_PRIOR_HISTORY });
  const prefix: Promise<SummaryOutcome<string> | undefined> =
    preparation.isSplitTurn && preparation.turnPrefixMessages.length > 0
      ? callSummarizer(
          buildTurnPrefixPrompt(
            preparation.turnPrefixMessages,
            transcriptChars(
              options.model,
              summaryMaxTokens(options.model, reserve, SESSION_DEFAULTS.compaction.turnPrefixMaxTokensShare),
            ),
          ),
          summaryMaxTokens(options.model, reserve, SESSION_DEFAULTS.compaction.turnPrefixMaxTokensShare),
          false,
          options,
        )
      : Promise.resolve(undefined);
  const [h, p] = await Promise.all([history, prefix]);
  if (!h.ok) return h;
  if (p && !p.ok) return p;
  const base = stripFileLists(h.value);
  let summary = p ? `${base}\n\n---\n\n**Turn Context (split turn):**\n\n${p.value}` : base;
  const details = fileListsOf(preparation.fileOps);
  summary += formatFileLists(details);
  return {
    ok: true,
    value: { summary, firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: preparation.tokensBefore, details },
  };
}
