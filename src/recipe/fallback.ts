// `fallback: [provider/model, ...]` on an agent or a provider: the models an agent's calls move to
// when its own stays overloaded or down (ai/fallback-stream.ts does the moving). Here: splitting an
// entry into provider and model, the checks that catch an unknown provider or model at its
// file:line:col, and the targets a LoadedAgent carries to its worker thread (with the endpoint and
// the declared limits and price of each, so budgets and prices follow the model actually used).
import { getModel, type ModelSpec } from '../ai/models.js';
import { BUILTIN_PROVIDERS, findProvider, type ProviderConfig } from '../ai/provider-config.js';
import type { PendingProblem } from './problems.js';
import { suggestionHint } from './suggest.js';
import { listModels } from '../ai/models.js';
import { isRecord } from '../util/unknown-value.js';

/** One fallback model as a worker thread builds it: like an agent's own model and provider. */
export interface FallbackTarget {
  provider: string;
  model: string;
  /** Its `models:` entry, when the recipe declares it. */
  modelSpec?: ModelSpec;
  /** The endpoint of a provider other than anthropic. */
  providerConfig?: ProviderConfig;
}

/** "openrouter/anthropic/claude-sonnet-4-5" -> openrouter + anthropic/claude-sonnet-4-5 (the provider is up to the first slash). */
export function splitFallbackEntry(entry: string): { provider: string; model: string } | undefined {
  const at = entry.indexOf('/');
  if (at <= 0 || at === entry.length - 1) return undefined;
  return { provider: entry.slice(0, at).trim(), model: entry.slice(at + 1).trim() };
}

type Obj = Record<string, unknown>;

/**
 * Problems of every `fallback:` list (agents.X.fallback, providers.X.fallback): each entry must be
 * provider/model, the provider built in, a preset or declared (not scripted: a script is no
 * stand-in for a model), and a model of the anthropic type known or declared under `models:`.
 * An OpenAI-compatible server's models are taken as given, as for an agent's own model.
 */
export function checkFallbacks(raw: Obj, declaredModel: (id: string) => boolean): PendingProblem[] {
  const problems: PendingProblem[] = [];
  const providers = isRecord(raw.providers) ? raw.providers : {};
  const declared = Object.keys(providers);
  const checkList = (list: unknown, path: (string | number)[]): void => {
    if (!Array.isArray(list)) return; // the schema reports a wrong shape
    list.forEach((entry, i) => {
      if (typeof entry !== 'string') return;
      const at = [...path, i];
      const parts = splitFallbackEntry(entry);
      if (!parts) {
        problems.push({
          code: 'unknown_model',
          path: at,
          message: `fallback entry "${entry}" is not provider/model`,
          hint: 'write the provider, a slash and the model, e.g. anthropic/claude-haiku-4-5 or openrouter/openai/gpt-5-mini',
        });
        return;
      }
      const known = ['anthropic', ...BUILTIN_PROVIDERS.map((b) => b.name), ...declared];
      const decl = providers[parts.provider];
      const type = isRecord(decl) ? decl.type : parts.provider === 'anthropic' ? 'anthropic' : undefined;
      if (parts.provider !== 'anthropic' && !declared.includes(parts.provider) && !findProvider(parts.provider)) {
        problems.push({
          code: 'unknown_provider',
          path: at,
          message: `fallback entry "${entry}" names unknown provider "${parts.provider}"`,
          hint:
            parts.provider === 'scripted'
              ? 'the scripted provider cannot be a fallback; name a real provider'
              : `${suggestionHint(parts.provider, known, 'providers')}, or declare it under providers: {${parts.provider}: {type: openai-compatible, base_url: ...}}`,
        });
        return;
      }
      if (type === 'anthropic' && !declaredModel(parts.model) && !getModel(parts.model.replace(/^anthropic\//, ''))) {
        problems.push({
          code: 'unknown_model',
          path: at,
          message: `fallback entry "${entry}" names unknown model "${parts.model}"`,
          hint: `${suggestionHint(
            parts.model,
            listModels().map((m) => m.id),
            'models',
          )} (or declare it under models: with its price)`,
        });
      }
    });
  };
  if (isRecord(raw.agents))
    for (const [name, a] of Object.entries(raw.agents))
      if (isRecord(a)) checkList(a.fallback, ['agents', name, 'fallback']);
  for (const [name, p] of Object.entries(providers))
    if (isRecord(p)) checkList(p.fallback, ['providers', name, 'fallback']);
  return problems;
}

/**
 * The fallback targets of an agent: its own `fallback:`, else its provider's. `configs` are the
 * recipe's providers (and presets through findProvider); `spec` finds a declared model.
 */
export function fallbackTargets(
  entries: readonly string[] | undefined,
  configs: readonly ProviderConfig[],
  spec: (model: string) => ModelSpec | undefined,
): FallbackTarget[] {
  const out: FallbackTarget[] = [];
  for (const entry of entries ?? []) {
    const parts = splitFallbackEntry(entry);
    if (!parts) continue; // reported by checkFallbacks
    const target: FallbackTarget = { provider: parts.provider, model: parts.model };
    const s = spec(parts.model);
    if (s) target.modelSpec = s;
    const endpoint = parts.provider === 'anthropic' ? undefined : findProvider(parts.provider, configs);
    if (endpoint) target.providerConfig = endpoint;
    out.push(target);
  }
  return out;
}
