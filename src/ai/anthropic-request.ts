// Builds the Messages API request body from our Context (kernel-spec 2.6): message conversion,
// tool schemas, thinking configuration and prompt-cache breakpoints (at most 3 of the 4 the API
// allows: after the shared system part, at the previous request's tail, at this request's tail).
import type Anthropic from '@anthropic-ai/sdk';
import { aiDefaults, anthropicBetas } from './defaults.js';
import { defaultMaxTokens } from './models.js';
import { sanitizeSurrogates } from './sanitize.js';
import { plainSystemPrompt, splitSystemPrompt } from './system-prompt-parts.js';
import { normalizeAnthropicToolCallId, transformMessages } from './transform-messages.js';
import type {
  CacheRetention,
  Context,
  ImageContent,
  Message,
  Model,
  StreamOptions,
  TextContent,
  ToolResultMessage,
} from './types.js';

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
  if (retention === 'long' && effectiveBaseUrl(model).includes('api.anthropic.com'))
    return { type: 'ephemeral', ttl: '1h' };
  return { type: 'ephemeral' };
}

function imageBlock(img: ImageContent): Anthropic.ImageBlockParam {
  return { type: 'image', source: { type: 'base64', media_type: img.mimeType as ImageMediaType, data: img.data } };
}

function userContent(
  content: string | (TextContent | ImageContent)[],
  model: Model,
): BlockParam[] | string | undefined {
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

/** Where a source message's last block landed on the wire: turn and block index. */
interface BlockPlace {
  turn: number;
  block: number;
}

function blockCount(content: BlockParam[] | string): number {
  return typeof content === 'string' ? 1 : content.length;
}

/**
 * Converts transformed messages to Messages API params: consecutive tool results (and any user
 * text after them) become one user turn. `places[i]` is where message i's last block went.
 */
function convertWithPlaces(
  messages: readonly Message[],
  model: Model,
): { turns: MessageParam[]; places: (BlockPlace | undefined)[] } {
  const out: MessageParam[] = [];
  const places: (BlockPlace | undefined)[] = new Array<BlockPlace | undefined>(messages.length).fill(undefined);
  const placeLast = (i: number): void => {
    const turn = out.length - 1;
    places[i] = { turn, block: blockCount(out[turn]!.content as BlockParam[] | string) - 1 };
  };
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i]!;
    if (msg.role === 'user') {
      const content = userContent(msg.content, model);
      if (content === undefined) continue;
      pushTurn(out, 'user', content);
      placeLast(i);
    } else if (msg.role === 'assistant') {
      const content = assistantContent(msg);
      if (!content.length) continue;
      pushTurn(out, 'assistant', content);
      placeLast(i);
    } else {
      const results: Anthropic.ToolResultBlockParam[] = [toolResultBlock(msg, model)];
      while (messages[i + 1]?.role === 'toolResult') {
        i++;
        results.push(toolResultBlock(messages[i] as ToolResultMessage, model));
      }
      pushTurn(out, 'user', results);
      placeLast(i);
    }
  }
  return { turns: out, places };
}

/** Converts transformed messages to Messages API params: consecutive tool results (and any user text after them) become one user turn. */
export function convertMessages(messages: readonly Message[], model: Model): MessageParam[] {
  return convertWithPlaces(messages, model).turns;
}

/**
 * The messages whose last block gets a cache breakpoint: the last message when it is on the
 * user side (this request's tail: the next request reads up to here), and the tail of the
 * request before it: the last user-side message that an assistant reply follows (the previous
 * request ended there, so this one reads that cache entry exactly, however many blocks a turn
 * added; the API looks only 20 blocks back from a breakpoint). A summary request (the
 * conversation plus an instruction) thereby reads the conversation's last request.
 */
export function cacheBreakpointMessages(messages: readonly Message[]): number[] {
  const last = messages.length - 1;
  if (last < 0 || messages[last]!.role === 'assistant') return [];
  for (let i = last - 1; i >= 0; i--) {
    if (messages[i]!.role !== 'assistant' && messages[i + 1]!.role === 'assistant') return [i, last];
  }
  return [last];
}

/** Puts `cache` on the block at `place` when that block type can carry one. */
function markBlock(turns: MessageParam[], place: BlockPlace, cache: CacheControl): void {
  const turn = turns[place.turn];
  if (!turn) return;
  if (typeof turn.content === 'string') {
    turn.content = [{ type: 'text', text: turn.content, cache_control: cache }];
    return;
  }
  const block = turn.content[place.block];
  if (block && (block.type === 'text' || block.type === 'image' || block.type === 'tool_result'))
    block.cache_control = cache;
}

/**
 * The system blocks: the part every session of the agent shares, with the run-wide breakpoint
 * (tools come before it, so they are in that cached prefix too), then this session's part.
 */
function systemBlocks(prompt: string, cache: CacheControl | undefined): Anthropic.TextBlockParam[] {
  if (!cache) return [{ type: 'text', text: sanitizeSurrogates(plainSystemPrompt(prompt)) }];
  const { shared, session } = splitSystemPrompt(prompt);
  const blocks: Anthropic.TextBlockParam[] = [];
  if (shared.trim() !== '') blocks.push({ type: 'text', text: sanitizeSurrogates(shared), cache_control: cache });
  if (session.trim() !== '') blocks.push({ type: 'text', text: sanitizeSurrogates(session) });
  return blocks;
}

export interface AnthropicRequest {
  params: Params;
  /** Per-request headers (beta flags, model and caller headers). */
  headers: Record<string, string>;
}

/** The whole request: body and headers. */
export function buildAnthropicRequest(model: Model, context: Context, options: StreamOptions = {}): AnthropicRequest {
  const cache = cacheControlFor(options.cacheRetention ?? 'short', model);
  const transformed = transformMessages(context.messages, model, normalizeAnthropicToolCallId);
  const { turns: messages, places } = convertWithPlaces(transformed, model);
  if (cache) {
    for (const i of cacheBreakpointMessages(transformed)) {
      const place = places[i];
      if (place) markBlock(messages, place, cache);
    }
  }

  const adaptive = usesAdaptiveThinking(model.id);
  const thinkingOn = options.reasoning !== undefined && model.reasoning;
  let maxTokens = options.maxTokens ?? defaultMaxTokens(model);
  const params: Params = { model: model.id, max_tokens: maxTokens, messages, stream: true };

  if (context.systemPrompt && context.systemPrompt.trim() !== '')
    params.system = systemBlocks(context.systemPrompt, cache);
  if (thinkingOn && options.reasoning) {
    if (adaptive) {
      params.thinking = { type: 'adaptive' };
      const level = options.reasoning;
      const effort =
        level === 'minimal' || level === 'low'
          ? 'low'
          : level === 'medium'
            ? 'medium'
            : level === 'high'
              ? 'high'
              : model.id.includes('opus')
                ? 'max'
                : 'high';
      params.output_config = { effort };
    } else {
      let budget: number = aiDefaults.thinkingBudgets[options.reasoning];
      // A declared max_tokens is the whole reply's budget, thinking included.
      const limit = model.maxTokensDeclared ? defaultMaxTokens(model) : model.maxTokens;
      const base = options.maxTokens ?? Math.min(limit, aiDefaults.baseMaxTokensCap);
      maxTokens = Math.min(base + budget, limit);
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
      input_schema: {
        type: 'object',
        properties: t.parameters.properties ?? {},
        required: t.parameters.required ?? [],
      },
    }));
    // Only when asked: a tool_choice other than the conversation's invalidates its cached
    // messages (tools and system stay cached).
    const choice = options.toolChoice;
    if (choice === 'auto' || choice === 'none') params.tool_choice = { type: choice };
    else if (choice === 'required') params.tool_choice = { type: 'any' };
    else if (choice) params.tool_choice = { type: 'tool', name: choice.name };
  }

  const betas: string[] = [anthropicBetas.fineGrainedToolStreaming];
  if (!adaptive) betas.push(anthropicBetas.interleavedThinking);
  const headers: Record<string, string> = { ...model.headers, ...options.headers };
  headers['anthropic-beta'] = [headers['anthropic-beta'], ...betas].filter(Boolean).join(',');
  return { params, headers };
}
