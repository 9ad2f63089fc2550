// `orchestrate agent --otel [URL]`: the flag, and tracing one agent session with the same
// settings as a run (telemetry/otel-settings.ts). Kept out of commands/agent.ts, which is near
// its size limit.
import type { Argv } from 'yargs';
import type { AgentSession } from '../runtime/index.js';
import { resolveOtelSettings } from '../telemetry/otel-settings.js';
import { type AgentTracing, traceAgentSession } from '../telemetry/agent-tracing.js';
import { type CliContext, EXIT } from './cli-io.js';
import type { CommandArgs } from './command.js';

export function withOtelOption(y: Argv): Argv {
  return y.option('otel', {
    type: 'string',
    describe:
      'Export OpenTelemetry traces (GenAI conventions) over OTLP/HTTP to URL (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318); on by itself when either variable is set',
  });
}

/** Agent tracing when on; a bad address is printed and answered with the usage exit code. */
export function startAgentTracing(
  args: CommandArgs,
  ctx: CliContext,
  session: AgentSession,
  prompt: string,
): { ok: true; tracing?: AgentTracing } | { ok: false; code: number } {
  const otel = resolveOtelSettings(typeof args.otel === 'string' ? args.otel : undefined, ctx.env);
  if (!otel.ok) {
    ctx.stderr(`orchestrate agent: ${otel.message}\nRun "orchestrate agent --help" for usage.\n`);
    return { ok: false, code: EXIT.usage };
  }
  if (!otel.settings) return { ok: true };
  return { ok: true, tracing: traceAgentSession(session, otel.settings, ctx.stderr, { prompt, env: ctx.env }) };
}

/** Ends the agent's trace with the command's exit code. */
export function finishAgentTracing(tracing: AgentTracing | undefined, code: number): Promise<void> {
  if (!tracing) return Promise.resolve();
  if (code === EXIT.ok) return tracing.finish({ ok: true });
  const aborted = code === EXIT.interrupted;
  return tracing.finish({
    ok: false,
    failure: aborted ? 'aborted' : 'error',
    error: aborted ? 'interrupted' : `exit code ${code}`,
  });
}
