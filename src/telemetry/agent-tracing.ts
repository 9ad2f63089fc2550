// Traces of `orchestrate agent` (one agent, no run): the same spans as an attempt of a run
// (run-spans.ts), built from the session's own events. Each event is redacted first with the
// product's well-known secrets (provider keys of the presets, forge tokens, the cluster secret;
// run/secrets.ts), as a run's store would; the command has no recipe to name more.
// The one invoke_agent span covers the whole command (every prompt of it), its chat and
// execute_tool spans hang under it. A summary model call is no conversation message: the session
// reports each one (onSummaryCall) and it becomes a chat span with `orchestrate.call.purpose`, as
// in a run: `compaction` inside a compaction (a user's /compact, RPC compact, or an automatic
// one), `summary` otherwise (the branch left by a navigation).
import type { AssistantMessage } from '../ai/types.js';
import type { RunEvent, UsageSummary } from '../run/run-events.js';
import { runRedactor } from '../run/secrets.js';
import type { OtelSettings } from './otel-settings.js';
import { RunSpans } from './run-spans.js';
import { startTraceExport } from './trace-export.js';

/** What of an AgentSession is traced (its event stream and its id). */
export interface TracedSession {
  readonly sessionId: string;
  subscribe(listener: (event: { type: string }) => void): () => void;
  /** Each summary model call, once answered (AgentSession.onSummaryCall). */
  onSummaryCall?(listener: (call: { message: AssistantMessage; startTs: number; endTs: number }) => void): () => void;
}

export interface AgentTracing {
  /** Ends the agent's span (ok, or failed with `failure`) and sends what is queued; bounded. */
  finish(outcome: { ok: true } | { ok: false; failure: 'error' | 'aborted' | 'budget'; error: string }): Promise<void>;
}

const AGENT_NAME = 'agent';

/** Traces `session` from now on; `prompt` is the command's prompt (captured only with message capture). */
export function traceAgentSession(
  session: TracedSession,
  settings: OtelSettings,
  warn: (line: string) => void,
  opts: { prompt: string; env: Readonly<Record<string, string | undefined>> },
): AgentTracing {
  const redactor = runRedactor({ secrets: [] }, opts.env);
  const redact = (s: string): string => (redactor ? redactor.text(s) : s);
  const exported = startTraceExport(settings, warn);
  const spans = new RunSpans(exported.tracer, { redact, captureContent: settings.captureContent });
  const runId = `agent-${session.sessionId}`;
  const ref = { runId, v: 1 as const, task: AGENT_NAME, key: session.sessionId, attempt: 1 };
  const started = Date.now();
  const usage: UsageSummary = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
  const emit = (e: RunEvent): void => spans.onEvent(redactor ? redactor.value(e) : e);
  emit({ ...ref, ts: started, type: 'instance_start', ...(opts.prompt ? { prompt: opts.prompt } : {}) });
  const add = (u: Partial<Omit<UsageSummary, 'cost'>> & { cost?: { total?: number } }): void => {
    usage.input += u.input ?? 0;
    usage.output += u.output ?? 0;
    usage.cacheRead += u.cacheRead ?? 0;
    usage.cacheWrite += u.cacheWrite ?? 0;
    usage.totalTokens += u.totalTokens ?? 0;
    usage.cost += u.cost?.total ?? 0;
  };
  // Whether a compaction runs now: its summary calls are `compaction`, any other is a `summary`.
  let compacting = false;
  const unsubscribe = session.subscribe((event) => {
    const m = (event as { message?: { role?: string; usage?: Parameters<typeof add>[0] } }).message;
    if (event.type === 'message_end' && m?.role === 'assistant' && m.usage) add(m.usage);
    if (event.type === 'compaction_start' || event.type === 'auto_compaction_start') compacting = true;
    if (event.type === 'compaction_end' || event.type === 'auto_compaction_end') compacting = false;
    emit({ ...ref, ts: Date.now(), type: 'agent_event', event });
  });
  const unsubscribeCalls = session.onSummaryCall?.(({ message: m, startTs, endTs }) => {
    add(m.usage);
    const failed = m.stopReason === 'error' || m.stopReason === 'aborted';
    spans.summaryCall(ref, {
      purpose: compacting ? 'compaction' : 'summary',
      model: m.model,
      provider: m.provider,
      usage: { ...m.usage, cost: m.usage.cost.total },
      startTs,
      endTs,
      ...(failed
        ? {
            error: {
              type: String(m.errorKind ?? m.stopReason),
              ...(m.errorMessage !== undefined ? { message: redact(m.errorMessage) } : {}),
            },
          }
        : {}),
    });
  });
  let finished: Promise<void> | undefined;
  return {
    finish(outcome) {
      finished ??= (async () => {
        unsubscribe();
        unsubscribeCalls?.();
        const ts = Date.now();
        const durationMs = ts - started;
        if (outcome.ok) emit({ ...ref, ts, type: 'instance_done', output: null, usage, durationMs });
        else
          emit({
            ...ref,
            ts,
            type: 'instance_failed',
            failure: outcome.failure,
            error: outcome.error,
            final: true,
            usage,
            durationMs,
          });
        spans.endAll(ts);
        await exported.shutdown();
      })();
      return finished;
    },
  };
}
