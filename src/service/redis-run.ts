// A distributed run (`--redis URL` or ORCHESTRATE_REDIS_URL on `orchestrate <recipe>` and
// `resume`): the run's agents go to `orchestrate worker` processes through Redis instead of local
// threads. Checked before anything runs (a Redis that cannot be reached is a reason, not a hang),
// and the run holds its lease in Redis too, so workers drop the jobs of a coordinator that lost
// the run. The cluster secret (the caller resolves it with the access: cli/redis-options.ts)
// seals the jobs and makes the lease token. Loaded only for a distributed run, so a local run
// never loads the Redis client and BullMQ.
import type { Redis } from 'ioredis';
import type { ClusterTrust } from '../cluster/cluster-trust.js';
import {
  checkRedis,
  connectRedis,
  type RedisEndpoint,
  redactRedisUrl,
  type RedisTarget,
} from '../cluster/redis-connection.js';
import { RedisExecutor } from '../cluster/redis-executor.js';
import { takeRedisRunLease } from '../cluster/redis-run-lease.js';
import { liveWorkerCount } from '../cluster/worker-roster.js';
import type { RunOptions } from '../orchestrator/run-recipe.js';

/** Time allowed for the first connection to Redis. */
const CHECK_MS = 5_000;

/** How to reach the Redis and the cluster secret, resolved from flags and environment by the caller. */
export interface RedisRunAccess {
  endpoint: RedisEndpoint;
  trust: ClusterTrust;
  /** Things to tell the user but not to stop for (a password on the command line, no secret). */
  warnings: readonly string[];
}

/** A distributed run's settings: the access, and the largest workspace sent to a worker. */
export interface RedisRunSettings {
  access: RedisRunAccess;
  maxWorkspaceBytes?: number;
}

export interface RedisRun {
  /** What the run options gain: the executor and the lease taker. */
  options: Pick<RunOptions, 'executor' | 'takeLease'>;
  close(): Promise<void>;
}

export type OpenedRedisRun = { ok: true; run: RedisRun } | { ok: false; code: 'redis_unreachable'; message: string };

/**
 * Connects (or says why it cannot), and builds the executor and the Redis lease for one run.
 * `notice` gets each line for the user (warnings, no live worker), worded and ending in a newline.
 */
export async function openRedisRun(
  settings: RedisRunSettings,
  notice: (line: string) => void,
): Promise<OpenedRedisRun> {
  const { endpoint, trust, warnings } = settings.access;
  for (const w of warnings) notice(`orchestrate: warning: ${w}\n`);
  const reachable = await checkRedis(endpoint, CHECK_MS);
  if (!reachable.ok) return { ok: false, code: 'redis_unreachable', message: reachable.error };
  const idle = await noLiveWorkers(endpoint);
  if (idle) notice(`orchestrate: ${idle}\n`);
  let token: string | undefined;
  const executor = new RedisExecutor({
    url: endpoint,
    trust,
    ...(settings.maxWorkspaceBytes !== undefined ? { maxWorkspaceBytes: settings.maxWorkspaceBytes } : {}),
    leaseToken: () => token,
    onWarning: (text) => notice(`orchestrate: ${text}\n`),
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
