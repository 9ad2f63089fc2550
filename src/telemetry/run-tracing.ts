// A run's traces, start to end: export to the collector the settings name, spans from the run
// store's events (run-spans.ts), and a bounded flush when the run is over. The CLI attaches this
// to the store of `orchestrate run` and `orchestrate resume` when tracing is on.
import { existsSync } from 'node:fs';
import type { RunStore } from '../run/run-store.js';
import type { OtelSettings } from './otel-settings.js';
import { RunSpans } from './run-spans.js';
import { startTraceExport } from './trace-export.js';

export interface RunTracing {
  /** The run's trace context as a W3C traceparent (for a process the run starts). */
  readonly traceparent: string | undefined;
  /** An attempt's context (its invoke_agent span), else the run's: what its agent runs under. */
  traceparentOf(key: string, attempt: number): string | undefined;
  /** Ends what is still open and sends the rest; bounded (trace-export.ts SHUTDOWN_LIMIT_MS). */
  finish(): Promise<void>;
}

/** Traces the run whose events `store` writes. `warn` gets at most one line if the collector fails. */
export function traceRun(store: RunStore, settings: OtelSettings, warn: (line: string) => void): RunTracing {
  const exported = startTraceExport(settings, warn);
  // A resume: the recipe's name is in the run_start already in the log.
  const started = existsSync(store.logFile) ? store.read().events.find((e) => e.type === 'run_start') : undefined;
  const spans = new RunSpans(exported.tracer, {
    redact: (s) => store.redactText(s),
    captureContent: settings.captureContent,
    ...(started?.type === 'run_start' ? { workflowName: started.name } : {}),
  });
  const unsubscribe = store.subscribe((e) => spans.onEvent(e));
  let finished: Promise<void> | undefined;
  return {
    get traceparent() {
      return spans.traceparent;
    },
    traceparentOf: (key, attempt) => spans.attemptTraceparent(key, attempt) ?? spans.traceparent,
    finish() {
      finished ??= (async () => {
        unsubscribe();
        spans.endAll();
        await exported.shutdown();
      })();
      return finished;
    },
  };
}
