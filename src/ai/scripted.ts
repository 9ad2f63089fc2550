// The scripted provider (kernel-spec 11.2): a first-class offline model that replays a script
// through the full streaming protocol. Used by tests, benchmarks and offline recipe runs.
//
// Turn selection is stateless by default: the reply for a call is the script turn at index
// "number of successful assistant replies already in the context", so one script can drive many
// agents and a resumed conversation continues where it stopped. Error turns are the exception:
// each fires once per provider instance (so a retry gets the next turn). After a compaction in
// the middle of a run, whose summary stands in for earlier replies, the next reply follows the
// last one this provider served. How a chosen turn is streamed lives in scripted-play.ts.
import { aiDefaults } from './defaults.js';
import { AssistantMessageEventStream, emptyAssistantMessage } from './event-stream.js';
import { ABORTED_TEXT, isAssistantMessage, planOf, play } from './scripted-play.js';
import { transformMessages } from './transform-messages.js';
import type { AssistantMessage, Context, Message, Model, StreamFunction, StreamOptions, Usage } from './types.js';
import { computeCost } from './usage.js';

export interface ScriptedToolCall {
  name: string;
  args?: Record<string, unknown>;
  /** Default: a deterministic id from the call and block number. */
  id?: string;
}

/** A reply. `content` (explicit blocks) wins over the text/thinking/tools shorthand. */
export interface ScriptedReply {
  thinking?: string;
  thinkingSignature?: string;
  text?: string;
  tools?: ScriptedToolCall[];
  content?: AssistantMessage['content'];
  /** Default: "toolUse" when there are tool calls, else "stop". */
  stopReason?: 'stop' | 'length' | 'toolUse';
  /** Overrides of the deterministic token counts. */
  usage?: Partial<Pick<Usage, 'input' | 'output' | 'cacheRead' | 'cacheWrite'>>;
  /** Wait this long before replying (honours abort). */
  delayMs?: number;
  /** Wait this long before each chunk of this turn (a reply written slowly); overrides the provider's chunkDelayMs. */
  chunkDelayMs?: number;
}

/** A failure: streams the first `afterBlocks` blocks (default 0) of its content, then errors. */
export interface ScriptedError extends Omit<ScriptedReply, 'stopReason'> {
  error: string;
  stopReason?: 'error' | 'aborted';
  afterBlocks?: number;
}

export type ScriptedTurnSpec = ScriptedReply | ScriptedError;
/** Computes the turn from what the model was sent; callIndex counts this provider's calls from 0. */
export type ScriptedTurnFn = (context: Context, callIndex: number) => ScriptedTurnSpec | AssistantMessage;
export type ScriptedTurn = ScriptedTurnSpec | AssistantMessage | ScriptedTurnFn;

export interface ScriptedConversation {
  /** Tested against the first user message's text, followed by "\n" and the system prompt. */
  match: RegExp;
  turns: ScriptedTurn[];
}

export interface ScriptedScript {
  /** The default conversation. */
  turns: ScriptedTurn[];
  /** Picked by `match`, first match wins; strings may use {{match.N}} / {{match.name}}. */
  conversations?: ScriptedConversation[];
}

export interface ScriptedProviderOptions {
  /** Characters per delta (default 24). */
  chunkSize?: number;
  /** Delay between chunks in ms (default 0: a microtask yield, so abort is still seen between chunks). */
  chunkDelayMs?: number;
  /** Overflow mode: fail with a "prompt is too long" error when the input estimate exceeds this. */
  contextWindow?: number;
  /** "replies" (default): stateless, by successful replies in the context; "calls": by call count. */
  turnSelection?: 'replies' | 'calls';
  /**
   * Recorded contexts show messages after the cross-provider transform, as a real provider would
   * send them (default true; computed lazily, on first read). false: exactly as received.
   */
  recordTransformed?: boolean;
  /** Keep every received context in `calls` (default true); turn off for long runs to save memory. */
  record?: boolean;
}

export interface ScriptedProvider extends StreamFunction {
  /** Every context received, in call order (messages are a snapshot array). */
  readonly calls: Context[];
  /** Forgets recorded calls, fired error turns and the call counter. */
  reset(): void;
  readonly script: ScriptedScript;
}

function isErrorTurn(t: ScriptedTurn): boolean {
  if (typeof t === 'function') return false;
  if (isAssistantMessage(t)) return t.stopReason === 'error' || t.stopReason === 'aborted';
  return typeof (t as ScriptedError).error === 'string';
}

/** Where the turns of reply k live: error turns before it, then the reply turn (precomputed per list). */
interface TurnIndex {
  /** replyAt[k] = script index of the k-th non-error turn. */
  replyAt: number[];
  /** groupStart[k] = first script index belonging to reply k (its error turns come first). */
  groupStart: number[];
}

function indexTurns(turns: readonly ScriptedTurn[]): TurnIndex {
  const replyAt: number[] = [];
  const groupStart: number[] = [];
  let start = 0;
  turns.forEach((t, i) => {
    if (isErrorTurn(t)) return;
    replyAt.push(i);
    groupStart.push(start);
    start = i + 1;
  });
  groupStart.push(start); // trailing error turns belong to the reply after the last one
  return { replyAt, groupStart };
}

const isReply = (m: Message): boolean =>
  m.role === 'assistant' && m.stopReason !== 'error' && m.stopReason !== 'aborted';

function firstUserText(messages: readonly Message[]): string {
  for (const m of messages) {
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return m.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  }
  return '';
}

function substitute<T>(value: T, match: RegExpExecArray): T {
  if (typeof value === 'string') {
    if (!value.includes('{{match.')) return value;
    return value.replace(/\{\{match\.(\w+)\}\}/g, (whole, key: string) => {
      const v = /^\d+$/.test(key) ? match[Number(key)] : match.groups?.[key];
      return v ?? whole;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => substitute(v, match)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substitute(v, match);
    return out as T;
  }
  return value;
}

// Deterministic token counting, cached per message object so long conversations stay cheap.
const messageChars = new WeakMap<object, number>();
const toolChars = new WeakMap<object, number>();

function charsOfMessage(m: Message): number {
  let n = messageChars.get(m);
  if (n === undefined) {
    n = JSON.stringify(m).length;
    messageChars.set(m, n);
  }
  return n;
}

/**
 * The start of a compaction summary as the agent layer converts it for the model
 * (COMPACTION_SUMMARY_PREFACE in src/agent/convert-to-llm.ts; a test keeps the two equal).
 */
export const COMPACTION_SUMMARY_START = 'Earlier history of this conversation was compacted';

/** A compacted context starts with its summary (the session rebuilds it that way): O(1) per call. */
function holdsCompactionSummary(messages: readonly Message[]): boolean {
  const m = messages[0];
  if (m?.role !== 'user') return false;
  const first = typeof m.content === 'string' ? m.content : m.content[0]?.type === 'text' ? m.content[0].text : '';
  return first.startsWith(COMPACTION_SUMMARY_START);
}

/** What the provider knows about a conversation: its messages so far, their size and reply count. */
interface ConversationTally {
  /** The (snapshot) array counted, and its length. */
  messages: readonly Message[];
  length: number;
  chars: number;
  replies: number;
}

/**
 * Size and reply count of `messages`. Conversations only grow between calls, so the tally of the
 * previous call (found by the first message) is extended by the new tail; anything else is
 * recounted. Keeps a call O(new messages) plus a pointer comparison of the prefix.
 */
function tallyMessages(messages: readonly Message[], cache: WeakMap<object, ConversationTally>): ConversationTally {
  const first = messages[0];
  let start = 0;
  let chars = 0;
  let replies = 0;
  const prev = first ? cache.get(first) : undefined;
  if (prev && prev.length <= messages.length) {
    let same = true;
    for (let i = prev.length - 1; i >= 0; i--) {
      if (prev.messages[i] !== messages[i]) {
        same = false;
        break;
      }
    }
    if (same) {
      start = prev.length;
      chars = prev.chars;
      replies = prev.replies;
    }
  }
  for (let i = start; i < messages.length; i++) {
    const m = messages[i]!;
    chars += charsOfMessage(m);
    if (isReply(m)) replies++;
  }
  const tally = { messages, length: messages.length, chars, replies };
  if (first) cache.set(first, tally);
  return tally;
}

function charsOfTools(tools: Context['tools']): number {
  if (!tools?.length) return 0;
  let t = toolChars.get(tools);
  if (t === undefined) {
    t = JSON.stringify(tools).length;
    toolChars.set(tools, t);
  }
  return t;
}

/** chars / 4 of the serialized context (system prompt, messages, tools), rounded up. */
export function scriptedInputTokens(context: Context): number {
  let chars = (context.systemPrompt?.length ?? 0) + charsOfTools(context.tools);
  for (const m of context.messages) chars += charsOfMessage(m);
  return Math.ceil(chars / aiDefaults.charsPerToken);
}

/** A recorded context whose messages are transformed on first read (tests read few of them). */
function recordedContext(context: Context, snapshot: Message[], model: Model, transform: boolean): Context {
  if (!transform) return { systemPrompt: context.systemPrompt, messages: snapshot, tools: context.tools };
  let transformed: Message[] | undefined;
  // An accessor in the literal keeps the object's shape fast (defineProperty would not).
  return {
    systemPrompt: context.systemPrompt,
    get messages(): Message[] {
      transformed ??= transformMessages(snapshot, model);
      return transformed;
    },
    tools: context.tools,
  };
}

/** Accepts a list of turns or a full script. */
export function createScriptedProvider(
  script: ScriptedTurn[] | ScriptedScript,
  options: ScriptedProviderOptions = {},
): ScriptedProvider {
  const normalized: ScriptedScript = Array.isArray(script) ? { turns: script } : script;
  const chunkSize = Math.max(1, options.chunkSize ?? aiDefaults.scriptedChunkSize);
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const byCalls = options.turnSelection === 'calls';
  const recordTransformed = options.recordTransformed ?? true;
  const record = options.record ?? true;
  const tallies = new WeakMap<object, ConversationTally>();
  /** Per conversation: the highest reply number this provider served successfully. */
  const served = new Map<number, number>();
  const indexes = new WeakMap<readonly ScriptedTurn[], TurnIndex>();
  const fired = new Set<string>();
  const calls: Context[] = [];
  let callCount = 0;
  // The conversation choice depends only on the first user message and system prompt.
  let lastPick:
    | { first: Message | undefined; system: string | undefined; conv: number; match?: RegExpExecArray }
    | undefined;

  function pickConversation(context: Context): {
    conv: number;
    turns: ScriptedTurn[];
    match?: RegExpExecArray;
    label: string;
  } {
    const convs = normalized.conversations ?? [];
    if (convs.length === 0) return { conv: -1, turns: normalized.turns, label: 'default' };
    const first = context.messages.find((m) => m.role === 'user');
    if (!lastPick || lastPick.first !== first || lastPick.system !== context.systemPrompt) {
      const haystack = `${firstUserText(context.messages)}\n${context.systemPrompt ?? ''}`;
      let conv = -1;
      let match: RegExpExecArray | undefined;
      for (let i = 0; i < convs.length; i++) {
        const re = convs[i]!.match;
        re.lastIndex = 0;
        const m = re.exec(haystack);
        if (m) {
          conv = i;
          match = m;
          break;
        }
      }
      lastPick = { first, system: context.systemPrompt, conv, match };
    }
    const c = lastPick.conv >= 0 ? convs[lastPick.conv] : undefined;
    return c
      ? {
          conv: lastPick.conv,
          turns: c.turns,
          match: lastPick.match,
          label: `conversation matching /${c.match.source}/`,
        }
      : { conv: -1, turns: normalized.turns, label: 'default' };
  }

  /** The script index for this call, or undefined when the script has no turn for it. */
  function selectTurn(turns: readonly ScriptedTurn[], conv: number, k: number): number | undefined {
    if (byCalls) return k < turns.length ? k : undefined;
    let idx = indexes.get(turns);
    if (!idx) {
      idx = indexTurns(turns);
      indexes.set(turns, idx);
    }
    const start = idx.groupStart[k];
    if (start === undefined) return undefined;
    const end = idx.replyAt[k] ?? turns.length;
    for (let i = start; i < end; i++) {
      const key = `${conv}:${i}`;
      if (!fired.has(key)) {
        fired.add(key);
        return i;
      }
    }
    return idx.replyAt[k];
  }

  const provider = ((
    model: Model,
    context: Context,
    streamOptions: StreamOptions = {},
  ): AssistantMessageEventStream => {
    const stream = new AssistantMessageEventStream(model);
    const callIndex = callCount++;
    // A snapshot: the caller may keep appending to its array after this call (StreamFunction
    // contract). Copying pointers is cheap next to any per-message work.
    const snapshot = context.messages.slice();
    const recorded = record ? recordedContext(context, snapshot, model, recordTransformed) : context;
    if (record) calls.push(recorded);

    const output = emptyAssistantMessage(model);
    const fail = (message: string, reason: 'error' | 'aborted' = 'error'): AssistantMessageEventStream => {
      output.stopReason = reason;
      output.errorMessage = message;
      stream.push({ type: 'error', reason, error: output });
      return stream;
    };

    try {
      const signal = streamOptions.signal;
      if (signal?.aborted) return fail(ABORTED_TEXT, 'aborted');
      const tally = tallyMessages(snapshot, tallies);
      output.usage.input = Math.ceil(
        (tally.chars + (context.systemPrompt?.length ?? 0) + charsOfTools(context.tools)) / aiDefaults.charsPerToken,
      );
      if (options.contextWindow !== undefined && output.usage.input > options.contextWindow) {
        computeCost(model, output.usage);
        return fail(
          `prompt is too long: ${output.usage.input} tokens > ${options.contextWindow} maximum (scripted provider overflow mode)`,
        );
      }
      const { conv, turns, match, label } = pickConversation(context);
      // Reply number k: the turn slot, and the base of deterministic tool-call ids (unique per
      // conversation). A compaction in the middle of a run replaces replies with a summary: the
      // conversation goes on after the last reply served, not from the count left in view.
      const inView = tally.replies;
      const k = byCalls
        ? callIndex
        : holdsCompactionSummary(snapshot)
          ? Math.max(inView, (served.get(conv) ?? -1) + 1)
          : inView;
      if (!byCalls) {
        stream.result().then(
          (m) => {
            if (m.stopReason !== 'error' && m.stopReason !== 'aborted')
              served.set(conv, Math.max(served.get(conv) ?? -1, k));
          },
          () => undefined,
        );
      }
      const at = selectTurn(turns, conv, k);
      const turn = at === undefined ? undefined : turns[at];
      if (turn === undefined && turns.length === 0 && normalized.conversations?.length) {
        const first = firstUserText(snapshot).slice(0, 80);
        return fail(
          `scripted provider: no conversation matches the first user message "${first}" and the script has no default turns.`,
        );
      }
      if (turn === undefined) {
        const where = label === 'default' ? '' : ` (${label})`;
        const which = byCalls ? '' : ` (reply ${k + 1} of this conversation)`;
        return fail(
          `scripted provider: script has ${turns.length} turns${where}, call ${callIndex + 1}${which} has none. ` +
            'Add turns to the script, or check that earlier replies succeeded.',
        );
      }
      let spec = typeof turn === 'function' ? turn(recorded, callIndex) : turn;
      if (match) spec = substitute(spec, match);
      const plan = planOf(spec, k);
      const gate = streamOptions.beforeAttempt;
      // Like a real provider, the request waits for the caller's permit (orchestrator) first.
      const start = gate
        ? gate({ attempt: 1 }).then(
            () => {
              streamOptions.onAttemptEnd?.({ attempt: 1, started: true });
              return true;
            },
            (err: unknown) => {
              streamOptions.onAttemptEnd?.({ attempt: 1, started: false });
              fail(err instanceof Error ? err.message : String(err));
              return false;
            },
          )
        : Promise.resolve(true);
      void start
        .then((ok) => (ok ? play(plan, output, stream, model, chunkSize, chunkDelayMs, signal) : undefined))
        .catch((err: unknown) => {
          fail(`scripted provider failed: ${err instanceof Error ? err.message : String(err)}`);
        });
    } catch (err) {
      // A throwing turn function is a script bug: report it as data, like any provider failure.
      return fail(
        `scripted provider: turn ${callIndex + 1} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    return stream;
  }) as ScriptedProvider;

  Object.defineProperty(provider, 'calls', { value: calls });
  Object.defineProperty(provider, 'script', { value: normalized });
  Object.defineProperty(provider, 'reset', {
    value: () => {
      calls.length = 0;
      fired.clear();
      callCount = 0;
      lastPick = undefined;
    },
  });
  return provider;
}
