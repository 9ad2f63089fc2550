// Replays of finished jobs. A launch's job that ended on a worker (a result or a refusal sent, a
// cancel, a failure) and is queued again is a replay (the same sealed job, so its MAC verifies):
// its coordinator has settled that launch and never sends the start the worker waits for, so
// the worker would hold a slot for its whole start timeout. Workers record the launches that
// ended, per run, in Redis (any worker may take the replay) and drop such a job at once. Kept a
// month. Whoever can write to Redis can also delete jobs: this stops replays, not that.
import type { Redis } from 'ioredis';
import type { JobData } from './cluster-wire.js';

/** The set of a run's launches that ended on some worker. */
export const finishedLaunchesKey = (runId: string): string => `orchestrate:run:${runId}:finished`;
const FINISHED_TTL_S = 30 * 24 * 3600;

/** Whether the job's launch already ended on some worker (the job is then a replay). */
export async function launchFinished(redis: Redis, data: Pick<JobData, 'runId' | 'launchId'>): Promise<boolean> {
  try {
    return (await redis.sismember(finishedLaunchesKey(data.runId), data.launchId)) === 1;
  } catch {
    // Redis unreachable: BullMQ could not have handed the job over either; it runs as before.
    return false;
  }
}

/** Records that the job's launch ended here: a later copy of its job is dropped unrun. */
export async function markLaunchFinished(redis: Redis, data: Pick<JobData, 'runId' | 'launchId'>): Promise<void> {
  const key = finishedLaunchesKey(data.runId);
  await redis
    .multi()
    .sadd(key, data.launchId)
    .expire(key, FINISHED_TTL_S)
    .exec()
    .catch(() => undefined);
}
