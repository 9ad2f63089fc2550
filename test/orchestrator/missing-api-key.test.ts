// The message a run prints when its agents need the Anthropic API and no key is set: it names the
// agents in a sentence that reads right for one agent and for several, and says how to go on.
import { afterEach, describe, expect, it } from 'vitest';
import { missingApiKey } from '../../src/orchestrator/run-recipe.js';
import { loadRecipe } from '../../src/recipe/index.js';
import { tempRecipe, type TempRecipe } from '../recipe/recipe-files.js';

const recipeWith = (agents: string[]) =>
  [
    'name: key-check',
    'provider: anthropic',
    'model: claude-haiku-4-5',
    'agents:',
    ...agents.map((a) => `  ${a}: { system: "You help." }`),
    'tasks:',
    `  - { id: t, agent: ${agents[0]}, prompt: "hello" }`,
  ].join('\n');

let made: TempRecipe | undefined;
afterEach(() => made?.cleanup());

function messageFor(agents: string[], env: Record<string, string | undefined>): string | undefined {
  made = tempRecipe(recipeWith(agents));
  const loaded = loadRecipe(made.file, { env });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
  return missingApiKey(loaded.recipe, env);
}

describe('missingApiKey', () => {
  it('says "agent "a" of this recipe calls" for one agent', () => {
    const text = messageFor(['a'], {});
    expect(text).toMatch(/^agent "a" of this recipe calls the Anthropic API, and ANTHROPIC_API_KEY is not set\./);
    expect(text).toMatch(/export ANTHROPIC_API_KEY=.*--provider scripted/);
  });

  it('says "agents "a", "b" of this recipe call" for several', () => {
    expect(messageFor(['a', 'b'], {})).toMatch(/^agents "a", "b" of this recipe call the Anthropic API/);
  });

  it('says nothing when the key is set', () => {
    expect(messageFor(['a'], { ANTHROPIC_API_KEY: 'sk-ant-test' })).toBeUndefined();
  });
});
