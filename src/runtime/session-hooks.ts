// The hooks a host attaches to a session, and how they combine with extensions around each tool
// call: the host's hook first, then extension handlers in load order.
//   before: the first block wins; a throwing extension handler blocks with its error; arguments
//           the host's hook rewrote (a command hook's updatedInput) are what extensions see and run
//   after:  results are chained, each handler seeing the previous one's changes
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentLoopConfig,
  BeforeToolCallContext,
  BeforeToolCallResult,
} from '../agent/types.js';
import type { SummarySupplier } from './auto-compaction.js';
import { errorText, type SessionEventBus } from './event-bus.js';
import type { LoadedExtensions } from './extensions.js';
import type { AgentSessionEvent } from './session-events.js';

/** Hooks a host (SDK user, orchestrator worker) attaches to a session. */
export interface AgentSessionHooks {
  beforeToolCall?: AgentLoopConfig['beforeToolCall'];
  afterToolCall?: AgentLoopConfig['afterToolCall'];
  /** Before each model call: may swap the model, system prompt or context (e.g. inject peer notes). */
  beforeTurn?: AgentLoopConfig['beforeTurn'];
  /** After each turn: true ends the run (budgets, external stop). */
  shouldStop?: AgentLoopConfig['shouldStop'];
  transformContext?: AgentLoopConfig['transformContext'];
  /** Every session event, awaited in order after it was persisted. */
  onEvent?: (event: AgentSessionEvent) => void | Promise<void>;
  /** Before any compaction: return `{cancel: true}` to veto, or `{summary}` to supply it. */
  beforeCompact?: SummarySupplier;
}

export interface ToolHookContext {
  hooks: AgentSessionHooks;
  extensions: LoadedExtensions;
  cwd: string;
  bus: SessionEventBus;
}

export function composeToolHooks(
  c: ToolHookContext,
): Required<Pick<AgentLoopConfig, 'beforeToolCall' | 'afterToolCall'>> {
  const eventOf = (ctx: BeforeToolCallContext) => ({
    toolName: ctx.toolCall.name,
    toolCallId: ctx.toolCall.id,
    args: (ctx.args ?? {}) as Record<string, unknown>,
    assistantMessage: ctx.assistantMessage,
    toolCall: ctx.toolCall,
    context: ctx.context,
    cwd: c.cwd,
  });

  const beforeToolCall = async (
    ctx: BeforeToolCallContext,
    signal: AbortSignal,
  ): Promise<BeforeToolCallResult | undefined> => {
    // Observers have seen (and the file holds) the assistant message before any tool runs.
    await c.bus.idle();
    // Arguments the host's hook rewrote (a command hook's updatedInput) are what extensions see and what runs.
    let rewritten: { args: unknown } | undefined;
    if (c.hooks.beforeToolCall) {
      const r = await c.hooks.beforeToolCall(ctx, signal);
      if (r?.block) return r;
      if (r?.args !== undefined) rewritten = { args: r.args };
    }
    const seen = rewritten ? { ...ctx, args: rewritten.args } : ctx;
    for (const h of c.extensions.handlers.before_tool_call) {
      try {
        const r = await h.handler(eventOf(seen));
        if (r?.block) return { block: true, reason: r.reason ?? `Blocked by extension ${h.source}` };
      } catch (err) {
        c.bus.reportExtensionError(h.source, 'before_tool_call', err);
        return {
          block: true,
          reason: `Blocked: extension ${h.source} failed while checking this call: ${errorText(err)}`,
        };
      }
    }
    return rewritten;
  };

  const afterToolCall = async (
    ctx: AfterToolCallContext,
    signal: AbortSignal,
  ): Promise<AfterToolCallResult | undefined> => {
    let current: AfterToolCallContext = ctx;
    let merged: AfterToolCallResult | undefined;
    // biome-ignore lint/suspicious/noConfusingVoidType: it takes what a hook returned, which may be nothing (`void`)
    const apply = (r: AfterToolCallResult | void): void => {
      if (!r) return;
      merged = { ...merged, ...r };
      current = {
        ...current,
        result: {
          ...current.result,
          ...(r.content ? { content: r.content } : {}),
          ...(r.details !== undefined ? { details: r.details } : {}),
        },
        isError: r.isError ?? current.isError,
      };
    };
    if (c.hooks.afterToolCall) apply(await c.hooks.afterToolCall(current, signal));
    for (const h of c.extensions.handlers.after_tool_call) {
      try {
        apply(await h.handler({ ...eventOf(current), result: current.result, isError: current.isError }));
      } catch (err) {
        c.bus.reportExtensionError(h.source, 'after_tool_call', err);
      }
    }
    return merged;
  };

  return { beforeToolCall, afterToolCall };
}
