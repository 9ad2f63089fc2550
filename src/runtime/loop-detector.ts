// Spots a model that repeats itself: the same tool call turn after turn, a short cycle of calls
// (read A, read B, read A, read B, ...), or the same text in reply after reply. Pure: it sees the
// replies of one prompt in order and says when the latest ones form a loop. What to do about it
// (warn, then stop) is the session's business.
import type { AssistantMessage, ToolCall } from '../ai/types.js';
import type { LoopDetectionSettings } from './run-limits.js';

export type LoopPattern = 'identical_calls' | 'cycle' | 'repeated_text';

export interface LoopFinding {
  pattern: LoopPattern;
  /** What was repeated, for the model and for the user ("read({"path":"a.ts"}) 4 times in a row"). */
  detail: string;
}

/**
 * Shorter texts never count as repeated: "Let me check the next file." before a different call
 * each turn is progress, not a loop.
 */
export const MIN_REPEATED_TEXT_CHARS = 80;

/** Longest shown form of one call: a loop over a huge write is still recognizable from its start. */
const SHOWN_CALL_CHARS = 200;

/** JSON with object keys sorted at every level: equal arguments give equal text whatever their order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** One tool call as a string: equal for the same name and arguments in any key order. */
export function toolCallSignature(call: ToolCall): string {
  return `${call.name}(${canonicalJson(call.arguments)})`;
}

/** One reply's tool calls as one string; '' when it made none. */
export function callSignature(message: AssistantMessage): string {
  const calls: string[] = [];
  for (const b of message.content) if (b.type === 'toolCall') calls.push(toolCallSignature(b));
  return calls.join(' + ');
}

function replyText(message: AssistantMessage): string {
  let text = '';
  for (const b of message.content) if (b.type === 'text') text += b.text;
  return text.replace(/\s+/g, ' ').trim();
}

function shown(signature: string): string {
  return signature.length <= SHOWN_CALL_CHARS ? signature : `${signature.slice(0, SHOWN_CALL_CHARS)}…`;
}

export class LoopDetector {
  /** Per reply: its call signature and its text, oldest first (only the tail is ever looked at). */
  private readonly calls: string[] = [];
  private readonly texts: string[] = [];
  private readonly keep: number;

  constructor(private readonly settings: LoopDetectionSettings) {
    this.keep = Math.max(settings.identicalCalls, 3 * settings.cycleRepeats, settings.repeatedText, 1);
  }

  reset(): void {
    this.calls.length = 0;
    this.texts.length = 0;
  }

  /** Records one successful reply; a finding when the replies up to it form a loop. */
  observe(message: AssistantMessage): LoopFinding | undefined {
    this.push(this.calls, callSignature(message));
    const text = replyText(message);
    this.push(this.texts, text.length >= MIN_REPEATED_TEXT_CHARS ? text : '');
    if (!this.settings.enabled) return undefined;
    return this.identical() ?? this.cycle() ?? this.repeatedText();
  }

  private push(list: string[], value: string): void {
    list.push(value);
    if (list.length > this.keep) list.shift();
  }

  /** The last `n` entries of `list` are all equal and not empty. */
  private static sameTail(list: readonly string[], n: number): boolean {
    if (n < 2 || list.length < n) return false;
    const last = list[list.length - 1]!;
    if (last === '') return false;
    for (let i = list.length - n; i < list.length - 1; i++) if (list[i] !== last) return false;
    return true;
  }

  private identical(): LoopFinding | undefined {
    const n = this.settings.identicalCalls;
    if (!LoopDetector.sameTail(this.calls, n)) return undefined;
    return {
      pattern: 'identical_calls',
      detail: `${shown(this.calls[this.calls.length - 1]!)} ${n} times in a row with the same arguments`,
    };
  }

  /** A period of 2 or 3 different calls, repeated cycleRepeats times without anything else between. */
  private cycle(): LoopFinding | undefined {
    const repeats = this.settings.cycleRepeats;
    if (repeats < 2) return undefined;
    for (const period of [2, 3]) {
      const span = period * repeats;
      if (this.calls.length < span) continue;
      const tail = this.calls.slice(-span);
      if (tail.some((c) => c === '')) continue;
      let periodic = true;
      for (let i = period; i < span && periodic; i++) periodic = tail[i] === tail[i - period];
      const one = tail.slice(0, period);
      // A period made of one call repeated is the identical-calls pattern, not a cycle.
      if (!periodic || new Set(one).size < 2) continue;
      return {
        pattern: 'cycle',
        detail: `the same ${period} calls (${one.map(shown).join(', ')}) ${repeats} times over`,
      };
    }
    return undefined;
  }

  private repeatedText(): LoopFinding | undefined {
    const n = this.settings.repeatedText;
    if (!LoopDetector.sameTail(this.texts, n)) return undefined;
    return {
      pattern: 'repeated_text',
      detail: `the same text ${n} times in a row: "${shown(this.texts[this.texts.length - 1]!)}"`,
    };
  }
}
