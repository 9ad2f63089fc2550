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
  /context length of only \d+ tokens/i,
  /longer than the maximum model length/i,
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

// Wordings that state the limit itself; the first number group is the window in tokens.
const LIMIT_PATTERNS: readonly RegExp[] = [
  /\d+ tokens? > (\d+) maximum/i, // Anthropic: prompt is too long: 60425 tokens > 55000 maximum
  /maximum context length is (\d+) tokens/i, // OpenAI, vLLM, OpenRouter
  /maximum model length of (\d+)/i, // vLLM: ... is longer than the maximum model length of 55000
  /context length of only (\d+) tokens/i, // LM Studio
  /\bn_ctx\b\D{0,5}(\d+)/i, // llama.cpp error fields
  /available context size\D{0,12}(\d+)/i, // llama.cpp, older wording
  /too large for model with (\d+) maximum context length/i,
  /context window of (\d+) tokens/i,
  /maximum prompt length is (\d+)/i,
  /exceeds the limit of (\d+)/i,
];

/**
 * The context window an overflow error states, in tokens, or undefined when the text does not
 * name one (or is not an overflow at all). The server's own figure beats any table: a gateway or
 * a local server often serves a model with a smaller window than the model supports.
 */
export function overflowLimitFromError(text: string | undefined): number | undefined {
  if (!text || !isOverflowErrorText(text)) return undefined;
  for (const re of LIMIT_PATTERNS) {
    const m = re.exec(text);
    const n = m ? Number(m[1]) : Number.NaN;
    // Below 1000 tokens no coding agent can work: such a figure is a misread, not a window.
    if (Number.isFinite(n) && n >= 1000) return n;
  }
  return undefined;
}

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
  if (message.stopReason === 'error')
    return message.errorMessage !== undefined && isOverflowErrorText(message.errorMessage);
  if (contextWindow !== undefined && contextWindow > 0 && message.stopReason === 'stop') {
    return message.usage.input + message.usage.cacheRead > contextWindow;
  }
  return false;
}
