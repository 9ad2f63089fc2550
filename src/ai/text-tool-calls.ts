// Tool calls a model wrote as JSON text instead of the API's tool_calls field. Local models served
// without a tool-call parser (Ollama templates, llama.cpp without --jinja, vLLM without
// --tool-call-parser) answer `{"name": "read", "arguments": {...}}`, a list of those, the same
// inside ```json fences, or Hermes/Qwen `<tool_call>...</tool_call>` tags. Only with
// compat.text_tool_calls, and only names of tools the request offered, so ordinary JSON in an
// answer stays text.

export interface TextToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface TextToolCallParse {
  calls: TextToolCall[];
  /** The text that is not a call (trimmed; '' when the reply was calls only). */
  rest: string;
}

const TAG = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;
const FENCE = /^```(?:json|tool_call)?\s*\n?([\s\S]*?)\n?```$/;

function asCall(v: unknown, tools: ReadonlySet<string>): TextToolCall | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const fn = o.function !== null && typeof o.function === 'object' ? (o.function as Record<string, unknown>) : o;
  const name = fn.name;
  if (typeof name !== 'string' || !tools.has(name)) return undefined;
  let args = fn.arguments ?? fn.parameters ?? fn.input ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
  return { name, arguments: args as Record<string, unknown> };
}

/** Calls from one JSON text: an object or an array of objects, all of them calls, else none. */
function callsFromJson(text: string, tools: ReadonlySet<string>): TextToolCall[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const items = Array.isArray(v) ? v : [v];
  if (items.length === 0) return undefined;
  const calls = items.map((i) => asCall(i, tools));
  return calls.every((c): c is TextToolCall => c !== undefined) ? calls : undefined;
}

/** Tool calls in a reply's text, or undefined when it holds none. */
export function parseTextToolCalls(text: string, toolNames: Iterable<string>): TextToolCallParse | undefined {
  const tools = new Set(toolNames);
  if (tools.size === 0) return undefined;
  const trimmed = text.trim();
  if (trimmed.includes('<tool_call>')) {
    const calls: TextToolCall[] = [];
    const rest = trimmed.replace(TAG, (whole, body: string) => {
      const found = callsFromJson(body.replace(FENCE, '$1').trim(), tools);
      if (!found) return whole;
      calls.push(...found);
      return '';
    });
    return calls.length > 0 ? { calls, rest: rest.trim() } : undefined;
  }
  const fenced = FENCE.exec(trimmed);
  const calls = callsFromJson(fenced ? fenced[1]!.trim() : trimmed, tools);
  return calls ? { calls, rest: '' } : undefined;
}

/**
 * Whether streamed text may still turn out to be a tool call written as text (so it is held back
 * instead of shown): it starts like JSON, a fence, or a tool_call tag.
 */
export function mayBeTextToolCall(textSoFar: string): boolean {
  const t = textSoFar.trimStart();
  if (t === '') return true;
  for (const start of ['{', '[', '```', '<tool_call>']) {
    if (t.startsWith(start) || start.startsWith(t)) return true;
  }
  return false;
}
