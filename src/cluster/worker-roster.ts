// The roster of `orchestrate worker` processes on one Redis: each worker writes a heartbeat into
// the workers hash (clusterKeys.workers(): worker id -> JSON) every WORKER_BEAT_MS, and removes it
// when it stops. Writer and readers share the shape and the reading here, so a coordinator that
// asks "does any worker serve this Redis?" parses the beats the way the workers write them.
import type { Redis } from 'ioredis';
import { clusterKeys } from './cluster-wire.js';

/** How often a worker writes its heartbeat. */
export const WORKER_BEAT_MS = 5_000;
/** A heartbeat older than this is of a worker that is gone (three beats missed). */
export const WORKER_SEEN_MS = 15_000;

/** One worker's heartbeat, as it writes it. */
export interface WorkerBeat {
  name: string;
  host: string;
  pid: number;
  concurrency: number;
  /** When it was written (ms since the epoch). */
  at: number;
  /** Jobs it runs now. */
  running: number;
}

/** A beat's `at` from its JSON text; undefined when the text is not a JSON object (a foreign or torn value). */
export function beatTime(text: string): number | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    return Number((value as { at?: unknown }).at ?? 0);
  } catch {
    return undefined;
  }
}

/** Whether a beat written at `at` is of a worker that is still there at `now`. */
export function isLiveBeat(at: number, now: number): boolean {
  return now - at < WORKER_SEEN_MS;
}

/** How many workers have beaten within WORKER_SEEN_MS of `now`. */
export async function liveWorkerCount(redis: Redis, now: number = Date.now()): Promise<number> {
  const beats = await redis.hvals(clusterKeys.workers());
  return beats.filter((text) => {
    const at = beatTime(text);
    return at !== undefined && isLiveBeat(at, now);
  }).length;
}
