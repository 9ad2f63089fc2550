// Where traces go: the OTLP variables and --otel, resolved as the OTLP exporter specification
// says (the traces variable as given, the base one with /v1/traces appended), and bad addresses
// refused with what to give instead.
import { describe, expect, it } from 'vitest';
import { resolveOtelSettings } from '../../src/telemetry/otel-settings.js';

const url = (flag: string | undefined, env: Record<string, string>) => {
  const r = resolveOtelSettings(flag, env);
  if (!r.ok) throw new Error(r.message);
  return r.settings?.tracesUrl;
};

describe('resolveOtelSettings', () => {
  it('is off without a variable or the flag', () => {
    expect(url(undefined, {})).toBeUndefined();
  });

  it('appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT (keeping its path) and takes the traces variable as given', () => {
    expect(url(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(url(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://gw.example.com/otlp/' })).toBe(
      'https://gw.example.com/otlp/v1/traces',
    );
    expect(
      url(undefined, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/custom/path',
      }),
    ).toBe('http://tempo:4318/custom/path');
  });

  it('--otel URL wins over the variables; a bare --otel uses them, else localhost:4318', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(url('http://127.0.0.1:9999', env)).toBe('http://127.0.0.1:9999/v1/traces');
    expect(url('', env)).toBe('http://collector:4318/v1/traces');
    expect(url('', {})).toBe('http://localhost:4318/v1/traces');
  });

  it('OTEL_SDK_DISABLED=true turns it off; message content only with the capture variable', () => {
    expect(url('', { OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    const on = resolveOtelSettings('', { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'TRUE' });
    const off = resolveOtelSettings('', { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: '1' });
    expect(on.ok && on.settings?.captureContent).toBe(true);
    expect(off.ok && off.settings?.captureContent).toBe(false);
  });

  it('a value that is no http(s) URL names where it came from and what to give', () => {
    const bad = resolveOtelSettings('plan.yaml', {});
    expect(bad).toMatchObject({ ok: false });
    expect(!bad.ok && bad.message).toMatch(/--otel is not a URL: "plan.yaml".*http:\/\/localhost:4318/);
    const grpc = resolveOtelSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' });
    expect(!grpc.ok && grpc.message).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\//);
  });
});
