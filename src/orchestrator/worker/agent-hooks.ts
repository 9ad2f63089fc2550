// The command hooks of one instance's agent, where it runs: those the recipe resolved (the user's
// settings files, the recipe's and the agent file's hooks: AgentSpec.commandHooks), plus the
// settings files of the repository it works in, read only when its task says
// `trust_repo_config: true` (a batch over foreign repositories runs none of their hooks).
import { existsSync } from 'node:fs';
import { HooksConfigError, loadHooksFile, mergeHooksConfigs, type HooksConfig } from '../../runtime/command-hooks.js';
import { repoHookFiles } from '../../recipe/recipe-hooks.js';
import type { InstanceTask } from '../execution/instance-task.js';

export function commandHooksFor(
  task: Pick<InstanceTask, 'agent' | 'cwd' | 'trustRepoConfig'>,
): { config?: HooksConfig; notices: string[] } | { error: string } {
  const notices: string[] = [];
  const configs: HooksConfig[] = task.agent.commandHooks ? [task.agent.commandHooks] : [];
  if (task.trustRepoConfig) {
    for (const file of repoHookFiles(task.cwd)) {
      if (!existsSync(file)) continue;
      try {
        const c = loadHooksFile(file, (m) => notices.push(m));
        if (c) configs.push(c);
      } catch (err) {
        if (!(err instanceof HooksConfigError)) throw err;
        return {
          error: `the repository's hooks cannot be used (trust_repo_config: true): ${err.message}`,
        };
      }
    }
  }
  const config = mergeHooksConfigs(configs);
  return Object.keys(config).length > 0 ? { config, notices } : { notices };
}
