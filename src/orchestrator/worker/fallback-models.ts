// The thread's end of recipe `fallback:`: the models an agent's calls may move to, built the way
// its own model is (a declared provider's endpoint, or the Anthropic table with the run's key and
// base URL), and the message that tells the coordinator where a call went (run event call_fallback).
import { modelLabel, type CallRoute, type FallbackEntry } from '../../ai/fallback-stream.js';
import { modelFromSpec, resolveModel } from '../../ai/models.js';
import { modelForProvider } from '../../ai/provider-config.js';
import type { FallbackTarget } from '../../recipe/fallback.js';
import type { InstanceTask } from '../execution/instance-task.js';
import type { WorkerMessage } from '../protocol.js';

/**
 * A fallback target as a model to call. A declared provider's key is read from this machine's
 * environment (its api_key_env), never the coordinator's Anthropic key; an anthropic entry gets
 * that key and the run's ANTHROPIC_BASE_URL, as the agent's own anthropic model does.
 */
export function fallbackEntry(f: FallbackTarget, task: InstanceTask): FallbackEntry {
  if (f.providerConfig) return { model: modelForProvider(f.providerConfig, f.model, f.modelSpec) };
  const resolved = f.modelSpec
    ? modelFromSpec(f.model.replace(/^anthropic\//, ''), f.modelSpec)
    : resolveModel(f.model, 'anthropic');
  return {
    model: task.baseUrl ? { ...resolved, baseUrl: task.baseUrl } : resolved,
    ...(task.apiKey !== undefined ? { apiKey: task.apiKey } : {}),
  };
}

/** Where a call went, as the message the coordinator logs. */
export function routeMessage(r: CallRoute): WorkerMessage {
  return {
    type: 'call_fallback',
    primary: modelLabel(r.primary),
    served: modelLabel(r.served),
    reason: r.reason,
    ...(r.kind !== undefined ? { kind: r.kind } : {}),
    ...(r.status !== undefined ? { status: r.status } : {}),
    ...(r.failed ? { failed: true } : {}),
  };
}
