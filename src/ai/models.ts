// The model table: ids, limits and prices ($ per million tokens) of current Claude models, plus
// the scripted model used offline. Cache write is the 5-minute rate (1.25 x input), cache read 0.1 x.
import { aiDefaults } from './defaults.js';
import type { Model, ModelCost } from './types.js';

export const ANTHROPIC_API = 'anthropic-messages';
export const SCRIPTED_API = 'scripted';
/** The model used when neither a recipe, a flag nor ORCHESTRATE_MODEL names one. */
export const DEFAULT_MODEL_ID = 'claude-sonnet-4-5';

/** Limits and prices of a model (the table's, or a recipe's `models:` for one it does not have). */
export interface ModelSpec {
  contextWindow: number;
  maxTokens: number;
  /** maxTokens was written by the user (a recipe's `models: {id: {max_tokens}}`): requests ask for exactly it. */
  maxTokensDeclared?: boolean;
  /** $ per million tokens. */
  cost: ModelCost;
}

interface Entry extends ModelSpec {
  id: string;
  name: string;
  aliases: string[];
}

/** Used for what a model declaration leaves out: the limits every current Claude model has at least. */
export const DECLARED_MODEL_DEFAULTS = { contextWindow: 200_000, maxTokens: 32_000 } as const;

/** The price with cache rates derived the way Anthropic prices them (read 0.1x, 5-minute write 1.25x input). */
export function priceOf(input: number, output: number): ModelCost {
  return { input, output, cacheRead: input / 10, cacheWrite: input * 1.25 };
}

const ENTRIES: Entry[] = [
  {
    id: 'claude-opus-4-6',
    name: 'Claude Opus 4.6',
    aliases: ['opus'],
    cost: priceOf(5, 25),
    contextWindow: 200_000,
    maxTokens: 128_000,
  },
  {
    id: 'claude-sonnet-4-6',
    name: 'Claude Sonnet 4.6',
    aliases: ['sonnet'],
    cost: priceOf(3, 15),
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  {
    id: 'claude-opus-4-5',
    name: 'Claude Opus 4.5',
    aliases: ['claude-opus-4-5-20251101'],
    cost: priceOf(5, 25),
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  {
    id: 'claude-sonnet-4-5',
    name: 'Claude Sonnet 4.5',
    aliases: ['claude-sonnet-4-5-20250929'],
    cost: priceOf(3, 15),
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  {
    id: 'claude-haiku-4-5',
    name: 'Claude Haiku 4.5',
    aliases: ['haiku', 'claude-haiku-4-5-20251001'],
    cost: priceOf(1, 5),
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  {
    id: 'claude-opus-4-1',
    name: 'Claude Opus 4.1',
    aliases: ['claude-opus-4-1-20250805'],
    cost: priceOf(15, 75),
    contextWindow: 200_000,
    maxTokens: 32_000,
  },
  {
    id: 'claude-opus-4-0',
    name: 'Claude Opus 4',
    aliases: ['claude-opus-4', 'claude-opus-4-20250514'],
    cost: priceOf(15, 75),
    contextWindow: 200_000,
    maxTokens: 32_000,
  },
  {
    id: 'claude-sonnet-4-0',
    name: 'Claude Sonnet 4',
    aliases: ['claude-sonnet-4', 'claude-sonnet-4-20250514'],
    cost: priceOf(3, 15),
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
];

/** A model's limits and prices as its spec states them (the prices copied: a table entry is never shared). */
export function specLimits(spec: ModelSpec): Pick<Model, 'cost' | 'contextWindow' | 'maxTokens' | 'maxTokensDeclared'> {
  return {
    cost: { ...spec.cost },
    contextWindow: spec.contextWindow,
    maxTokens: spec.maxTokens,
    ...(spec.maxTokensDeclared ? { maxTokensDeclared: true } : {}),
  };
}

function anthropicModel(id: string, name: string, spec: ModelSpec): Model {
  return {
    id,
    name,
    api: ANTHROPIC_API,
    provider: 'anthropic',
    reasoning: true,
    input: ['text', 'image'],
    ...specLimits(spec),
  };
}

/**
 * The output budget a request asks for when the caller names none: a declared max_tokens as it
 * is (capped by the context window), else a third of the model's output limit (kernel-spec 2.6:
 * the table's limits are the most a model can write, far more than one turn needs, and a smaller
 * ask keeps rate-limit reservations of output tokens low).
 */
export function defaultMaxTokens(model: Pick<Model, 'maxTokens' | 'maxTokensDeclared' | 'contextWindow'>): number {
  if (model.maxTokensDeclared) return Math.max(1, Math.min(model.maxTokens, model.contextWindow));
  return Math.max(1, Math.floor(model.maxTokens / aiDefaults.maxTokensDivisor));
}

const toModel = (e: Entry): Model => anthropicModel(e.id, e.name, e);

const byName = new Map<string, Entry>();
for (const e of ENTRIES) {
  byName.set(e.id, e);
  for (const a of e.aliases) byName.set(a, e);
}

/** A fresh copy of the model with this id or alias (case-insensitive), or undefined. */
export function getModel(idOrAlias: string): Model | undefined {
  const e = byName.get(idOrAlias.trim().toLowerCase());
  return e ? toModel(e) : undefined;
}

/** Every model in the table (fresh copies, newest first). */
export function listModels(): Model[] {
  return ENTRIES.map(toModel);
}

/** Ids and aliases, for help texts and error messages. */
export function knownModelNames(): string[] {
  return ENTRIES.map((e) => (e.aliases.length ? `${e.id} (${e.aliases.join(', ')})` : e.id));
}

/** A model declared by its caller (an id Anthropic serves that this table does not know yet). */
export function modelFromSpec(id: string, spec: ModelSpec): Model {
  return anthropicModel(id, id, spec);
}

/**
 * The offline model object: api "scripted", 200000-token window, zero cost unless given.
 * Overrides win, so a test can shrink the window or price the tokens.
 */
export function scriptedModel(overrides: Partial<Model> = {}): Model {
  return {
    id: 'scripted',
    name: 'Scripted model',
    api: SCRIPTED_API,
    provider: 'scripted',
    reasoning: true,
    input: ['text', 'image'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 64_000,
    ...overrides,
  };
}

/**
 * Resolves a model name for a provider ("anthropic" by default). For "scripted" any name is
 * accepted; a known Claude name lends its limits (not its price) so offline runs compact alike.
 * Throws an Error naming the known ids when the name is unknown.
 */
export function resolveModel(idOrAlias: string, provider = 'anthropic'): Model {
  const known = getModel(idOrAlias);
  if (provider === 'scripted') {
    const id = idOrAlias.trim() || 'scripted';
    return scriptedModel(
      known
        ? { id, name: `${known.name} (scripted)`, contextWindow: known.contextWindow, maxTokens: known.maxTokens }
        : { id },
    );
  }
  if (provider !== 'anthropic') {
    throw new Error(`Unknown provider "${provider}". Known providers: anthropic, scripted.`);
  }
  if (!known) {
    throw new Error(
      `Unknown model "${idOrAlias}" for provider anthropic. Known models: ${knownModelNames().join('; ')}. ` +
        'Use one of these ids (or an alias in parentheses), e.g. --model claude-sonnet-4-5.',
    );
  }
  return known;
}
