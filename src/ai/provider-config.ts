// A named provider as a recipe or the SDK declares it ({type, base_url, api_key_env, api, compat,
// headers}) and the Model objects it serves. The key itself is never stored: only the name of the
// variable, read where the request is made (so a distributed worker uses its own key).
import { OPENAI_CHAT_API, OPENAI_DEFAULT_BASE_URL, OPENAI_RESPONSES_API } from './openai-compatible.js';
import { DECLARED_MODEL_DEFAULTS, getModel, modelFromSpec, type ModelSpec } from './models.js';
import type { Model, OpenAICompat } from './types.js';

export type ProviderType = 'anthropic' | 'openai-compatible';

export interface ProviderConfig {
  /** The name runs, prices and rate limits are kept under (e.g. "local", "openrouter"). */
  name: string;
  type: ProviderType;
  baseUrl?: string;
  /** Environment variable with the key (default ANTHROPIC_API_KEY / OPENAI_API_KEY; none for a local server). */
  apiKeyEnv?: string;
  /** OpenAI-compatible only: Chat Completions (default) or the Responses API. */
  api?: 'chat' | 'responses';
  compat?: OpenAICompat;
  headers?: Record<string, string>;
}

/** What an unknown model of an OpenAI-compatible server is assumed to have: a modest window, no price. */
export const UNDECLARED_OPENAI_MODEL: ModelSpec = {
  contextWindow: 128_000,
  maxTokens: 16_384,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
};

/**
 * The Model for `id` on a configured provider. `spec` (a recipe's `models:` entry) wins; an
 * Anthropic provider falls back to the model table, an OpenAI-compatible one to
 * UNDECLARED_OPENAI_MODEL (learned windows correct its window at the first overflow).
 */
export function modelForProvider(config: ProviderConfig, id: string, spec?: ModelSpec): Model {
  if (config.type === 'anthropic') {
    const known = spec ? undefined : getModel(id);
    const base = known ?? modelFromSpec(id, spec ?? { ...DECLARED_MODEL_DEFAULTS, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } });
    if (!known && !spec) throw new Error(`Unknown model "${id}" for provider ${config.name}: declare it under models: (context_window, max_output, prices).`);
    const model: Model = { ...base, provider: config.name };
    if (config.baseUrl) model.baseUrl = config.baseUrl;
    if (config.apiKeyEnv) model.apiKeyEnv = config.apiKeyEnv;
    if (config.headers) model.headers = { ...config.headers };
    return model;
  }
  const s = spec ?? UNDECLARED_OPENAI_MODEL;
  const model: Model = {
    id,
    name: id,
    api: config.api === 'responses' ? OPENAI_RESPONSES_API : OPENAI_CHAT_API,
    provider: config.name,
    baseUrl: config.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    reasoning: false,
    input: ['text', 'image'],
    cost: { ...s.cost },
    contextWindow: s.contextWindow,
    maxTokens: s.maxTokens,
  };
  if (config.apiKeyEnv) model.apiKeyEnv = config.apiKeyEnv;
  if (config.compat) model.compat = { ...config.compat };
  if (config.headers) model.headers = { ...config.headers };
  return model;
}
