// Builds a run's OpenTelemetry trace from its event stream: every event of a run goes through
// Coordinator.record into run.jsonl and to the store's listeners, so this one listener sees the
// same events for a local run (worker threads) and a distributed one (workers over Redis).
//
// Why spans are built here, in the coordinator's process, and not in the threads or the workers:
// the events already carry everything a span needs (what happened, to which attempt, when: each
// event's `ts`), threads and remote workers then need no SDK and no collector address of their
// own, a worker that dies cannot lose spans the run already recorded, and the trace of a run is
// the same whichever executor ran it. The cost is that a span's times are those at which the
// coordinator recorded its events (a few milliseconds after the thread saw them; a network hop
// more for a remote worker). Threads and workers therefore get no trace context today; a span of
// their own would join the trace through attemptTraceparent (a W3C traceparent string, which
// would travel in the InstanceTask, and so in the Redis job's task JSON, without a wire change).
//
// The trace (GenAI semantic conventions):
//   invoke_workflow {recipe name}                  the run (or one resume of it)
//     invoke_agent {task}                          one attempt of an instance
//       chat {model}                               one model call: a turn (message_start .. message_end), or
//                                                  a summary or compaction call (its call_usage, see below)
//       execute_tool {tool}                        one tool call
//       verify                                     the task's verify command
//       land                                       the patch landed (apply / branch)
//     approval {task}                              an approval gate, requested .. answered
//     publish {task}                               a changeset published
// A summary or compaction call is no message of the conversation: it sends no message_start /
// message_end, only its call_usage (every call logs one). A compaction's calls come between the
// agent's (auto_)compaction_start and _end events, in order on the thread's one port, so a
// call_usage inside that window is such a call: its chat span runs from the window's start (or the
// previous call's end) to its call_usage, with `orchestrate.call.purpose`. A turn's call_usage is
// left alone (its span comes from message_end, which has the finish reason).
// Failures are span status ERROR with `error.type` the failure class of run-events.ts.
//
// Secrets: the store redacts each event before its listeners see it (the run's redaction set of
// run/secrets.ts), and every string attribute goes through the same redactor once more here.
// Prompts, replies and tool arguments/results only with `captureContent`.
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { RunEvent } from '../run/run-events.js';
import {
  GEN_AI,
  OPERATIONS,
  ORCH,
  finishReason,
  outputMessage,
  providerName,
  userMessage,
} from './genai-attributes.js';

export interface RunSpanOptions {
  /** Redacts text the way the run's store does (RunStore.redactText). */
  redact: (text: string) => string;
  /** Put prompts, replies and tool arguments/results into spans. */
  captureContent: boolean;
  /** The recipe's name for a resume's span (run_resume does not repeat it; run_start has it). */
  workflowName?: string;
}

interface AttemptSpans {
  span: Span;
  ctx: Context;
  /** The latest event of the attempt: where a verify or landing span starts. */
  lastTs: number;
  agentEndTs?: number;
  chat?: { span: Span; startTs: number };
  tools: Map<string, Span>;
  /** Inside a compaction: its purpose, and where its next call's span starts. */
  compaction?: { purpose: 'summary' | 'compaction'; fromTs: number };
}

type Of<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

const attemptId = (key: string, attempt: number): string => `${key}#${attempt}`;

/** A W3C traceparent for a span (version 00, sampled), for carrying the trace across a process boundary. */
export function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-0${(c.traceFlags & 1).toString(16)}`;
}

export class RunSpans {
  private workflow?: { span: Span; ctx: Context };
  private readonly attempts = new Map<string, AttemptSpans>();
  private readonly gates = new Map<string, Span>();

  constructor(
    private readonly tracer: Tracer,
    private readonly opts: RunSpanOptions,
  ) {}

  /** The traceparent of the run's span (undefined before run_start). */
  get traceparent(): string | undefined {
    return this.workflow ? traceparentOf(this.workflow.span) : undefined;
  }

  /**
   * The traceparent of an attempt's invoke_agent span, for a process that runs the attempt and
   * wants its own spans under it (none does yet: see the header).
   */
  attemptTraceparent(key: string, attempt: number): string | undefined {
    const a = this.attempts.get(attemptId(key, attempt));
    return a ? traceparentOf(a.span) : undefined;
  }

  /** Applies one run event. Never throws: a trace is not worth a run. */
  onEvent(e: RunEvent): void {
    try {
      this.apply(e);
    } catch {
      // A span that cannot be built is left out.
    }
  }

  /** Ends every span still open (a run that stopped without run_end), at `ts`. */
  endAll(ts: number = Date.now()): void {
    for (const a of this.attempts.values()) this.cutOff(a, ts, 'the run stopped before this attempt ended');
    this.attempts.clear();
    // A gate still waiting when the run stopped: no decision, said as such (a resume asks again).
    for (const g of this.gates.values()) {
      g.setAttribute(ORCH.decision, 'unanswered');
      g.end(ts);
    }
    this.gates.clear();
    this.workflow?.span.end(ts);
    this.workflow = undefined;
  }

  private apply(e: RunEvent): void {
    switch (e.type) {
      case 'run_start':
      case 'run_resume':
        this.startWorkflow(e);
        return;
      case 'run_end':
        this.endWorkflow(e);
        return;
      case 'instance_start':
        this.startAttempt(e);
        return;
      case 'instance_worker':
        this.attempts.get(attemptId(e.key, e.attempt))?.span.setAttribute(ORCH.worker, this.text(e.worker));
        return;
      case 'agent_event':
        this.agentEvent(e);
        return;
      case 'call_usage':
        this.sessionCall(e);
        return;
      case 'verify':
        this.verify(e);
        return;
      case 'instance_done':
        this.done(e);
        return;
      case 'instance_failed':
      case 'instance_retry':
        this.failed(e);
        return;
      case 'approval_requested':
        this.gateRequested(e);
        return;
      case 'approval_given':
        this.gateAnswered(e);
        return;
      case 'changeset_published':
        this.published(e);
        return;
      default:
        return;
    }
  }

  private text(s: string): string {
    return this.opts.redact(s);
  }

  private json(v: unknown): string {
    return this.opts.redact(JSON.stringify(v) ?? 'null');
  }

  private start(name: string, kind: SpanKind, ts: number, attributes: Attributes, parent?: Context): Span {
    return this.tracer.startSpan(name, { kind, startTime: ts, attributes }, parent ?? ROOT_CONTEXT);
  }

  private startWorkflow(e: Of<'run_start'> | Of<'run_resume'>): void {
    this.endAll(e.ts);
    const name = this.text(e.type === 'run_start' ? e.name : (this.opts.workflowName ?? e.runId));
    const span = this.start(`invoke_workflow ${name}`, OPERATIONS.invoke_workflow, e.ts, {
      [GEN_AI.operationName]: 'invoke_workflow',
      [GEN_AI.workflowName]: name,
      [ORCH.runId]: e.runId,
      ...(e.type === 'run_resume' ? { 'orchestrate.run.resumed': true } : {}),
    });
    this.workflow = { span, ctx: trace.setSpan(ROOT_CONTEXT, span) };
  }

  private endWorkflow(e: Of<'run_end'>): void {
    const w = this.workflow;
    if (!w) return;
    // Attempts still open (interrupted) end with the run.
    for (const a of this.attempts.values()) this.cutOff(a, e.ts, `the run ended (${e.status}) before this attempt did`);
    this.attempts.clear();
    w.span.setAttributes({ [ORCH.runStatus]: e.status, ...this.usageAttributes(e.usage) });
    if (e.status !== 'succeeded') {
      w.span.setAttribute(GEN_AI.errorType, e.status);
      w.span.setStatus({ code: SpanStatusCode.ERROR, message: `run ${e.status}` });
    }
    this.endAll(e.ts);
  }

  private usageAttributes(u: { input: number; output: number; cacheRead: number; cacheWrite: number; cost: number }) {
    // The conventions count cached input in gen_ai.usage.input_tokens; ours keeps them apart.
    return {
      [GEN_AI.inputTokens]: u.input + u.cacheRead + u.cacheWrite,
      [GEN_AI.outputTokens]: u.output,
      [GEN_AI.cacheReadTokens]: u.cacheRead,
      [GEN_AI.cacheWriteTokens]: u.cacheWrite,
      [ORCH.costUsd]: u.cost,
    };
  }

  private startAttempt(e: Of<'instance_start'>): void {
    const id = attemptId(e.key, e.attempt);
    // instance_start may come twice for one attempt (see architecture.md): keep the first span.
    if (this.attempts.has(id)) return;
    const agent = this.text(e.task);
    const span = this.start(
      `invoke_agent ${agent}`,
      OPERATIONS.invoke_agent,
      e.ts,
      {
        [GEN_AI.operationName]: 'invoke_agent',
        [GEN_AI.agentName]: agent,
        [GEN_AI.conversationId]: `${e.runId}/${this.text(e.key)}`,
        [ORCH.task]: agent,
        [ORCH.key]: this.text(e.key),
        [ORCH.attempt]: e.attempt,
        ...(e.worker ? { [ORCH.worker]: this.text(e.worker) } : {}),
        ...(this.opts.captureContent && e.prompt ? { [GEN_AI.inputMessages]: this.json([userMessage(e.prompt)]) } : {}),
      },
      this.workflow?.ctx,
    );
    this.attempts.set(id, { span, ctx: trace.setSpan(ROOT_CONTEXT, span), lastTs: e.ts, tools: new Map() });
  }

  private agentEvent(e: Of<'agent_event'>): void {
    const a = this.attempts.get(attemptId(e.key, e.attempt));
    if (!a) return;
    a.lastTs = e.ts;
    const ev = e.event as Record<string, unknown> & { type: string };
    switch (ev.type) {
      case 'message_start':
        // A run's threads slim it to { role }; a session's own event has the message.
        if (ev.role === 'assistant' || (ev.message as { role?: string } | undefined)?.role === 'assistant')
          this.startChat(a, e.ts);
        return;
      case 'message_end': {
        const m = ev.message as Record<string, unknown> | undefined;
        if (m?.role === 'assistant') this.endChat(a, m, e.ts);
        return;
      }
      case 'tool_execution_start':
        this.startTool(a, ev, e.ts);
        return;
      case 'tool_execution_end':
        this.endTool(a, ev, e.ts);
        return;
      case 'agent_end':
        a.agentEndTs = e.ts;
        return;
      // In a run the only compact() asked for is the handoff summary (agent-host.ts); the runtime's
      // own compactions start as auto_compaction_start.
      case 'compaction_start':
        a.compaction = { purpose: 'summary', fromTs: e.ts };
        return;
      case 'auto_compaction_start':
        a.compaction = { purpose: 'compaction', fromTs: e.ts };
        return;
      case 'compaction_end':
      case 'auto_compaction_end':
        a.compaction = undefined;
        return;
      default:
        return;
    }
  }

  private startChat(a: AttemptSpans, ts: number): void {
    // A call that never reported its end (aborted stream) ends where the next one starts.
    a.chat?.span.end(ts);
    // The name and model are known at the reply's end; the span is renamed then.
    const span = this.start('chat', OPERATIONS.chat, ts, { [GEN_AI.operationName]: 'chat' }, a.ctx);
    a.chat = { span, startTs: ts };
  }

  private endChat(a: AttemptSpans, m: Record<string, unknown>, ts: number): void {
    if (!a.chat) this.startChat(a, ts);
    const chat = a.chat!;
    a.chat = undefined;
    const model = this.text(String(m.model ?? 'unknown'));
    const stop = String(m.stopReason ?? 'stop');
    const usage = m.usage as { input: number; output: number; cacheRead: number; cacheWrite: number } | undefined;
    chat.span.updateName(`chat ${model}`);
    chat.span.setAttributes({
      [GEN_AI.providerName]: providerName(this.text(String(m.provider ?? 'unknown'))),
      [GEN_AI.requestModel]: model,
      [GEN_AI.responseModel]: model,
      [GEN_AI.finishReasons]: [finishReason(stop)],
      ...(usage
        ? {
            [GEN_AI.inputTokens]: usage.input + usage.cacheRead + usage.cacheWrite,
            [GEN_AI.outputTokens]: usage.output,
            [GEN_AI.cacheReadTokens]: usage.cacheRead,
            [GEN_AI.cacheWriteTokens]: usage.cacheWrite,
          }
        : {}),
      ...(this.opts.captureContent && Array.isArray(m.content)
        ? { [GEN_AI.outputMessages]: this.json([outputMessage(m.content, stop)]) }
        : {}),
    });
    if (stop === 'error' || stop === 'aborted') {
      chat.span.setAttribute(GEN_AI.errorType, String(m.errorKind ?? m.errorStatus ?? stop));
      chat.span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(typeof m.errorMessage === 'string' ? { message: this.text(m.errorMessage) } : {}),
      });
    }
    chat.span.end(Math.max(ts, chat.startTs));
  }

  /** A summary or compaction call's span, from its call_usage (a turn's call_usage makes none). */
  private sessionCall(e: Of<'call_usage'>): void {
    const a = this.attempts.get(attemptId(e.key, e.attempt));
    if (!a?.compaction) return;
    const { model, provider, usage } = e;
    this.summaryCall(e, {
      purpose: a.compaction.purpose,
      model,
      provider,
      usage,
      startTs: a.compaction.fromTs,
      endTs: e.ts,
    });
    a.compaction.fromTs = e.ts;
  }

  /**
   * A model call that is no conversation message (a summary or a compaction's) as a chat span of
   * the attempt, with `orchestrate.call.purpose`. The run gets them from call_usage (above);
   * `orchestrate agent` from its session's own summary calls (agent-tracing.ts).
   */
  summaryCall(
    ref: { key: string; attempt: number },
    call: {
      purpose: 'summary' | 'compaction';
      model: string;
      provider?: string | undefined;
      usage: { input: number; output: number; cacheRead: number; cacheWrite: number; cost: number };
      startTs: number;
      endTs: number;
      /** The call failed (stopReason error or aborted): its message. */
      error?: { type: string; message?: string };
    },
  ): void {
    const a = this.attempts.get(attemptId(ref.key, ref.attempt));
    if (!a) return;
    const model = this.text(call.model);
    const span = this.start(
      `chat ${model}`,
      OPERATIONS.chat,
      Math.min(call.startTs, call.endTs),
      {
        [GEN_AI.operationName]: 'chat',
        ...(call.provider ? { [GEN_AI.providerName]: providerName(this.text(call.provider)) } : {}),
        [GEN_AI.requestModel]: model,
        [GEN_AI.responseModel]: model,
        ...this.usageAttributes(call.usage),
        [ORCH.callPurpose]: call.purpose,
      },
      a.ctx,
    );
    if (call.error) {
      span.setAttribute(GEN_AI.errorType, this.text(call.error.type));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(call.error.message !== undefined ? { message: this.text(call.error.message) } : {}),
      });
    }
    span.end(call.endTs);
    a.lastTs = Math.max(a.lastTs, call.endTs);
  }

  private startTool(a: AttemptSpans, ev: Record<string, unknown>, ts: number): void {
    const id = String(ev.toolCallId ?? '');
    const name = this.text(String(ev.toolName ?? 'tool'));
    const span = this.start(
      `execute_tool ${name}`,
      OPERATIONS.execute_tool,
      ts,
      {
        [GEN_AI.operationName]: 'execute_tool',
        [GEN_AI.toolName]: name,
        [GEN_AI.toolCallId]: this.text(id),
        [GEN_AI.toolType]: 'function',
        ...(this.opts.captureContent && ev.args !== undefined ? { [GEN_AI.toolArguments]: this.json(ev.args) } : {}),
      },
      a.ctx,
    );
    a.tools.get(id)?.end(ts);
    a.tools.set(id, span);
  }

  private endTool(a: AttemptSpans, ev: Record<string, unknown>, ts: number): void {
    const id = String(ev.toolCallId ?? '');
    const span = a.tools.get(id);
    if (!span) return;
    a.tools.delete(id);
    if (this.opts.captureContent && ev.result !== undefined) span.setAttribute(GEN_AI.toolResult, this.json(ev.result));
    if (ev.isError === true) {
      span.setAttribute(GEN_AI.errorType, 'tool_error');
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(ts);
  }

  private verify(e: Of<'verify'>): void {
    const a = this.attempts.get(attemptId(e.key, e.attempt));
    if (!a) return;
    const span = this.start(
      'verify',
      SpanKind.INTERNAL,
      a.lastTs,
      { [ORCH.verifyCommand]: this.text(e.command) },
      a.ctx,
    );
    if (!e.ok) {
      span.setAttribute(GEN_AI.errorType, 'verify_failed');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'verify command failed' });
    }
    span.end(Math.max(e.ts, a.lastTs));
    a.lastTs = e.ts;
  }

  private done(e: Of<'instance_done'>): void {
    const id = attemptId(e.key, e.attempt);
    const a = this.attempts.get(id);
    if (!a) return;
    if (e.patchFile || e.branch || e.applied || (e.modifiedFiles && e.modifiedFiles.length > 0)) {
      const from = Math.max(a.agentEndTs ?? a.lastTs, a.lastTs);
      const land = this.start(
        'land',
        SpanKind.INTERNAL,
        Math.min(from, e.ts),
        {
          [ORCH.landFiles]: e.modifiedFiles?.length ?? 0,
          ...(e.branch ? { [ORCH.landBranch]: this.text(e.branch) } : {}),
          ...(e.applied !== undefined ? { [ORCH.landApplied]: e.applied } : {}),
        },
        a.ctx,
      );
      land.end(e.ts);
    }
    a.span.setAttributes(this.usageAttributes(e.usage));
    this.endAttempt(a, e.ts);
    this.attempts.delete(id);
  }

  private failed(e: Of<'instance_failed'> | Of<'instance_retry'>): void {
    const id = attemptId(e.key, e.attempt);
    const a = this.attempts.get(id);
    if (!a) return;
    a.span.setAttribute(GEN_AI.errorType, e.failure);
    if (e.type === 'instance_failed' && e.usage) a.span.setAttributes(this.usageAttributes(e.usage));
    a.span.setStatus({ code: SpanStatusCode.ERROR, message: this.text(e.error).slice(0, 500) });
    this.endAttempt(a, e.ts);
    this.attempts.delete(id);
  }

  /**
   * Ends an attempt that the run's end cut off: no event of its own says how it went, and a span
   * with no status reads as a success in a trace viewer. It is an error of class `interrupted`, as
   * `orchestrate show` calls such an attempt, and so are its call and tool still open.
   */
  private cutOff(a: AttemptSpans, ts: number, why: string): void {
    for (const span of [a.span, a.chat?.span, ...a.tools.values()]) {
      span?.setAttribute(GEN_AI.errorType, 'interrupted');
      span?.setStatus({ code: SpanStatusCode.ERROR, message: why });
    }
    this.endAttempt(a, ts);
  }

  private endAttempt(a: AttemptSpans, ts: number): void {
    a.chat?.span.end(ts);
    a.chat = undefined;
    for (const t of a.tools.values()) t.end(ts);
    a.tools.clear();
    a.span.end(ts);
  }

  private gateId(e: { task: string; key: string; gate?: string }): string {
    return `${e.gate ?? 'instance'}:${e.task}:${e.key}`;
  }

  private gateRequested(e: Of<'approval_requested'>): void {
    const id = this.gateId(e);
    if (this.gates.has(id)) return;
    const span = this.start(
      `approval ${this.text(e.task)}`,
      SpanKind.INTERNAL,
      e.ts,
      { [ORCH.task]: this.text(e.task), [ORCH.key]: this.text(e.key), [ORCH.gate]: e.gate ?? 'instance' },
      this.workflow?.ctx,
    );
    this.gates.set(id, span);
  }

  private gateAnswered(e: Of<'approval_given'>): void {
    const id = this.gateId(e);
    const span = this.gates.get(id);
    if (!span) return;
    this.gates.delete(id);
    span.setAttributes({
      [ORCH.decision]: e.decision,
      [ORCH.decidedBy]: this.text(e.by),
      [ORCH.decidedVia]: e.via,
    });
    span.end(e.ts);
  }

  private published(e: Of<'changeset_published'>): void {
    const span = this.start(
      `publish ${this.text(e.task)}`,
      SpanKind.INTERNAL,
      e.ts,
      { [ORCH.task]: this.text(e.task), [ORCH.key]: this.text(e.key), [ORCH.publishOutcome]: e.outcome },
      this.workflow?.ctx,
    );
    if (e.outcome === 'failed' || e.outcome === 'refused') {
      span.setAttribute(GEN_AI.errorType, `publish_${e.outcome}`);
      span.setStatus({ code: SpanStatusCode.ERROR, ...(e.detail ? { message: this.text(e.detail) } : {}) });
    }
    span.end(e.ts);
  }
}
