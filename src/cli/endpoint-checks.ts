// `orchestrate doctor --recipe FILE [--probe]`: each model endpoint the recipe's agents use is
// reachable, lists the model (GET /models), and with --probe answers a one-token request through
// the real provider. Only endpoints of declared providers or presets (anthropic is checked by its
// key elsewhere). Keys are read from this machine's environment and never printed.
import { complete } from '../ai/registry.js';
import { openAIKeyFor } from '../ai/openai-compatible.js';
import { modelForProvider, type ProviderConfig } from '../ai/provider-config.js';
import { registerBuiltInProviders } from '../ai/providers.js';
import type { Model } from '../ai/types.js';
import type { LoadedRecipe } from '../recipe/loaded-recipe.js';

export interface EndpointCheck {
  name: string;
  ok: boolean;
  essential: boolean;
  message: string;
}

/** The distinct (provider, model) pairs of a recipe's agents on an OpenAI-compatible endpoint. */
function endpointsOf(recipe: LoadedRecipe): { config: ProviderConfig; model: Model }[] {
  const seen = new Map<string, { config: ProviderConfig; model: Model }>();
  for (const a of Object.values(recipe.agents)) {
    if (a.providerConfig?.type !== 'openai-compatible') continue;
    const key = `${a.providerConfig.name}\n${a.model}`;
    if (!seen.has(key))
      seen.set(key, { config: a.providerConfig, model: modelForProvider(a.providerConfig, a.model, a.modelSpec) });
  }
  return [...seen.values()];
}

async function listedModels(model: Model, key: string, timeoutMs: number): Promise<string[]> {
  const res = await fetch(`${model.baseUrl!.replace(/\/+$/, '')}/models`, {
    headers: { authorization: `Bearer ${key}`, ...model.headers },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`GET /models answered ${res.status}`);
  const body = (await res.json()) as { data?: { id?: unknown }[] };
  return (body.data ?? []).map((m) => String(m.id));
}

export async function endpointChecks(recipe: LoadedRecipe, probe: boolean, timeoutMs = 5000): Promise<EndpointCheck[]> {
  const checks: EndpointCheck[] = [];
  for (const { config, model } of endpointsOf(recipe)) {
    const name = `provider ${config.name}`;
    const where = `${config.name} (${model.baseUrl})`;
    const key = openAIKeyFor(model, {});
    if (!key.key) {
      checks.push({ name, ok: false, essential: false, message: key.missing! });
      continue;
    }
    try {
      const ids = await listedModels(model, key.key, timeoutMs);
      const listed = ids.includes(model.id);
      checks.push({
        name,
        ok: listed,
        essential: false,
        message: listed
          ? `${where} is reachable and serves ${model.id}`
          : `${where} is reachable but does not list ${model.id} (it lists: ${ids.slice(0, 8).join(', ') || 'nothing'}); pull or load the model, or fix model:`,
      });
    } catch (err) {
      checks.push({
        name,
        ok: false,
        essential: false,
        message: `${where} is not reachable: ${err instanceof Error ? err.message : String(err)}; start the server or fix base_url`,
      });
      continue;
    }
    if (probe) {
      registerBuiltInProviders();
      const reply = await complete(
        model,
        { messages: [{ role: 'user', content: 'Reply with OK.', timestamp: Date.now() }] },
        { maxTokens: 1, maxRetries: 0, streamIdleTimeoutMs: timeoutMs * 4 },
      );
      const ok = reply.stopReason !== 'error' && reply.stopReason !== 'aborted';
      checks.push({
        name: `${name} probe`,
        ok,
        essential: false,
        message: ok
          ? `${where} answered a one-token request with ${model.id}`
          : `${where} failed a one-token request with ${model.id}: ${reply.errorMessage}`,
      });
    }
  }
  return checks;
}
