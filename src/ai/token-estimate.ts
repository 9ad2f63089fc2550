// Token estimates that err high. Every layer that budgets context (compaction, branch summaries,
// the runtime's overflow checks) uses these, so they live in layer 0 and know messages only by
// shape: internal roles of higher layers are handled structurally, unknown ones by their JSON.
import type { Usage } from './types.js';

export const TOKEN_ESTIMATE_DEFAULTS = {
  /** English and code average ~4 characters per token; counting 4 keeps the estimate at or above real use. */
  asciiCharsPerToken: 4,
  /** Latin extensions, Greek, Cyrillic, Hebrew, Arabic... tokenize at ~2-3 characters per token; 2 errs high. */
  narrowCharsPerToken: 2,
  /** An image is billed roughly like 1200 tokens (4800 characters) at typical resolutions. */
  imageChars: 4800,
} as const;

// Work in quarter-token units so the three character classes add up in integers.
const ASCII_UNITS = 1;
const NARROW_UNITS = 2;
const WIDE_UNITS = 4;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range starts at NUL
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Quarter-token units of a string: ASCII 1, narrow non-ASCII 2, everything from the Indic blocks
 * upward (CJK, kana, Hangul, Thai, fullwidth forms, symbols, each half of a surrogate pair) 4,
 * i.e. at least one token per wide character (chars/4 under-counts Chinese text by ~4x).
 */
export function textUnits(text: string): number {
  const n = text.length;
  if (!NON_ASCII.test(text)) return n * ASCII_UNITS;
  let units = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    units += c < 0x80 ? ASCII_UNITS : c < 0x0900 ? NARROW_UNITS : WIDE_UNITS;
  }
  return units;
}

/** Estimated tokens of plain text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(textUnits(text) / WIDE_UNITS);
}

const IMAGE_UNITS = TOKEN_ESTIMATE_DEFAULTS.imageChars * ASCII_UNITS;

/** Any message: the layer-0 roles, the agent layer's internal roles, or something unknown. */
export type EstimableMessage = { role: string };

type Block = { type?: unknown; text?: unknown; thinking?: unknown; name?: unknown; arguments?: unknown };

function contentUnits(content: unknown): number {
  if (typeof content === 'string') return textUnits(content);
  if (!Array.isArray(content)) return 0;
  let units = 0;
  for (const raw of content as Block[]) {
    if (!raw || typeof raw !== 'object') continue;
    switch (raw.type) {
      case 'text':
        units += typeof raw.text === 'string' ? textUnits(raw.text) : 0;
        break;
      case 'thinking':
        units += typeof raw.thinking === 'string' ? textUnits(raw.thinking) : 0;
        break;
      case 'image':
        units += IMAGE_UNITS;
        break;
      case 'toolCall':
        units +=
          (typeof raw.name === 'string' ? textUnits(raw.name) : 0) + textUnits(JSON.stringify(raw.arguments ?? {}));
        break;
      default:
        units += textUnits(JSON.stringify(raw));
    }
  }
  return units;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Estimated tokens one message adds to a context. */
export function estimateMessageTokens(message: EstimableMessage): number {
  const m = message as Record<string, unknown>;
  let units: number;
  switch (message.role) {
    case 'user':
    case 'assistant':
    case 'toolResult':
    case 'custom':
      units = contentUnits(m.content);
      break;
    case 'bashExecution':
      // Excluded executions never reach the model (convertToLlm drops them).
      units = m.excludeFromContext === true ? 0 : textUnits(str(m.command)) + textUnits(str(m.output));
      break;
    case 'compactionSummary':
    case 'branchSummary':
      units = textUnits(str(m.summary));
      break;
    case 'peer':
      units = textUnits(str(m.from)) + textUnits(str(m.text));
      break;
    default:
      units = textUnits(JSON.stringify(message));
  }
  return Math.ceil(units / WIDE_UNITS);
}

/** Tokens a reply's usage says the context held (its output becomes context too). */
export function calculateContextTokens(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

export interface ContextTokenEstimate {
  tokens: number;
  /** Tokens reported by the last successful assistant reply (0 when none). */
  usageTokens: number;
  /** Estimated tokens of the messages after that reply (or of all messages when none). */
  trailingTokens: number;
  /** Index of that reply in the list, -1 when none. */
  lastUsageIndex: number;
}

function usageOf(message: EstimableMessage): Usage | undefined {
  if (message.role !== 'assistant') return undefined;
  const m = message as { stopReason?: unknown; usage?: Usage };
  if (m.stopReason === 'error' || m.stopReason === 'aborted' || !m.usage) return undefined;
  // A reply that reports no tokens at all (a test double, a proxy) says nothing about the context.
  return calculateContextTokens(m.usage) > 0 ? m.usage : undefined;
}

/**
 * Context size: the provider's own count from the last successful reply, plus estimates of what
 * came after it. Errored and aborted replies are skipped because their usage is partial or absent.
 */
export function estimateContextTokens(messages: readonly EstimableMessage[]): ContextTokenEstimate {
  let lastUsageIndex = -1;
  let usageTokens = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const usage = usageOf(messages[i]!);
    if (usage) {
      lastUsageIndex = i;
      usageTokens = calculateContextTokens(usage);
      break;
    }
  }
  let trailingTokens = 0;
  for (let i = lastUsageIndex + 1; i < messages.length; i++) trailingTokens += estimateMessageTokens(messages[i]!);
  return { tokens: usageTokens + trailingTokens, usageTokens, trailingTokens, lastUsageIndex };
}
