// Where the command hooks of a recipe's agents come from, in order (every matching hook runs):
//   1. the user's side: ~/.orchestrate/settings.json (ORCHESTRATE_HOME), ~/.claude/settings.json
//      (CLAUDE_CONFIG_DIR), and the recipe folder's .orchestrate/settings.json,
//      .claude/settings.json and .claude/settings.local.json;
//   2. the recipe's top-level `hooks:`;
//   3. the agent file's `hooks:` (Claude Code agent frontmatter), then the agent's `hooks:` in the recipe.
// Never from the repositories the agents work on: those are read where the agent runs, and only
// for tasks with `trust_repo_config: true` (repoHookFiles). A settings file written for Claude
// Code means the same here: the runtime's parseHooksConfig checks every source.
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  hookSettingsFiles,
  loadHooksFile,
  mergeHooksConfigs,
  parseHooksConfig,
  type HooksConfig,
  type HooksWarn,
} from '../runtime/command-hooks.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The user-side settings files of a recipe in `dir`, in the order they apply. */
export function userHookFiles(dir: string, env: Env): string[] {
  const home = env.HOME || homedir();
  return hookSettingsFiles({
    cwd: dir,
    home: env.ORCHESTRATE_HOME || join(home, '.orchestrate'),
    claudeHome: env.CLAUDE_CONFIG_DIR || join(home, '.claude'),
  });
}

/**
 * The user-side hooks of a recipe in `dir` (empty when no settings file has any). A broken file
 * throws HooksConfigError naming the file and the key.
 */
export function loadUserHooks(dir: string, env: Env, warn?: HooksWarn): HooksConfig {
  const configs: HooksConfig[] = [];
  const seen = new Set<string>();
  for (const file of userHookFiles(dir, env)) {
    if (seen.has(file)) continue; // the recipe folder is the home folder: read once
    seen.add(file);
    const c = loadHooksFile(file, warn);
    if (c) configs.push(c);
  }
  return mergeHooksConfigs(configs);
}

/** The settings files of a repository an instance works in (read only with trust_repo_config). */
export function repoHookFiles(cwd: string): string[] {
  return [
    join(cwd, '.orchestrate', 'settings.json'),
    join(cwd, '.claude', 'settings.json'),
    join(cwd, '.claude', 'settings.local.json'),
  ];
}

/**
 * A `hooks:` value of the recipe (already checked by validation), its hooks tagged with `source`
 * (the recipe file: its folder is readable to the hooks); undefined when absent.
 */
export function recipeHooks(value: unknown, source: string): HooksConfig | undefined {
  return value === undefined ? undefined : parseHooksConfig(value, source);
}

/** One agent's hooks: the user's side, the recipe's, its file's, its own in the recipe. */
export function agentHooks(sources: readonly (HooksConfig | undefined)[]): HooksConfig | undefined {
  const merged = mergeHooksConfigs(sources.filter((c): c is HooksConfig => c !== undefined));
  return Object.keys(merged).length > 0 ? merged : undefined;
}
