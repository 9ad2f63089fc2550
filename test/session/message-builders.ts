// Builders for realistic messages and a scripted summarizer used by the session tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type {
  AssistantMessage,
  Context,
  Model,
  StreamOptions,
  ToolResultMessage,
  UserMessage,
} from '../../src/ai/types.js';
import { emptyUsage } from '../../src/ai/usage.js';

let clock = 1_700_000_000_000;
const tick = (): number => (clock += 1000);

/** A fresh temp folder, removed when the calling test finishes. */
export function tempDir(prefix = 'session-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Lets the current synchronous stretch end: a batched session store writes its staged lines at
 * this microtask checkpoint (its documented durability point).
 */
export function endOfStretch(): Promise<void> {
  return Promise.resolve();
}

export function user(text: string): UserMessage {
  return { role: 'user', content: [{ type: 'text', text }], timestamp: tick() };
}

export function assistant(
  text: string,
  opts: {
    toolCalls?: { id: string; name: string; args: Record<string, unknown> }[];
    provider?: string;
    model?: string;
    totalTokens?: number;
    stopReason?: AssistantMessage['stopReason'];
  } = {},
): AssistantMessage {
  const usage = emptyUsage();
  usage.input = opts.totalTokens ?? 0;
  usage.totalTokens = opts.totalTokens ?? 0;
  const content: AssistantMessage['content'] = [];
  if (text) content.push({ type: 'text', text });
  for (const c of opts.toolCalls ?? []) content.push({ type: 'toolCall', id: c.id, name: c.name, arguments: c.args });
  return {
    role: 'assistant',
    content,
    api: 'scripted',
    provider: opts.provider ?? 'test-provider',
    model: opts.model ?? 'test-model',
    usage,
    stopReason: opts.stopReason ?? (opts.toolCalls?.length ? 'toolUse' : 'stop'),
    timestamp: tick(),
  };
}

export function toolResult(toolCallId: string, text: string, toolName = 'read'): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId,
    toolName,
    content: [{ type: 'text', text }],
    isError: false,
    timestamp: tick(),
  };
}

export function testModel(overrides: Partial<Model> = {}): Model {
  return {
    id: 'summarizer-1',
    name: 'Summarizer',
    api: 'scripted',
    provider: 'test-provider',
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 32_000,
    ...overrides,
  };
}

export function reply(
  text: string,
  stopReason: AssistantMessage['stopReason'] = 'stop',
  errorMessage?: string,
): AssistantMessage {
  const m = assistant(text, { stopReason, provider: 'test-provider', model: 'summarizer-1' });
  if (errorMessage) m.errorMessage = errorMessage;
  return m;
}

export interface SummarizerCall {
  prompt: string;
  options: StreamOptions | undefined;
}

/**
 * A `complete` function that answers summary requests from a script: each entry is a reply text,
 * an error, or a function of the prompt. Records every prompt it received.
 */
export function scriptedSummarizer(script: (string | { error: string } | ((prompt: string) => string))[] = []) {
  const calls: SummarizerCall[] = [];
  const complete = async (_model: Model, context: Context, options?: StreamOptions): Promise<AssistantMessage> => {
    const first = context.messages[0];
    const prompt =
      first && first.role === 'user' && Array.isArray(first.content) && first.content[0]?.type === 'text'
        ? first.content[0].text
        : '';
    calls.push({ prompt, options });
    if (options?.signal?.aborted) return reply('', 'aborted', 'aborted');
    const step = script.length > 0 ? script[Math.min(calls.length - 1, script.length - 1)] : undefined;
    if (step === undefined) return reply(`## Goal\nSummary #${calls.length}`);
    if (typeof step === 'string') return reply(step);
    if (typeof step === 'function') return reply(step(prompt));
    return reply('', 'error', step.error);
  };
  return { complete, calls };
}
