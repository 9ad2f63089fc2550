// The secrets of a run: the values of the environment variables the recipe lists under
// `secrets:`, and the Anthropic API key. They reach the agents (tools may need them) but never
// the run's records: the run store redacts its log and files, every agent's session store
// redacts its entries, and the CLI redacts what it prints (see session/redact.ts).
import { createRedactor, type Redactor, type SecretValue } from '../session/redact.js';
import type { LoadedRecipe } from '../recipe/index.js';

/** Named secret values of a run (unset variables are skipped). */
export function runSecrets(
  recipe: Pick<LoadedRecipe, 'secrets'>,
  env: Readonly<Record<string, string | undefined>>,
): SecretValue[] {
  const out: SecretValue[] = [];
  for (const name of recipe.secrets) {
    const value = env[name];
    if (value) out.push({ name, value });
  }
  const key = env.ANTHROPIC_API_KEY;
  if (key) out.push({ name: 'ANTHROPIC_API_KEY', value: key });
  return out;
}

/** The redactor of a run, or undefined when it has no secrets. */
export function runRedactor(
  recipe: Pick<LoadedRecipe, 'secrets'>,
  env: Readonly<Record<string, string | undefined>>,
): Redactor | undefined {
  return createRedactor(runSecrets(recipe, env));
}
