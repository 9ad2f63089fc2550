// Context-overflow detection (kernel-spec 2.8): providers word "your prompt is too big" in many
// ways; upstream compaction needs one yes/no answer.
import type { AssistantMessage } from './types.js';

const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i,
  /input is too long for requested model/i,
  /exceeds the context window/i,
  /input token count.*exceeds the maximum/i,
  /maximum prompt length is \d+/i,
  /reduce the length of the messages/i,
  /maximum context length is \d+ tokens/i,
  /exceeds the limit of \d+/i,
  /exceeds the available context size/i,
  /greater than the context length/i,
  /context window exceeds limit/i,
  /exceeded model token limit/i,
  /too large for model with \d+ maximum context length/i,
  /model_context_window_exceeded/i,
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
  // Cerebras answers an oversize request with a bare status line.
  /^4(00|13)\s*(status code)?\s*\(no body\)/i,
];

/** True when the error text is one of the known "context too long" wordings. */
export function isOverflowErrorText(text: string): boolean {
  return OVERFLOW_PATTERNS.some((re) => re.test(text));
}

/**
 * True when the reply failed because the context is too long, or (given `contextWindow`)
 * succeeded although its input exceeded the window (a provider that truncates silently).
 */
export function isContextOverflow(
  message: Pick<AssistantMessage, 'stopReason' | 'errorMessage' | 'usage'>,
  contextWindow?: number,
): boolean {
  if (message.stopReason === 'error') return message.errorMessage !== undefined && isOverflowErrorText(message.errorMessage);
  if (contextWindow !== undefined && contextWindow > 0 && message.stopReason === 'stop') {
    return message.usage.input + message.usage.cacheRead > contextWindow;
  }
  return false;
}
