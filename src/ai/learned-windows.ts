// Context windows learned from the server. A gateway, a proxy or a local server often serves a
// model with a smaller window than the model table (or a recipe's models:) says; its overflow
// error states the real one ("60425 tokens > 55000 maximum"). Once seen, that figure is the
// model's window for every later session of this process (per provider, endpoint and model), so
// compaction thresholds and kept tails are sized for what the server accepts. A run shares them
// across its threads: onWindowLearned tells the orchestrator's worker what this thread learned, and
// rememberContextWindow takes in what another thread learned (without telling anyone again).
import { overflowLimitFromError } from './overflow.js';
import type { Model } from './types.js';

const learned = new Map<string, number>();
const listeners = new Set<(w: LearnedWindow) => void>();

/** One learned window: the model (by provider, endpoint and id) and the window its server stated. */
export interface LearnedWindow {
  provider: string;
  baseUrl?: string;
  model: string;
  window: number;
}

function keyOf(model: Pick<Model, 'provider' | 'id' | 'baseUrl'>): string {
  return `${model.provider}\n${model.baseUrl ?? ''}\n${model.id}`;
}

/** The key a learned window is kept under (one per provider, endpoint and model). */
export function learnedWindowKey(w: Pick<LearnedWindow, 'provider' | 'baseUrl' | 'model'>): string {
  return keyOf({ provider: w.provider, baseUrl: w.baseUrl, id: w.model });
}

/** Whether `w` is about this model (same provider, endpoint and id). */
export function windowIsFor(w: LearnedWindow, model: Pick<Model, 'provider' | 'id' | 'baseUrl'>): boolean {
  return learnedWindowKey(w) === keyOf(model);
}

/** Hears every window this process learns from a server (not those remembered from elsewhere). */
export function onWindowLearned(listener: (w: LearnedWindow) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Takes in a window learned elsewhere (another thread of the run, or the run's log on resume); true when it is new or smaller. */
export function rememberContextWindow(w: LearnedWindow): boolean {
  const key = learnedWindowKey(w);
  const known = learned.get(key);
  if (known !== undefined && known <= w.window) return false;
  learned.set(key, w.window);
  return true;
}

/** The window learned for this model, if any. */
export function learnedContextWindow(model: Pick<Model, 'provider' | 'id' | 'baseUrl'>): number | undefined {
  return learned.get(keyOf(model));
}

/** The model with its learned window applied (the same object when nothing smaller was learned). */
export function withLearnedWindow(model: Model): Model {
  const window = learnedContextWindow(model);
  return window !== undefined && window < model.contextWindow ? { ...model, contextWindow: window } : model;
}

/**
 * Records the window an overflow error states (when at least `minWindow`). Returns the new window when it is smaller than
 * the model's current one (the caller then switches to it), else undefined.
 */
export function learnContextWindow(model: Model, errorMessage: string | undefined, minWindow = 0): number | undefined {
  const limit = overflowLimitFromError(errorMessage);
  // A window too small to work in is not recorded: later sessions would only thrash in it.
  if (limit === undefined || limit < minWindow) return undefined;
  const key = keyOf(model);
  const known = learned.get(key);
  if (known === undefined || limit < known) {
    learned.set(key, limit);
    const w: LearnedWindow = { provider: model.provider, model: model.id, window: limit };
    if (model.baseUrl !== undefined) w.baseUrl = model.baseUrl;
    for (const listener of listeners) listener(w);
  }
  return limit < model.contextWindow ? limit : undefined;
}

/** Forgets every learned window (tests; a server restarted with a larger window). */
export function forgetLearnedWindows(): void {
  learned.clear();
}
