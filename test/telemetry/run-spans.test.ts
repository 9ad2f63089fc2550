// The event-to-span mapping of run-spans.ts on its own, with the real SDK and its in-memory
// exporter: the parts a run with a model does not reach cheaply (verify, landing, retries, approval
// gates, publish, a run that stops without run_end), each from the events the coordinator writes.
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { RunEvent, RunEventInput } from '../../src/run/run-events.js';
import { RunSpans } from '../../src/telemetry/run-spans.js';

const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };

function harness(redact: (s: string) => string = (s) => s) {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const spans = new RunSpans(provider.getTracer('test'), { redact, captureContent: false });
  let ts = 1_700_000_000_000;
  const feed = (e: RunEventInput) => {
    ts += 10;
    spans.onEvent({ v: 1, runId: 'r1', ts, ...e } as RunEvent);
  };
  const named = (name: string) => {
    const found = exporter.getFinishedSpans().filter((s) => s.name === name);
    if (found.length !== 1) throw new Error(`${found.length} spans named ${name}`);
    return found[0]!;
  };
  return { exporter, spans, feed, named };
}

const ref = (attempt = 1) => ({ task: 'fix', key: 'fix.a', attempt });
const runStart: RunEventInput = {
  type: 'run_start',
  recipe: 'r.yaml',
  name: 'demo',
  recipeHash: 'h',
  inputs: {},
  plan: [],
};

describe('RunSpans', () => {
  it('verify and landing are children of the attempt; a failed verify is an error with verify_failed', () => {
    const h = harness();
    h.feed(runStart);
    h.feed({ type: 'instance_start', ...ref() });
    h.feed({ type: 'agent_event', ...ref(), event: { type: 'agent_end', messageCount: 3 } });
    h.feed({ type: 'verify', ...ref(), command: 'npm test', ok: false, output: 'boom' });
    h.feed({ type: 'verify', ...ref(), command: 'npm test', ok: true, output: '' });
    h.feed({
      type: 'instance_done',
      ...ref(),
      output: null,
      usage: { ...zero, input: 10, output: 5, cacheRead: 90, cost: 0.01 },
      durationMs: 40,
      modifiedFiles: ['a.ts', 'b.ts'],
      applied: true,
    });
    h.feed({ type: 'run_end', status: 'succeeded', usage: zero, durationMs: 60 });
    const agent = h.named('invoke_agent fix');
    const verifies = h.exporter.getFinishedSpans().filter((s) => s.name === 'verify');
    expect(verifies.map((v) => v.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
    expect(verifies[0]!.attributes['error.type']).toBe('verify_failed');
    expect(verifies[0]!.attributes['orchestrate.verify.command']).toBe('npm test');
    const land = h.named('land');
    for (const s of [...verifies, land]) expect(s.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
    expect(land.attributes).toMatchObject({ 'orchestrate.land.files': 2, 'orchestrate.land.applied': true });
    // Cached input counts as input (the conventions), and apart as cache reads.
    expect(agent.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.cache_read.input_tokens': 90,
      'gen_ai.usage.output_tokens': 5,
    });
    expect(h.named('invoke_workflow demo').status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a retry ends the attempt with its failure class; the next attempt is a span of its own', () => {
    const h = harness();
    h.feed(runStart);
    h.feed({ type: 'instance_start', ...ref(1) });
    h.feed({ type: 'instance_retry', ...ref(1), failure: 'rate_limit', error: '429', delayMs: 5 });
    h.feed({ type: 'instance_start', ...ref(2) });
    // While it runs, the attempt's context as a W3C traceparent (sampled), in the run's trace.
    const parent = h.spans.attemptTraceparent('fix.a', 2);
    expect(parent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(parent?.split('-')[1]).toBe(h.spans.traceparent?.split('-')[1]);
    h.feed({
      type: 'instance_failed',
      ...ref(2),
      failure: 'timeout',
      error: 'took too long',
      final: true,
      durationMs: 9,
    });
    h.feed({ type: 'run_end', status: 'failed', usage: zero, durationMs: 60 });
    const attempts = h.exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent fix');
    expect(
      attempts.map((s) => [s.attributes['orchestrate.attempt'], s.attributes['error.type'], s.status.code]),
    ).toEqual([
      [1, 'rate_limit', SpanStatusCode.ERROR],
      [2, 'timeout', SpanStatusCode.ERROR],
    ]);
    const run = h.named('invoke_workflow demo');
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes['error.type']).toBe('failed');
  });

  it('an approval gate spans request to answer; a refused publish is an error; spans left open end with the run', () => {
    const h = harness();
    h.feed(runStart);
    h.feed({
      type: 'approval_requested',
      task: 'fix',
      key: 'fix',
      prompt: 'ok?',
      onTimeout: 'reject',
      gate: 'publish',
    });
    h.feed({
      type: 'approval_given',
      task: 'fix',
      key: 'fix',
      decision: 'approved',
      by: 'ana',
      via: 'cli',
      gate: 'publish',
    });
    h.feed({
      type: 'changeset_published',
      task: 'fix',
      key: 'fix.a',
      outcome: 'refused',
      detail: 'remote is not the forge',
    });
    h.feed({ type: 'instance_start', ...ref() });
    h.feed({
      type: 'agent_event',
      ...ref(),
      event: { type: 'tool_execution_start', toolCallId: 't1', toolName: 'bash', args: {} },
    });
    // No run_end: the run was killed; endAll closes what is open.
    h.spans.endAll();
    const gate = h.named('approval fix');
    expect(gate.attributes).toMatchObject({
      'orchestrate.gate': 'publish',
      'orchestrate.approval.decision': 'approved',
      'orchestrate.approval.by': 'ana',
      'orchestrate.approval.via': 'cli',
    });
    expect(gate.endTime[0] * 1e3 + gate.endTime[1] / 1e6).toBeGreaterThan(
      gate.startTime[0] * 1e3 + gate.startTime[1] / 1e6,
    );
    const publish = h.named('publish fix');
    expect(publish.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'remote is not the forge' });
    expect(publish.attributes['error.type']).toBe('publish_refused');
    expect(h.named('execute_tool bash').ended).toBe(true);
    expect(h.named('invoke_agent fix').ended).toBe(true);
    expect(h.named('invoke_workflow demo').ended).toBe(true);
  });

  it('an attempt the run cut off (run_end interrupted, or no run_end) is an error of class interrupted, not a success', () => {
    const h = harness();
    h.feed(runStart);
    h.feed({ type: 'instance_start', ...ref() });
    h.feed({ type: 'instance_start', task: 'fix', key: 'fix.b', attempt: 1 });
    h.feed({ type: 'instance_done', task: 'fix', key: 'fix.b', attempt: 1, output: null, usage: zero, durationMs: 5 });
    h.feed({
      type: 'agent_event',
      ...ref(),
      event: { type: 'tool_execution_start', toolCallId: 't1', toolName: 'bash', args: {} },
    });
    h.feed({ type: 'run_end', status: 'interrupted', usage: zero, durationMs: 60 });
    const agents = h.exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent fix');
    const cut = agents.find((s) => s.attributes['orchestrate.instance.key'] === 'fix.a')!;
    // It ended with no status at all: in a trace viewer, an attempt that finished.
    expect(cut.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'the run ended (interrupted) before this attempt did',
    });
    expect(cut.attributes['error.type']).toBe('interrupted');
    expect(h.named('execute_tool bash').status.code).toBe(SpanStatusCode.ERROR);
    expect(h.named('execute_tool bash').attributes['error.type']).toBe('interrupted');
    // The attempt that finished before the end is untouched.
    const finished = agents.find((s) => s.attributes['orchestrate.instance.key'] === 'fix.b')!;
    expect(finished.status.code).toBe(SpanStatusCode.UNSET);
    expect(finished.attributes['error.type']).toBeUndefined();

    // A run killed without run_end: what is still open ends the same way; a gate still waiting has no decision.
    const k = harness();
    k.feed(runStart);
    k.feed({ type: 'instance_start', ...ref() });
    k.feed({ type: 'approval_requested', task: 'ship', key: 'ship', prompt: 'Ship?', onTimeout: 'reject' });
    k.spans.endAll();
    expect(k.named('approval ship').attributes['orchestrate.approval.decision']).toBe('unanswered');
    expect(k.named('invoke_agent fix').status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'the run stopped before this attempt ended',
    });
    expect(k.named('invoke_agent fix').attributes['error.type']).toBe('interrupted');
  });

  it('every string attribute goes through the redactor, and no content is captured by default', () => {
    const h = harness((s) => s.replaceAll('hunter2', '[REDACTED:PW]'));
    h.feed(runStart);
    h.feed({ type: 'instance_start', ...ref(), prompt: 'use hunter2' });
    h.feed({ type: 'verify', ...ref(), command: 'login --password hunter2', ok: true, output: '' });
    h.feed({
      type: 'agent_event',
      ...ref(),
      event: {
        type: 'message_end',
        message: {
          role: 'assistant',
          model: 'm',
          provider: 'anthropic',
          stopReason: 'stop',
          content: [{ type: 'text', text: 'hunter2' }],
        },
      },
    });
    h.spans.endAll();
    const all = JSON.stringify(h.exporter.getFinishedSpans().map((s) => s.attributes));
    expect(all).not.toContain('hunter2');
    expect(all).toContain('[REDACTED:PW]');
    expect(all).not.toContain('gen_ai.input.messages');
    expect(all).not.toContain('gen_ai.output.messages');
    expect(h.named('chat m').attributes['gen_ai.provider.name']).toBe('anthropic');
  });
  it('summary and compaction calls get a chat span each, from their call_usage; a turn gets one only from its message_end', () => {
    const h = harness();
    const use = (input: number, output: number) => ({
      ...zero,
      input,
      output,
      totalTokens: input + output,
      cost: 0.002,
    });
    const call = (input: number, output: number): RunEventInput => ({
      type: 'call_usage',
      ...ref(),
      model: 'm',
      provider: 'anthropic',
      usage: use(input, output),
    });
    h.feed(runStart);
    h.feed({ type: 'instance_start', ...ref() });
    // A turn: message_start .. message_end, and its call_usage (which must not make a second span).
    h.feed({ type: 'agent_event', ...ref(), event: { type: 'message_start', role: 'assistant' } });
    h.feed(call(100, 10));
    h.feed({
      type: 'agent_event',
      ...ref(),
      event: {
        type: 'message_end',
        message: { role: 'assistant', model: 'm', provider: 'anthropic', stopReason: 'stop', content: [] },
      },
    });
    // The runtime compacts on its own: two calls (a summary in two parts).
    h.feed({ type: 'agent_event', ...ref(), event: { type: 'auto_compaction_start', reason: 'threshold' } });
    h.feed(call(300, 30));
    h.feed(call(50, 20));
    h.feed({
      type: 'agent_event',
      ...ref(),
      event: { type: 'auto_compaction_end', reason: 'threshold', aborted: false, willRetry: false },
    });
    // The handoff summary at the end (a manual compaction).
    h.feed({ type: 'agent_event', ...ref(), event: { type: 'compaction_start', reason: 'manual' } });
    h.feed(call(400, 40));
    h.feed({ type: 'agent_event', ...ref(), event: { type: 'compaction_end', reason: 'manual', aborted: false } });
    // A call_usage outside any compaction and without a message (reconciled usage) makes no span.
    h.feed(call(7, 7));
    h.feed({ type: 'instance_done', ...ref(), output: null, usage: zero, durationMs: 40 });
    h.feed({ type: 'run_end', status: 'succeeded', usage: zero, durationMs: 60 });

    const agent = h.named('invoke_agent fix');
    const chats = h.exporter.getFinishedSpans().filter((s) => s.name === 'chat m');
    const ms = (t: [number, number]) => t[0] * 1e3 + t[1] / 1e6;
    const rows = chats
      .sort((a, b) => ms(a.startTime) - ms(b.startTime))
      .map((c) => [
        c.attributes['orchestrate.call.purpose'],
        c.attributes['gen_ai.usage.input_tokens'],
        c.attributes['gen_ai.usage.output_tokens'],
      ]);
    expect(rows).toEqual([
      [undefined, undefined, undefined],
      ['compaction', 300, 30],
      ['compaction', 50, 20],
      ['summary', 400, 40],
    ]);
    for (const c of chats) {
      expect(c.kind).toBe(SpanKind.CLIENT);
      expect(c.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
      expect(ms(c.endTime)).toBeGreaterThan(ms(c.startTime));
    }
    const [, first, second, summary] = chats;
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'm',
      'orchestrate.usage.cost_usd': 0.002,
    });
    // One call after the other: the second starts where the first ended.
    expect(ms(second!.startTime)).toBe(ms(first!.endTime));
    expect(ms(summary!.startTime)).toBeGreaterThan(ms(second!.endTime));
  });
});
