// A named provider as a recipe or the SDK declares it ({type, base_url, api_key_env, api, compat,
// headers}) and the Model objects it serves. The key itself is never stored: only the name of the
// variable, read where the request is made (so a distributed worker uses its own key).
import { OPENAI_CHAT_API, OPENAI_DEFAULT_BASE_URL, OPENAI_RESPONSES_API } from './openai-compatible.js';
import { DECLARED_MODEL_DEFAULTS, getModel, modelFromSpec, specLimits, type ModelSpec } from './models.js';
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
  /**
   * A server on this machine or network that costs nothing per token: its models the recipe does
   * not price are priced 0. Unset: local when base_url points at a loopback address.
   */
  local?: boolean;
}

/**
 * Providers known by name without any configuration (a recipe's `providers:` may redefine them):
 * `--provider ollama --model qwen2.5-coder:32b` works on a machine running Ollama.
 */
export const BUILTIN_PROVIDERS: readonly ProviderConfig[] = [
  { name: 'openai', type: 'openai-compatible', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  {
    name: 'openrouter',
    type: 'openai-compatible',
    baseUrl: 'https://openrouter.ai/api/v1',
    apiKeyEnv: 'OPENROUTER_API_KEY',
  },
  { name: 'ollama', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1', local: true },
  { name: 'lmstudio', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:1234/v1', local: true },
  { name: 'vllm', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:8000/v1', local: true },
  { name: 'llamacpp', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:8080/v1', local: true },
];

/** The provider of this name: a configured one first, else a built-in preset. */
export function findProvider(name: string, configured: readonly ProviderConfig[] = []): ProviderConfig | undefined {
  return configured.find((p) => p.name === name) ?? BUILTIN_PROVIDERS.find((p) => p.name === name);
}

/**
 * The price assumed for a model nobody priced on a provider that charges (a remote gateway): a
 * mid-range price, so budgets still hold; the dry run says it was assumed.
 */
export const FALLBACK_PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } as const;

const FREE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } as const;

/** What an unknown model of an OpenAI-compatible server is assumed to have: a modest window, no price (a local server). */
export const UNDECLARED_OPENAI_MODEL: ModelSpec = {
  contextWindow: 128_000,
  maxTokens: 16_384,
  cost: { ...FREE },
};

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1', '0.0.0.0']);

/**
 * Whether a provider runs locally and is free per token: marked `local`, one of the local presets
 * (ollama, lmstudio, vllm, llamacpp), or (unmarked) an endpoint on a loopback address.
 */
export function isLocalProvider(config: ProviderConfig): boolean {
  if (config.local !== undefined) return config.local;
  if (!config.baseUrl) return false;
  try {
    const host = new URL(config.baseUrl).hostname.toLowerCase();
    return LOOPBACK_HOSTS.has(host) || host.startsWith('127.') || host.endsWith('.localhost');
  } catch {
    return false;
  }
}

/** The limits and price of a model an OpenAI-compatible provider serves that nobody declared: free when local. */
export function undeclaredModelSpec(config: ProviderConfig): ModelSpec {
  return { ...UNDECLARED_OPENAI_MODEL, cost: isLocalProvider(config) ? { ...FREE } : { ...FALLBACK_PRICE } };
}

/**
 * The Model for `id` on a configured provider. `spec` (a recipe's `models:` entry) wins; an
 * Anthropic provider falls back to the model table, an OpenAI-compatible one to
 * undeclaredModelSpec (free when local, else FALLBACK_PRICE; learned windows correct its window
 * at the first overflow).
 */
export function modelForProvider(config: ProviderConfig, id: string, spec?: ModelSpec): Model {
  if (config.type === 'anthropic') {
    const known = spec ? undefined : getModel(id);
    const base =
      known ??
      modelFromSpec(
        id,
        spec ?? { ...DECLARED_MODEL_DEFAULTS, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
      );
    if (!known && !spec)
      throw new Error(
        `Unknown model "${id}" for provider ${config.name}: declare it under models: (context_window, max_output, prices).`,
      );
    const model: Model = { ...base, provider: config.name };
    if (config.baseUrl) model.baseUrl = config.baseUrl;
    if (config.apiKeyEnv) model.apiKeyEnv = config.apiKeyEnv;
    if (config.headers) model.headers = { ...config.headers };
    return model;
  }
  const s = spec ?? undeclaredModelSpec(config);
  const model: Model = {
    id,
    name: id,
    api: config.api === 'responses' ? OPENAI_RESPONSES_API : OPENAI_CHAT_API,
    provider: config.name,
    baseUrl: config.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    reasoning: false,
    input: ['text', 'image'],
    ...specLimits(s),
  };
  if (config.apiKeyEnv) model.apiKeyEnv = config.apiKeyEnv;
  if (config.compat) model.compat = { ...config.compat };
  if (config.headers) model.headers = { ...config.headers };
  return model;
}
