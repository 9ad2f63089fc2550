// Where an interrupted session stands, read from its messages alone, and the results given to the
// tool calls an interruption (kill -9, crash, abort) left without one. Resuming continues the
// agent loop from that point (AgentSession.resume) instead of asking the model something new:
//   finished  the last reply has no tool calls: the answer is there, nothing is sent
//   pending   the last message is a user-side turn (tool results, a prompt, a note, a summary):
//             the loop's next model call
//   dangling  tool calls of the last reply have no results: they get results first (read-only
//             tools run again; for the others the model hears the call was interrupted), then
//             the next model call
//   empty     nothing was said yet: the caller sends its prompt
// Error / aborted replies at the end are dropped from the context first (the file keeps them),
// as the session's own retry does: they are never replayed, and what is below them decides.
import { convertMessageToLlm } from '../agent/convert-to-llm.js';
import { executeToolCalls, type ToolPipelineConfig } from '../agent/tool-pipeline.js';
import type { AgentContext, AgentEvent, AgentMessage } from '../agent/types.js';
import type { AssistantMessage, ToolCall, ToolResultMessage } from '../ai/types.js';

/**
 * Tools without side effects: a call of one that was cut off is simply run again. Only these
 * built-in names; any other tool may have changed something before the interruption.
 */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(['read', 'ls', 'grep', 'find']);

/** The result of a cut-off call of a tool with side effects (it is not run again). */
export function interruptedCallText(toolName: string): string {
  return (
    `This ${toolName} call was interrupted (the run stopped while it was running) and has no result. ` +
    'It may or may not have taken effect: check the current state before doing it again.'
  );
}

export type ResumePoint =
  | { kind: 'empty' }
  | { kind: 'finished'; reply: AssistantMessage }
  | { kind: 'pending' }
  | { kind: 'dangling'; reply: AssistantMessage; calls: ToolCall[] };

export type ResumeKind = ResumePoint['kind'];

export interface ResumePlan {
  point: ResumePoint;
  /** The context to continue from: `messages` without the failed replies at its end. */
  messages: AgentMessage[];
  /** Error / aborted replies removed from the end (with any message the model never sees after them). */
  dropped: AssistantMessage[];
}

function isFailedReply(m: AgentMessage): m is AssistantMessage {
  return m.role === 'assistant' && (m.stopReason === 'error' || m.stopReason === 'aborted');
}

/** False for messages the model never sees (e.g. a shell run excluded from the context). */
function visible(m: AgentMessage): boolean {
  return convertMessageToLlm(m) !== undefined;
}

function toolCallsOf(reply: AssistantMessage): ToolCall[] {
  return reply.content.filter((b): b is ToolCall => b.type === 'toolCall');
}

/** Where a session stands and what resuming it must do; pure, reads nothing but `messages`. */
export function planResume(messages: readonly AgentMessage[]): ResumePlan {
  // Failed replies at the end (invisible messages may sit between them) are cut off.
  let cut = messages.length;
  const dropped: AssistantMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (isFailedReply(m)) {
      dropped.unshift(m);
      cut = i;
    } else if (visible(m)) break;
  }
  const kept = messages.slice(0, cut);
  return { point: pointOf(kept), messages: kept, dropped };
}

function pointOf(messages: readonly AgentMessage[]): ResumePoint {
  let last = messages.length - 1;
  while (last >= 0 && !visible(messages[last]!)) last--;
  if (last < 0) return { kind: 'empty' };
  const m = messages[last]!;
  if (m.role === 'assistant') {
    const calls = toolCallsOf(m);
    return calls.length === 0 ? { kind: 'finished', reply: m } : { kind: 'dangling', reply: m, calls };
  }
  if (m.role !== 'toolResult') return { kind: 'pending' };
  // Tool results: the batch may have been cut part-way (results are written in call order).
  let r = last;
  const answered = new Set<string>();
  while (r >= 0 && messages[r]!.role !== 'assistant') {
    const x = messages[r]!;
    if (x.role === 'toolResult') answered.add(x.toolCallId);
    r--;
  }
  const reply = messages[r];
  if (reply?.role !== 'assistant' || isFailedReply(reply)) return { kind: 'pending' };
  const missing = toolCallsOf(reply).filter((c) => !answered.has(c.id));
  return missing.length === 0 ? { kind: 'pending' } : { kind: 'dangling', reply, calls: missing };
}

/**
 * Results for tool calls cut off by an interruption, through the normal tool pipeline (argument
 * checks, the host's hooks, events, one result per call in call order): a read-only call runs
 * again, any other call is answered with interruptedCallText and never run a second time.
 */
export async function answerInterruptedCalls(
  reply: AssistantMessage,
  calls: readonly ToolCall[],
  context: AgentContext,
  hooks: Pick<ToolPipelineConfig, 'beforeToolCall' | 'afterToolCall'>,
  signal: AbortSignal,
  emit: (event: AgentEvent) => void,
): Promise<ToolResultMessage[]> {
  const config: ToolPipelineConfig = {
    beforeToolCall: async (ctx, s) => {
      if (!READ_ONLY_TOOLS.has(ctx.toolCall.name))
        return { block: true, reason: interruptedCallText(ctx.toolCall.name) };
      return hooks.beforeToolCall?.(ctx, s);
    },
    afterToolCall: hooks.afterToolCall,
  };
  return (await executeToolCalls(reply, calls, context, config, signal, emit)).results;
}

/** A turn a kill cut off: what reopening the session should finish before anything new is sent. */
export type CutOffTurn =
  | { kind: 'dangling'; calls: ToolCall[] }
  /** A prompt (or a steering message) with no reply after it. */
  | { kind: 'unanswered' };

/**
 * The last turn when only a kill (or crash) can have left it so, else undefined. Narrower than
 * planResume: a run that stopped normally (Esc, a cap, a failed reply, a compaction or rewind
 * ending on a summary or tool results) is not cut off: its stop was shown when it happened, and
 * the next prompt goes on from there as usual. Tool calls without results are left by nothing
 * but an interruption; a user message with no reply (not even a failed one) by an interruption,
 * or it is steering a stopped run kept unsent, which its sender still waits to have answered.
 */
export function cutOffTurn(messages: readonly AgentMessage[]): CutOffTurn | undefined {
  const plan = planResume(messages);
  if (plan.dropped.length > 0) return undefined;
  if (plan.point.kind === 'dangling') return { kind: 'dangling', calls: plan.point.calls };
  if (plan.point.kind !== 'pending') return undefined;
  const last = plan.messages.findLast((m) => visible(m));
  return last?.role === 'user' ? { kind: 'unanswered' } : undefined;
}
