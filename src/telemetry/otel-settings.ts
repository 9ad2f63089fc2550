// Whether a run exports OpenTelemetry traces, and where to: the standard OTLP variables
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces
// appended, as the OTLP exporter specification says) or the `--otel [URL]` flag, which wins over
// both. A bare `--otel` uses the variables, else the local collector's default
// (http://localhost:4318). OTEL_SDK_DISABLED=true turns exporting off whatever is set.
// Prompt and completion text go into spans only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// is true: they are the user's code and data, and a collector is often run by someone else.

export interface OtelSettings {
  /** The OTLP/HTTP traces endpoint (protobuf), e.g. http://localhost:4318/v1/traces. */
  tracesUrl: string;
  /** Put prompts and replies (gen_ai.input.messages / gen_ai.output.messages) into spans. */
  captureContent: boolean;
}

export type OtelSettingsResult = { ok: true; settings: OtelSettings | undefined } | { ok: false; message: string };

const DEFAULT_ENDPOINT = 'http://localhost:4318';
const TRACES_PATH = '/v1/traces';

/** `base` with /v1/traces appended to its path (the spec's rule for OTEL_EXPORTER_OTLP_ENDPOINT). */
function withTracesPath(base: URL): string {
  if (base.pathname.endsWith(TRACES_PATH)) return base.toString();
  const u = new URL(base.toString());
  u.pathname = `${u.pathname.replace(/\/+$/, '')}${TRACES_PATH}`;
  return u.toString();
}

function parseUrl(text: string, where: string): { ok: true; url: URL } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return {
      ok: false,
      message: `${where} is not a URL: "${text}". Give the collector's OTLP/HTTP address, e.g. http://localhost:4318`,
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return {
      ok: false,
      message: `${where} must be an http:// or https:// address (OTLP over HTTP), not "${url.protocol}": e.g. http://localhost:4318`,
    };
  return { ok: true, url };
}

/**
 * The trace export settings of a run. `flag` is the value of `--otel`: undefined when absent,
 * '' when given without a URL.
 */
export function resolveOtelSettings(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): OtelSettingsResult {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { ok: true, settings: undefined };
  const captureContent = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true';
  const done = (tracesUrl: string): OtelSettingsResult => ({ ok: true, settings: { tracesUrl, captureContent } });
  if (flag) {
    const parsed = parseUrl(flag, '--otel');
    return parsed.ok ? done(withTracesPath(parsed.url)) : parsed;
  }
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) {
    const parsed = parseUrl(traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    return parsed.ok ? done(parsed.url.toString()) : parsed;
  }
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) {
    const parsed = parseUrl(base, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    return parsed.ok ? done(withTracesPath(parsed.url)) : parsed;
  }
  if (flag === '') return done(withTracesPath(new URL(DEFAULT_ENDPOINT)));
  return { ok: true, settings: undefined };
}
