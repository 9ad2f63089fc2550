// Traces of `orchestrate agent` (one agent, no run): the same spans as an attempt of a run
// (run-spans.ts), built from the session's own events. Each event is redacted first with the
// product's well-known secrets (provider keys of the presets, forge tokens, the cluster secret;
// run/secrets.ts), as a run's store would; the command has no recipe to name more.
// The one invoke_agent span covers the whole command (every prompt of it), its chat and
// execute_tool spans hang under it.
import type { RunEvent, UsageSummary } from '../run/run-events.js';
import { runRedactor } from '../run/secrets.js';
import type { OtelSettings } from './otel-settings.js';
import { RunSpans } from './run-spans.js';
import { startTraceExport } from './trace-export.js';

/** What of an AgentSession is traced (its event stream and its id). */
export interface TracedSession {
  readonly sessionId: string;
  subscribe(listener: (event: { type: string }) => void): () => void;
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
  const unsubscribe = session.subscribe((event) => {
    const m = (event as { message?: { role?: string; usage?: Partial<UsageSummary> & { cost?: { total?: number } } } })
      .message;
    if (event.type === 'message_end' && m?.role === 'assistant' && m.usage) {
      usage.input += m.usage.input ?? 0;
      usage.output += m.usage.output ?? 0;
      usage.cacheRead += m.usage.cacheRead ?? 0;
      usage.cacheWrite += m.usage.cacheWrite ?? 0;
      usage.totalTokens += m.usage.totalTokens ?? 0;
      usage.cost += m.usage.cost?.total ?? 0;
    }
    emit({ ...ref, ts: Date.now(), type: 'agent_event', event });
  });
  let finished: Promise<void> | undefined;
  return {
    finish(outcome) {
      finished ??= (async () => {
        unsubscribe();
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
