// The secrets of a run: every value the product knows to be a credential. They reach the agents
// (tools and providers need them) but never the run's records: built once per run (runSecrets),
// the same set redacts the run store's log and files (run.jsonl, result.json, plan.md, patches),
// every agent's session, and what the CLI prints (see session/redact.ts).
//
// What counts as a secret:
//   - the variables the recipe lists under `secrets:`;
//   - provider keys: ANTHROPIC_API_KEY, the `api_key_env` of every provider the recipe declares or
//     an agent uses, and those of the built-in presets (OPENAI_API_KEY, OPENROUTER_API_KEY);
//   - the values of providers' `headers:` (a gateway token sent beside the key): those under a
//     credential's name, and every token-like value (16 characters or more, no spaces);
//   - forge tokens (GITHUB_TOKEN, GH_TOKEN, GITLAB_TOKEN) and the cluster secret
//     (ORCHESTRATE_CLUSTER_SECRET, or the file ORCHESTRATE_CLUSTER_SECRET_FILE names);
//   - MCP servers: MCP entries have no "secret" marking, so an `env:` entry or `headers:` entry
//     whose name looks like a credential (…KEY, …TOKEN, …SECRET, …PASSWORD, Authorization,
//     Cookie …) is one, as is every variable with such a name an entry expands (${GH_TOKEN}).
// A value is only found as written: one transformed (base64, split, hashed) is not recognized.
import { readFileSync } from 'node:fs';
import { BUILTIN_PROVIDERS, type ProviderConfig } from '../ai/provider-config.js';
import { createRedactor, type Redactor, type SecretValue } from '../session/redact.js';
import { expandVars, type McpServerSpec } from '../tools/mcp/config.js';
import type { LoadedRecipe } from '../recipe/index.js';

/** What of a recipe names secrets (the rest of a LoadedRecipe is not needed). */
export type SecretSources = Pick<LoadedRecipe, 'secrets'> & Partial<Pick<LoadedRecipe, 'providers' | 'agents' | 'env'>>;

/** Environment variables that hold credentials whatever the recipe says. */
const WELL_KNOWN = ['ANTHROPIC_API_KEY', 'GITHUB_TOKEN', 'GH_TOKEN', 'GITLAB_TOKEN', 'ORCHESTRATE_CLUSTER_SECRET'];

/** A name (variable or header) that looks like it holds a credential. */
export function looksLikeCredential(name: string): boolean {
  return /(key|token|secret|password|passwd|credentials?|auth|authorization|cookie)$/i.test(
    name.replace(/[-_.]+$/, ''),
  );
}

/**
 * Whether a provider header's value is kept out of the records: under a credential's name, or
 * token-like (16 characters or more, no spaces). `X-Debug: true` stays readable: redacting
 * "true" would garble every record.
 */
function isSecretHeader(name: string, value: string): boolean {
  return looksLikeCredential(name) || (value.length >= 16 && !/\s/.test(value));
}

/** The providers the run may call: declared ones, agents' own, and the presets. */
function providersOf(recipe: SecretSources): ProviderConfig[] {
  const agents = Object.values(recipe.agents ?? {});
  return [
    ...(recipe.providers ?? []),
    ...agents.flatMap((a) => (a.providerConfig ? [a.providerConfig] : [])),
    ...BUILTIN_PROVIDERS,
  ];
}

/** Credentials of one MCP server entry: credential-named env and header entries, and credential-named variables it expands. */
function mcpSecrets(spec: McpServerSpec, env: Readonly<Record<string, string | undefined>>): SecretValue[] {
  const out: SecretValue[] = [];
  const entry = spec.entry as { env?: Record<string, string>; headers?: Record<string, string> };
  const named = [
    ...Object.entries(entry.env ?? {}).map(([k, v]) => ({ where: 'env', k, v })),
    ...Object.entries(entry.headers ?? {}).map(([k, v]) => ({ where: 'headers', k, v })),
  ];
  for (const { where, k, v } of named) {
    const expanded = expandVars(v, env);
    if (looksLikeCredential(k)) {
      out.push({ name: `mcp.${spec.name}.${where}.${k}`, value: expanded.value });
      // "Bearer ${TOKEN}": the token alone, too (an echo may drop the scheme).
      const bare = /^(?:bearer|token|basic)\s+(.+)$/i.exec(expanded.value)?.[1];
      if (bare) out.push({ name: `mcp.${spec.name}.${where}.${k}`, value: bare });
    }
  }
  for (const v of Object.values(spec.entry as Record<string, unknown>)) {
    const texts =
      typeof v === 'string' ? [v] : Array.isArray(v) ? v : v && typeof v === 'object' ? Object.values(v) : [];
    for (const t of texts) {
      if (typeof t !== 'string') continue;
      for (const name of expandVars(t, env).used) if (looksLikeCredential(name)) out.push({ name, value: env[name]! });
    }
  }
  return out;
}

/** The cluster secret kept in a file (ORCHESTRATE_CLUSTER_SECRET_FILE), when it can be read. */
function clusterSecretFile(env: Readonly<Record<string, string | undefined>>): SecretValue[] {
  const file = env.ORCHESTRATE_CLUSTER_SECRET_FILE?.trim();
  if (!file) return [];
  try {
    const value = readFileSync(file, 'utf8').trim();
    return value ? [{ name: 'cluster secret', value }] : [];
  } catch {
    return [];
  }
}

/**
 * Every secret value of a run (see the header), unset variables skipped, each value once (the
 * first name wins). All but the recipe's `secrets:` are marked `local`: a remote worker is not
 * sent this machine's credentials. `extra`: secrets the caller knows of besides (a cluster secret from --secret-file).
 */
export function runSecrets(
  recipe: SecretSources,
  env: Readonly<Record<string, string | undefined>>,
  extra: readonly SecretValue[] = [],
): SecretValue[] {
  const listed: SecretValue[] = [];
  for (const name of recipe.secrets) {
    const value = env[name];
    if (value) listed.push({ name, value });
  }
  const out: SecretValue[] = [];
  const fromEnv = (name: string): void => {
    const value = env[name];
    if (value) out.push({ name, value });
  };
  for (const name of WELL_KNOWN) fromEnv(name);
  for (const p of providersOf(recipe)) {
    if (p.apiKeyEnv) fromEnv(p.apiKeyEnv);
    for (const [k, v] of Object.entries(p.headers ?? {}))
      if (isSecretHeader(k, v)) out.push({ name: `${p.name}.headers.${k}`, value: v });
  }
  const mcpEnv = { ...env, ...(recipe.env ?? {}) };
  for (const a of Object.values(recipe.agents ?? {}))
    for (const s of a.mcpServers ?? []) out.push(...mcpSecrets(s, mcpEnv));
  out.push(...clusterSecretFile(env), ...extra);
  // Only what the recipe lists under secrets: travels with a task to a remote worker (as before);
  // the rest is this machine's and stays here (`local`).
  const seen = new Set<string>();
  return [...listed, ...out.map((s) => ({ ...s, local: true }))].filter(
    (s) => s.value !== '' && !seen.has(s.value) && seen.add(s.value),
  );
}

/** The redactor of a run (runSecrets), or undefined when it has no secrets. */
export function runRedactor(
  recipe: SecretSources,
  env: Readonly<Record<string, string | undefined>>,
  extra: readonly SecretValue[] = [],
): Redactor | undefined {
  return createRedactor(runSecrets(recipe, env, extra));
}
