// Request bodies for OpenAI-compatible servers: Chat Completions and the Responses API, built from
// our Context. Both share the message rules of transform-messages (no error replies replayed,
// every tool call answered), so a strict server never sees a dangling tool_call id.
import type OpenAI from 'openai';
import { defaultMaxTokens } from './models.js';
import { sanitizeSurrogates } from './sanitize.js';
import { plainSystemPrompt } from './system-prompt-parts.js';
import { transformMessages } from './transform-messages.js';
import type {
  AssistantMessage,
  Context,
  ImageContent,
  Model,
  StreamOptions,
  TextContent,
  ToolResultMessage,
} from './types.js';

type ChatParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ResponsesParams = OpenAI.Responses.ResponseCreateParamsStreaming;
type ResponsesInput = OpenAI.Responses.ResponseInputItem;

/** OpenAI accepts tool-call ids up to 40 characters; local servers accept anything. */
export function normalizeOpenAIToolCallId(id: string): string {
  const clean = id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
  return clean === '' ? 'call_empty' : clean;
}

const dataUrl = (image: ImageContent): string => `data:${image.mimeType};base64,${image.data}`;

function text(blocks: readonly (TextContent | ImageContent)[] | string): string {
  if (typeof blocks === 'string') return sanitizeSurrogates(blocks);
  return sanitizeSurrogates(
    blocks
      .filter((b): b is TextContent => b.type === 'text')
      .map((b) => b.text)
      .join('\n'),
  );
}

function images(blocks: readonly (TextContent | ImageContent)[] | string): ImageContent[] {
  return typeof blocks === 'string' ? [] : blocks.filter((b): b is ImageContent => b.type === 'image');
}

/** What an assistant message said: its text blocks joined as they streamed (no separator). */
function assistantText(m: AssistantMessage): string {
  return m.content
    .filter((b) => b.type === 'text')
    .map((b) => sanitizeSurrogates(b.text))
    .join('');
}

/** A tool result as a tool message's text (tool messages carry text only). */
function resultText(r: ToolResultMessage): string {
  const t = text(r.content);
  const n = images(r.content).length;
  const note = n > 0 ? `${t ? '\n' : ''}(${n} image${n === 1 ? '' : 's'} follow in the next message)` : '';
  return (t || (n === 0 ? '(no output)' : '')) + note;
}

/** The output budget: the caller's, else the declared max_tokens or a third of the model's limit (as for Anthropic). */
export function outputBudget(model: Model, options: StreamOptions): number {
  return options.maxTokens ?? defaultMaxTokens(model);
}

/** Chat Completions messages. Images of tool results follow as a user message (tool messages are text only). */
export function toChatMessages(model: Model, context: Context): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (context.systemPrompt && context.systemPrompt.trim() !== '')
    out.push({ role: 'system', content: sanitizeSurrogates(plainSystemPrompt(context.systemPrompt)) });
  const messages = transformMessages(context.messages, model, normalizeOpenAIToolCallId);
  let pendingImages: ImageContent[] = [];
  const flushImages = (): void => {
    if (pendingImages.length === 0) return;
    out.push({
      role: 'user',
      content: pendingImages.map((i) => ({ type: 'image_url' as const, image_url: { url: dataUrl(i) } })),
    });
    pendingImages = [];
  };
  for (const m of messages) {
    if (m.role !== 'toolResult') flushImages();
    if (m.role === 'user') {
      const imgs = images(m.content);
      if (imgs.length === 0) out.push({ role: 'user', content: text(m.content) });
      else {
        const parts: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [];
        for (const b of m.content as (TextContent | ImageContent)[]) {
          if (b.type === 'text') parts.push({ type: 'text', text: sanitizeSurrogates(b.text) });
          else parts.push({ type: 'image_url', image_url: { url: dataUrl(b) } });
        }
        out.push({ role: 'user', content: parts });
      }
    } else if (m.role === 'assistant') {
      const said = assistantText(m);
      const calls = m.content.filter((b) => b.type === 'toolCall');
      if (said === '' && calls.length === 0) continue; // nothing a server would accept
      const msg: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = {
        role: 'assistant',
        content: said === '' ? null : said,
      };
      if (calls.length > 0) {
        msg.tool_calls = calls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        }));
      }
      out.push(msg);
    } else {
      out.push({ role: 'tool', tool_call_id: m.toolCallId, content: resultText(m) });
      pendingImages.push(...images(m.content));
    }
  }
  flushImages();
  return out;
}

/** Which tool_choice forms a server rejected (by base URL): a 400 on the object form is remembered. */
const stringToolChoiceServers = new Set<string>();

export function rememberStringToolChoice(model: Model): void {
  stringToolChoiceServers.add(model.baseUrl ?? '');
}

export function usesStringToolChoice(model: Model): boolean {
  if (model.compat?.toolChoice) return model.compat.toolChoice === 'string';
  return stringToolChoiceServers.has(model.baseUrl ?? '');
}

/** True when the request names a tool in object form (the one a 400 can be about). */
export function hasObjectToolChoice(params: { tool_choice?: unknown }): boolean {
  return typeof params.tool_choice === 'object' && params.tool_choice !== null;
}

export function buildChatRequest(model: Model, context: Context, options: StreamOptions = {}): ChatParams {
  const params: ChatParams = { model: model.id, messages: toChatMessages(model, context), stream: true };
  const budget = outputBudget(model, options);
  if (model.compat?.maxTokensField === 'max_completion_tokens') params.max_completion_tokens = budget;
  else params.max_tokens = budget;
  if (model.compat?.streamUsage !== false) params.stream_options = { include_usage: true };
  if (options.temperature !== undefined) params.temperature = options.temperature;
  if (context.tools?.length) {
    params.tools = context.tools.map((t) => ({
      type: 'function' as const,
      function: {
        name: t.name,
        description: t.description,
        parameters: { ...t.parameters, properties: t.parameters.properties ?? {} },
      },
    }));
    const choice = options.toolChoice;
    if (typeof choice === 'string') params.tool_choice = choice;
    else if (choice)
      params.tool_choice = usesStringToolChoice(model)
        ? 'required'
        : { type: 'function', function: { name: choice.name } };
  }
  return params;
}

/** The same request with a named tool_choice in string form (after a 400 on the object form). */
export function withStringToolChoice<T extends { tool_choice?: unknown }>(params: T): T {
  return { ...params, tool_choice: 'required' };
}

/** Responses API input items. */
export function toResponsesInput(model: Model, context: Context): ResponsesInput[] {
  const out: ResponsesInput[] = [];
  for (const m of transformMessages(context.messages, model, normalizeOpenAIToolCallId)) {
    if (m.role === 'user') {
      const parts: OpenAI.Responses.ResponseInputContent[] = [];
      for (const b of typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content) {
        if (b.type === 'text') parts.push({ type: 'input_text', text: sanitizeSurrogates(b.text) });
        else parts.push({ type: 'input_image', image_url: dataUrl(b), detail: 'auto' });
      }
      out.push({ role: 'user', content: parts });
    } else if (m.role === 'assistant') {
      const said = assistantText(m);
      if (said !== '') out.push({ role: 'assistant', content: said });
      for (const c of m.content) {
        if (c.type === 'toolCall')
          out.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.arguments) });
      }
    } else {
      out.push({ type: 'function_call_output', call_id: m.toolCallId, output: resultText(m) });
      const imgs = images(m.content);
      if (imgs.length > 0)
        out.push({
          role: 'user',
          content: imgs.map((i) => ({ type: 'input_image' as const, image_url: dataUrl(i), detail: 'auto' as const })),
        });
    }
  }
  return out;
}

export function buildResponsesRequest(model: Model, context: Context, options: StreamOptions = {}): ResponsesParams {
  const params: ResponsesParams = {
    model: model.id,
    input: toResponsesInput(model, context),
    stream: true,
    store: false,
    max_output_tokens: outputBudget(model, options),
  };
  if (context.systemPrompt && context.systemPrompt.trim() !== '')
    params.instructions = sanitizeSurrogates(plainSystemPrompt(context.systemPrompt));
  if (options.temperature !== undefined) params.temperature = options.temperature;
  if (context.tools?.length) {
    params.tools = context.tools.map((t) => ({
      type: 'function' as const,
      name: t.name,
      description: t.description,
      parameters: { ...t.parameters, properties: t.parameters.properties ?? {} },
      strict: false,
    }));
    const choice = options.toolChoice;
    if (typeof choice === 'string') params.tool_choice = choice;
    else if (choice)
      params.tool_choice = usesStringToolChoice(model) ? 'required' : { type: 'function', name: choice.name };
  }
  return params;
}
