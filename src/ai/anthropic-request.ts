// Builds the Messages API request body from our Context (kernel-spec 2.6): message conversion,
// tool schemas, thinking configuration and prompt-cache breakpoints.
import type Anthropic from '@anthropic-ai/sdk';
import { aiDefaults, anthropicBetas } from './defaults.js';
import { sanitizeSurrogates } from './sanitize.js';
import { normalizeAnthropicToolCallId, transformMessages } from './transform-messages.js';
import type { CacheRetention, Context, ImageContent, Message, Model, StreamOptions, TextContent, ToolResultMessage } from './types.js';

// temperature is missing from this SDK's param types but the API takes it; sent only when asked.
type Params = Anthropic.MessageCreateParamsStreaming & { temperature?: number };
type MessageParam = Anthropic.MessageParam;
type BlockParam = Anthropic.ContentBlockParam;
type CacheControl = Anthropic.CacheControlEphemeral;
type ImageMediaType = Anthropic.Base64ImageSource['media_type'];

export const IMAGE_ONLY_RESULT_TEXT = '(see attached image)';
const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** The URL requests go to: model.baseUrl, then ANTHROPIC_BASE_URL, then the public API. */
export function effectiveBaseUrl(model: Pick<Model, 'baseUrl'>): string {
  return model.baseUrl || process.env.ANTHROPIC_BASE_URL || DEFAULT_BASE_URL;
}

/** Models with adaptive thinking take an effort level instead of a token budget. */
export function usesAdaptiveThinking(modelId: string): boolean {
  return /(opus|sonnet)-4[.-]6/.test(modelId);
}

function cacheControlFor(retention: CacheRetention, model: Model): CacheControl | undefined {
  if (retention === 'none') return undefined;
  // The 1h TTL is an api.anthropic.com feature; proxies may reject the field.
  if (retention === 'long' && effectiveBaseUrl(model).includes('api.anthropic.com')) return { type: 'ephemeral', ttl: '1h' };
  return { type: 'ephemeral' };
}

function imageBlock(img: ImageContent): Anthropic.ImageBlockParam {
  return { type: 'image', source: { type: 'base64', media_type: img.mimeType as ImageMediaType, data: img.data } };
}

function userContent(content: string | (TextContent | ImageContent)[], model: Model): BlockParam[] | string | undefined {
  if (typeof content === 'string') return content.trim() === '' ? undefined : sanitizeSurrogates(content);
  const blocks: BlockParam[] = [];
  for (const b of content) {
    if (b.type === 'text') {
      if (b.text.trim() !== '') blocks.push({ type: 'text', text: sanitizeSurrogates(b.text) });
    } else if (model.input.includes('image')) blocks.push(imageBlock(b));
  }
  return blocks.length ? blocks : undefined;
}

function toolResultBlock(msg: ToolResultMessage, model: Model): Anthropic.ToolResultBlockParam {
  const texts = msg.content.filter((c): c is TextContent => c.type === 'text').map((c) => sanitizeSurrogates(c.text));
  const images = model.input.includes('image') ? msg.content.filter((c): c is ImageContent => c.type === 'image') : [];
  let content: Anthropic.ToolResultBlockParam['content'];
  if (images.length === 0) content = texts.join('\n');
  else {
    const parts: (Anthropic.TextBlockParam | Anthropic.ImageBlockParam)[] = texts
      .filter((t) => t.trim() !== '')
      .map((text) => ({ type: 'text' as const, text }));
    if (parts.length === 0) parts.push({ type: 'text', text: IMAGE_ONLY_RESULT_TEXT });
    for (const img of images) parts.push(imageBlock(img));
    content = parts;
  }
  return { type: 'tool_result', tool_use_id: msg.toolCallId, content, is_error: msg.isError };
}

function assistantContent(msg: Extract<Message, { role: 'assistant' }>): BlockParam[] {
  const blocks: BlockParam[] = [];
  for (const b of msg.content) {
    if (b.type === 'text') {
      if (b.text.trim() !== '') blocks.push({ type: 'text', text: sanitizeSurrogates(b.text) });
    } else if (b.type === 'thinking') {
      if (b.redacted) {
        if (b.thinkingSignature) blocks.push({ type: 'redacted_thinking', data: b.thinkingSignature });
      } else if (b.thinking.trim() === '' && !b.thinkingSignature) {
        continue;
      } else if (!b.thinkingSignature) {
        // Unsigned thinking (e.g. from an aborted stream) cannot be replayed as thinking.
        blocks.push({ type: 'text', text: sanitizeSurrogates(b.thinking) });
      } else {
        blocks.push({ type: 'thinking', thinking: sanitizeSurrogates(b.thinking), signature: b.thinkingSignature });
      }
    } else {
      blocks.push({ type: 'tool_use', id: b.id, name: b.name, input: b.arguments });
    }
  }
  return blocks;
}

/**
 * Appends one turn, merged into the previous one when it has the same role: roles must alternate
 * (strict endpoints reject two user turns in a row with a 400). Tool results followed by a note,
 * a prompt after a dropped failed reply, a summary before kept messages: one user turn, in order
 * (tool results come first, as the API requires, since they always open their turn).
 */
function pushTurn(out: MessageParam[], role: 'user' | 'assistant', content: BlockParam[] | string): void {
  const prev = out[out.length - 1];
  if (prev?.role !== role) {
    out.push({ role, content });
    return;
  }
  const blocks = (c: BlockParam[] | string): BlockParam[] => (typeof c === 'string' ? [{ type: 'text', text: c }] : c);
  prev.content = [...blocks(prev.content as BlockParam[] | string), ...blocks(content)];
}

/** Converts transformed messages to Messages API params: consecutive tool results (and any user text after them) become one user turn. */
export function convertMessages(messages: readonly Message[], model: Model): MessageParam[] {
  const out: MessageParam[] = [];
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i]!;
    if (msg.role === 'user') {
      const content = userContent(msg.content, model);
      if (content !== undefined) pushTurn(out, 'user', content);
    } else if (msg.role === 'assistant') {
      const content = assistantContent(msg);
      if (content.length) pushTurn(out, 'assistant', content);
    } else {
      const results: Anthropic.ToolResultBlockParam[] = [toolResultBlock(msg, model)];
      while (messages[i + 1]?.role === 'toolResult') {
        i++;
        results.push(toolResultBlock(messages[i] as ToolResultMessage, model));
      }
      pushTurn(out, 'user', results);
    }
  }
  return out;
}

/** Breakpoint on the last block of the last message when it is a user (or tool-result) message. */
function markLastUserBlock(messages: MessageParam[], cache: CacheControl): void {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return;
  if (typeof last.content === 'string') {
    last.content = [{ type: 'text', text: last.content, cache_control: cache }];
    return;
  }
  const block = last.content[last.content.length - 1];
  if (block && (block.type === 'text' || block.type === 'image' || block.type === 'tool_result')) block.cache_control = cache;
}

export interface AnthropicRequest {
  params: Params;
  /** Per-request headers (beta flags, model and caller headers). */
  headers: Record<string, string>;
}

/** The whole request: body and headers. */
export function buildAnthropicRequest(model: Model, context: Context, options: StreamOptions = {}): AnthropicRequest {
  const cache = cacheControlFor(options.cacheRetention ?? 'short', model);
  const messages = convertMessages(transformMessages(context.messages, model, normalizeAnthropicToolCallId), model);
  if (cache) markLastUserBlock(messages, cache);

  const adaptive = usesAdaptiveThinking(model.id);
  const thinkingOn = options.reasoning !== undefined && model.reasoning;
  let maxTokens = options.maxTokens ?? Math.floor(model.maxTokens / aiDefaults.maxTokensDivisor);
  const params: Params = { model: model.id, max_tokens: maxTokens, messages, stream: true };

  if (context.systemPrompt && context.systemPrompt.trim() !== '') {
    params.system = [{ type: 'text', text: sanitizeSurrogates(context.systemPrompt), ...(cache ? { cache_control: cache } : {}) }];
  }
  if (thinkingOn && options.reasoning) {
    if (adaptive) {
      params.thinking = { type: 'adaptive' };
      const level = options.reasoning;
      const effort = level === 'minimal' || level === 'low' ? 'low' : level === 'medium' ? 'medium' : level === 'high' ? 'high' : model.id.includes('opus') ? 'max' : 'high';
      params.output_config = { effort };
    } else {
      let budget: number = aiDefaults.thinkingBudgets[options.reasoning];
      const base = options.maxTokens ?? Math.min(model.maxTokens, aiDefaults.baseMaxTokensCap);
      maxTokens = Math.min(base + budget, model.maxTokens);
      if (maxTokens <= budget) budget = Math.max(0, maxTokens - aiDefaults.minThinkingBudget);
      params.max_tokens = maxTokens;
      if (budget >= aiDefaults.minThinkingBudget) params.thinking = { type: 'enabled', budget_tokens: budget };
    }
  } else if (options.temperature !== undefined) {
    params.temperature = options.temperature;
  }
  if (context.tools?.length) {
    params.tools = context.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { type: 'object', properties: t.parameters.properties ?? {}, required: t.parameters.required ?? [] },
    }));
  }

  const betas: string[] = [anthropicBetas.fineGrainedToolStreaming];
  if (!adaptive) betas.push(anthropicBetas.interleavedThinking);
  const headers: Record<string, string> = { ...model.headers, ...options.headers };
  headers['anthropic-beta'] = [headers['anthropic-beta'], ...betas].filter(Boolean).join(',');
  return { params, headers };
}
