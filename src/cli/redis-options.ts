// The flags of a distributed run (`--redis`, `--max-workspace-mb`) on `orchestrate <recipe>` and
// `resume`. Kept apart from redis-run.ts so a local run never loads the Redis client and BullMQ.
import type { Argv } from 'yargs';
import { DEFAULT_MAX_WORKSPACE_BYTES } from '../cluster/workspace-transfer.js';
import type { CommandArgs } from './command.js';

export function redisOptions(y: Argv): Argv<object> {
  return y
    .option('redis', { type: 'string', describe: 'Run the agents on `orchestrate worker` processes through this Redis (redis://host:port; also ORCHESTRATE_REDIS_URL)' })
    .option('max-workspace-mb', {
      type: 'number',
      describe: `Largest packed workspace (git bundle or archive) sent to a worker with --redis, in MB (default ${DEFAULT_MAX_WORKSPACE_BYTES / 1024 / 1024})`,
    })
    .check((a) => {
      const mb = a['max-workspace-mb'];
      if (mb !== undefined && !(typeof mb === 'number' && Number.isFinite(mb) && mb > 0)) throw new Error(`--max-workspace-mb must be a number of megabytes above 0 (got ${String(mb)})`);
      return true;
    });
}

/** The Redis URL of this run: --redis, else ORCHESTRATE_REDIS_URL; undefined for a local run. */
export function redisUrlOf(args: CommandArgs, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (typeof args.redis === 'string' && args.redis.trim() !== '') return args.redis.trim();
  const fromEnv = env.ORCHESTRATE_REDIS_URL?.trim();
  return fromEnv ? fromEnv : undefined;
}

