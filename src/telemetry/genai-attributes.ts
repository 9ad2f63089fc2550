// The OpenTelemetry GenAI semantic conventions this project emits (semantic-conventions 1.45,
// GenAI spans, status Development): attribute names, span kinds, and how a model call of this
// project maps onto a `chat` span. Names are spelled out here rather than imported from
// @opentelemetry/semantic-conventions' incubating entry, which the SDK does not promise to keep.
import { SpanKind } from '@opentelemetry/api';

export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  workflowName: 'gen_ai.workflow.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
} as const;

/** gen_ai.operation.name values, with the span kind the conventions give each here. */
export const OPERATIONS = {
  // The run and its agents execute in this process (or on workers this process drives): INTERNAL.
  invoke_workflow: SpanKind.INTERNAL,
  invoke_agent: SpanKind.INTERNAL,
  // A model call goes to a remote inference service: CLIENT.
  chat: SpanKind.CLIENT,
  execute_tool: SpanKind.INTERNAL,
} as const;

/** This project's own attributes (not in the conventions), under one prefix. */
export const ORCH = {
  runId: 'orchestrate.run.id',
  task: 'orchestrate.task',
  key: 'orchestrate.instance.key',
  attempt: 'orchestrate.attempt',
  worker: 'orchestrate.worker',
  costUsd: 'orchestrate.usage.cost_usd',
  runStatus: 'orchestrate.run.status',
  verifyCommand: 'orchestrate.verify.command',
  landFiles: 'orchestrate.land.files',
  landBranch: 'orchestrate.land.branch',
  landApplied: 'orchestrate.land.applied',
  gate: 'orchestrate.gate',
  decision: 'orchestrate.approval.decision',
  decidedBy: 'orchestrate.approval.by',
  decidedVia: 'orchestrate.approval.via',
  publishOutcome: 'orchestrate.publish.outcome',
  /** A chat span's call made for the session rather than a turn: `summary` (the handoff summary) or `compaction`. */
  callPurpose: 'orchestrate.call.purpose',
} as const;

/** The conventions' well-known provider names for ours; any other provider keeps its recipe name. */
export function providerName(provider: string): string {
  const p = provider.toLowerCase();
  if (p === 'anthropic') return 'anthropic';
  if (p === 'openai') return 'openai';
  if (p === 'openrouter') return 'openrouter';
  return provider;
}

/** A StopReason of ai/types.ts as a gen_ai.response.finish_reasons value. */
export function finishReason(stopReason: string): string {
  if (stopReason === 'toolUse') return 'tool_call';
  return stopReason;
}

interface ContentBlock {
  type: string;
  text?: string;
  thinking?: string;
  id?: string;
  name?: string;
  arguments?: unknown;
}

/** An assistant message's content as one gen_ai.output.messages entry (the conventions' parts). */
export function outputMessage(content: readonly ContentBlock[], stopReason: string): Record<string, unknown> {
  const parts = content.flatMap((b): Record<string, unknown>[] => {
    if (b.type === 'text') return [{ type: 'text', content: b.text ?? '' }];
    if (b.type === 'thinking') return [{ type: 'reasoning', content: b.thinking ?? '' }];
    if (b.type === 'toolCall') return [{ type: 'tool_call', id: b.id, name: b.name, arguments: b.arguments }];
    return [];
  });
  return { role: 'assistant', parts, finish_reason: finishReason(stopReason) };
}

/** A user prompt as one gen_ai.input.messages entry. */
export function userMessage(text: string): Record<string, unknown> {
  return { role: 'user', parts: [{ type: 'text', content: text }] };
}
