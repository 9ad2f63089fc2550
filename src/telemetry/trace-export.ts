// The OpenTelemetry SDK side of a run's traces: a tracer provider of its own (not registered as
// the process's global one, so a library's spans and a second run in the same process cannot mix
// into this trace), a batch span processor and the OTLP/HTTP protobuf exporter.
// Exporting must never slow or break a run: spans are queued and sent in batches off the run's
// path; an export that fails (collector down, wrong URL) is one warning line for the whole run,
// not one per batch; and the flush at the end is bounded, so a collector that hangs costs at most
// SHUTDOWN_LIMIT_MS.
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { OtelSettings } from './otel-settings.js';

/** How long the end of a run waits for the last spans to reach the collector. */
export const SHUTDOWN_LIMIT_MS = 5_000;
/** How long one export request may take. */
const EXPORT_TIMEOUT_MS = 4_000;
const TRACER_NAME = 'orchestrate';

export interface TraceExport {
  tracer: Tracer;
  /** Sends what is queued and stops; resolves within SHUTDOWN_LIMIT_MS whatever the collector does. */
  shutdown(): Promise<void>;
}

type ExportCallback = Parameters<SpanExporter['export']>[1];

/** Passes spans on to `inner`; the first failed export calls `onFailure` once. */
class WarnOnceExporter implements SpanExporter {
  private warned = false;
  /** Exports sent and not answered yet. */
  private pending = 0;
  constructor(
    private readonly inner: SpanExporter,
    private readonly onFailure: (reason: string) => void,
  ) {}

  export(spans: Parameters<SpanExporter['export']>[0], done: ExportCallback): void {
    this.pending++;
    this.inner.export(spans, (result) => {
      this.pending--;
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core).
      if (result.code !== 0) this.warnOnce(result.error?.message ?? 'the collector did not accept them');
      done(result);
    });
  }

  warnOnce(reason: string): void {
    if (this.warned) return;
    this.warned = true;
    this.onFailure(reason);
  }

  /** At the end: an export still unanswered (a collector that hangs) is a failure too. */
  warnIfUnanswered(): void {
    if (this.pending > 0) this.warnOnce(`no answer within ${SHUTDOWN_LIMIT_MS / 1000} s`);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * Starts exporting to `settings.tracesUrl`. `warn` gets one line when the collector cannot be
 * reached or refuses the spans. `serviceVersion` goes into the resource beside service.name.
 */
export function startTraceExport(
  settings: OtelSettings,
  warn: (line: string) => void,
  serviceVersion?: string,
): TraceExport {
  const exporter = new WarnOnceExporter(
    new OTLPTraceExporter({ url: settings.tracesUrl, timeoutMillis: EXPORT_TIMEOUT_MS }),
    (reason) =>
      warn(
        `orchestrate: could not send traces to ${settings.tracesUrl} (${reason}); the run goes on without them. Check that the collector listens there (OTLP over HTTP, protobuf).\n`,
      ),
  );
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': 'orchestrate',
      ...(serviceVersion ? { 'service.version': serviceVersion } : {}),
    }),
    spanProcessors: [new BatchSpanProcessor(exporter, { exportTimeoutMillis: EXPORT_TIMEOUT_MS })],
  });
  return {
    tracer: provider.getTracer(TRACER_NAME, serviceVersion),
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_LIMIT_MS);
        timer.unref();
      });
      try {
        await Promise.race([provider.shutdown().catch(() => undefined), limit]);
      } finally {
        clearTimeout(timer);
      }
      exporter.warnIfUnanswered();
    },
  };
}
