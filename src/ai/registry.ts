// Provider registry: a provider is a stream function registered under the `api` it serves.
// `stream` dispatches on model.api, so callers never import a provider directly.
import { AssistantMessageEventStream, errorAssistantMessage } from './event-stream.js';
import type { AssistantMessage, Context, Model, StreamFunction, StreamOptions } from './types.js';

const providers = new Map<string, StreamFunction>();

export function registerProvider(api: string, fn: StreamFunction): void {
  providers.set(api, fn);
}

export function unregisterProvider(api: string): void {
  providers.delete(api);
}

export function getProvider(api: string): StreamFunction | undefined {
  return providers.get(api);
}

export function registeredApis(): string[] {
  return [...providers.keys()];
}

/**
 * Streams a reply from whichever provider serves `model.api`. Never throws: an unknown api or a
 * provider that throws synchronously becomes a stream holding one error event.
 */
export function stream(model: Model, context: Context, options?: StreamOptions): AssistantMessageEventStream {
  const fn = providers.get(model.api);
  if (!fn) {
    return failedStream(
      model,
      `No provider is registered for api "${model.api}" (model ${model.id}). Registered: ${registeredApis().join(', ') || 'none'}.`,
    );
  }
  try {
    return fn(model, context, options);
  } catch (err) {
    return failedStream(
      model,
      err instanceof Error ? err.message : String(err),
      options?.signal?.aborted ? 'aborted' : 'error',
    );
  }
}

/** Awaits the whole reply. */
export function complete(model: Model, context: Context, options?: StreamOptions): Promise<AssistantMessage> {
  return stream(model, context, options).result();
}

export function failedStream(
  model: Pick<Model, 'api' | 'provider' | 'id'>,
  message: string,
  reason: 'error' | 'aborted' = 'error',
): AssistantMessageEventStream {
  const s = new AssistantMessageEventStream(model);
  s.push({ type: 'error', reason, error: errorAssistantMessage(model, message, reason) });
  return s;
}
