// The user message a prompt becomes, and small readers of the conversation an AgentSession needs.
// Command hooks (hook-session.ts) may add context to a prompt: SessionStart on the first prompt of
// a session object, UserPromptSubmit on every prompt (which may also block it).
import type { AgentMessage } from '../agent/types.js';
import type { AssistantMessage, ImageContent, UserMessage } from '../ai/types.js';
import { PromptBlockedError, type HookSession } from './hook-session.js';

export function userMessage(text: string, images?: ImageContent[]): UserMessage {
  return { role: 'user', content: [{ type: 'text', text }, ...(images ?? [])], timestamp: Date.now() };
}

export function lastAssistant(messages: readonly AgentMessage[]): AssistantMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant') return m;
  }
  return undefined;
}

/** Text of the last assistant reply that has any, or null. */
export function lastAssistantText(messages: readonly AgentMessage[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    const text = m.content
      .filter((b) => b.type === 'text')
      .map((b) => (b.type === 'text' ? b.text : ''))
      .join('');
    if (text.trim() !== '') return text;
  }
  return null;
}

export interface PromptMessageContext {
  hooks: HookSession | undefined;
  /** True the first time it is called for a session object (SessionStart runs once). */
  claimSessionStart: () => boolean;
  /** The conversation already has messages (SessionStart's source is then "resume"). */
  resuming: boolean;
  signal: AbortSignal | undefined;
}

/**
 * The user message of a prompt: SessionStart hooks (first prompt of the session object) and
 * UserPromptSubmit hooks may add context; a UserPromptSubmit block rejects the prompt.
 */
export async function promptMessage(
  text: string,
  images: ImageContent[] | undefined,
  ctx: PromptMessageContext,
): Promise<UserMessage> {
  const hooks = ctx.hooks;
  const contexts: string[] = [];
  if (hooks && ctx.claimSessionStart()) {
    if (hooks.has('SessionStart')) {
      const verdict = await hooks.sessionStart(ctx.resuming ? 'resume' : 'startup', ctx.signal);
      if (verdict.context) contexts.push(verdict.context);
    }
  }
  if (hooks?.has('UserPromptSubmit')) {
    const verdict = await hooks.userPromptSubmit(text, ctx.signal);
    if (verdict.blocked) throw new PromptBlockedError(verdict.reason ?? 'no reason given');
    if (verdict.context) contexts.push(verdict.context);
  }
  if (contexts.length === 0) return userMessage(text, images);
  const context = { type: 'text' as const, text: `Hook context:\n${contexts.join('\n')}` };
  return { role: 'user', content: [{ type: 'text', text }, context, ...(images ?? [])], timestamp: Date.now() };
}
