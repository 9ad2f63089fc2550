// Runs a project's recipe.yaml with its agents on the workers of a Redis cluster, through the
// CLI's own glue for --redis (redisRunSettingsOf, then the service's openRedisRun), and returns the run's outcome.
import { join } from 'node:path';
import { redisRunSettingsOf } from '../../../src/cli/commands/run.js';
import { openRedisRun } from '../../../src/service/redis-run.js';
import { runRecipeFile } from '../../../src/orchestrator/run-recipe.js';

export async function runOnCluster(redisUrl: string, env: Record<string, string>, dir: string) {
  const settings = redisRunSettingsOf(redisUrl, {}, { ...process.env, ...env });
  if (!settings.ok) throw new Error(settings.message);
  const opened = await openRedisRun(settings.settings, () => {});
  if (!opened.ok) throw new Error(opened.message);
  try {
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { runsDir: join(dir, 'runs'), ...opened.run.options },
    );
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.outcome;
  } finally {
    await opened.run.close();
  }
}
