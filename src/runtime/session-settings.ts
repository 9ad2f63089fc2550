// Model and reasoning-effort changes of an AgentSession: applied to the agent from its next call
// on, recorded in the session file, and announced (model_change / thinking_level_change).
import type { Agent } from '../agent/agent.js';
import type { AgentThinkingLevel } from '../agent/types.js';
import type { Model } from '../ai/types.js';
import type { SessionStore } from '../session/session-store.js';
import type { AgentSessionEvent } from './session-events.js';

export interface SettingsContext {
  agent: Agent;
  store: SessionStore;
  emit: (event: AgentSessionEvent) => void;
  /** Resolves a model id for a provider (AgentSessionConfig.resolveModel). */
  resolveModel?: (id: string, provider: string) => Model;
}

/** Switches the model (an id is resolved for `provider`, default the current one); returns it. */
export function changeModel(c: SettingsContext, model: Model | string, provider?: string): Model {
  const current = c.agent.state.model;
  let next: Model;
  if (typeof model === 'string') {
    if (!c.resolveModel) throw new Error('This session cannot resolve model ids; pass a Model object.');
    next = c.resolveModel(model, provider ?? current.provider);
  } else next = model;
  const previous = { provider: current.provider, modelId: current.id };
  c.agent.setModel(next);
  c.store.appendModelChange(next.provider, next.id);
  c.emit({ type: 'model_change', provider: next.provider, modelId: next.id, previous });
  return next;
}

/** Sets the reasoning effort ("off" for models without reasoning); recorded when it changes. */
export function changeThinkingLevel(c: SettingsContext, level: AgentThinkingLevel): AgentThinkingLevel {
  const effective = c.agent.state.model.reasoning ? level : 'off';
  if (effective !== c.agent.state.thinkingLevel) {
    c.agent.setThinkingLevel(effective);
    c.store.appendThinkingLevelChange(effective);
    c.emit({ type: 'thinking_level_change', thinkingLevel: effective });
  }
  return effective;
}
