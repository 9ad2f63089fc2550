// `--redis URL` (or ORCHESTRATE_REDIS_URL) on `orchestrate <recipe>` and `resume`: the run's
// agents go to `orchestrate worker` processes through Redis instead of local threads. Checked
// before anything runs (a Redis that cannot be reached is exit 2, not a hang), and the run holds
// its lease in Redis too, so workers drop the jobs of a coordinator that lost the run. The
// cluster secret (redis-options.ts) seals the jobs and makes the lease token.
import type { Redis } from 'ioredis';
import { checkRedis, connectRedis, redactRedisUrl, type RedisTarget } from '../cluster/redis-connection.js';
import { RedisExecutor } from '../cluster/redis-executor.js';
import { takeRedisRunLease } from '../cluster/redis-run-lease.js';
import { liveWorkerCount } from '../cluster/worker-roster.js';
import type { RunOptions } from '../orchestrator/run-recipe.js';
import type { CommandArgs } from './command.js';
import { redisAccessOf } from './redis-options.js';

/** Time allowed for the first connection to Redis. */
const CHECK_MS = 5_000;

export interface RedisRun {
  /** What the run options gain: the executor and the lease taker. */
  options: Pick<RunOptions, 'executor' | 'takeLease'>;
  close(): Promise<void>;
}

/** Connects (or says why it cannot), and builds the executor and the Redis lease for one run. */
export async function openRedisRun(
  url: string,
  args: CommandArgs,
  warn: (text: string) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ ok: true; run: RedisRun } | { ok: false; message: string }> {
  const resolved = redisAccessOf(url, args, env);
  if (!resolved.ok) return { ok: false, message: resolved.error };
  const { endpoint, trust, warnings } = resolved.access;
  for (const w of warnings) warn(`orchestrate: warning: ${w}\n`);
  const reachable = await checkRedis(endpoint, CHECK_MS);
  if (!reachable.ok) return { ok: false, message: reachable.error };
  const idle = await noLiveWorkers(endpoint);
  if (idle) warn(`orchestrate: ${idle}\n`);
  let token: string | undefined;
  const mb = typeof args['max-workspace-mb'] === 'number' ? args['max-workspace-mb'] : undefined;
  const executor = new RedisExecutor({
    url: endpoint,
    trust,
    ...(mb !== undefined ? { maxWorkspaceBytes: Math.floor(mb * 1024 * 1024) } : {}),
    leaseToken: () => token,
    onWarning: (text) => warn(`orchestrate: ${text}\n`),
  });
  let leaseRedis: Redis | undefined;
  const run: RedisRun = {
    options: {
      executor,
      takeLease: async (dir, runId) => {
        leaseRedis ??= connectRedis(endpoint, { name: 'coordinator-lease' });
        // A token made with the cluster secret: nobody else can write a lease the workers believe.
        const taken = await takeRedisRunLease(dir, runId, leaseRedis, { token: trust.leaseToken(runId) });
        if (taken.ok) token = taken.redisLease.token;
        return taken;
      },
    },
    close: async () => {
      await executor.close();
      leaseRedis?.disconnect();
    },
  };
  return { ok: true, run };
}

/** A note when no worker serves this Redis now: the agents would wait in the queue with no sign why. */
async function noLiveWorkers(target: RedisTarget): Promise<string | undefined> {
  const url = typeof target === 'string' ? target : target.url;
  const redis = connectRedis(target, { name: 'coordinator-check' });
  try {
    if ((await liveWorkerCount(redis)) > 0) return undefined;
    return `no orchestrate worker serves ${redactRedisUrl(url)} right now: the agents wait in the queue until one starts (orchestrate worker --redis ${redactRedisUrl(url)}).`;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}
