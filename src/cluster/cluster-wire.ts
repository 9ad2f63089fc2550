// What travels through Redis between a coordinator and the worker processes of a distributed run.
//
// - Jobs (BullMQ): one per agent attempt ("launch"), on the `agents` queue, or the `partners`
//   queue for a pair's planner (its own slots, so planners never take every slot while the pair
//   workers they wait for sit in the queue). Job data: the task (paths, prompt, agent spec, never
//   the API key), where its packed workspace is, and the run lease token that fences the job.
// - Up (worker -> coordinator): one Redis stream per run. Each entry names its launch and the
//   worker incarnation that sent it: the protocol messages of the agent (protocol.ts), the pair
//   partner's messages, the session file's bytes as they are written, workspace checkpoints,
//   and the result with its patch.
//   An entry's body is one UpMessage, or an array of them: the messages a worker sent while its
//   previous entry for the launch was in flight (up-batcher.ts), in order.
// - Down (coordinator -> worker): one stream per worker process: the start (the session so far
//   and the last checkpoint, for an agent taken over), protocol messages, partner messages, and
//   a cancel.
// Binary parts (session bytes, patches) travel as base64 inside the JSON.
// With a cluster secret (cluster-trust.ts) a job sits in the queue as a JobEnvelope (JobData
// encrypted, MAC over everything) and each stream entry's body is encrypted and carries a MAC
// (`m`); packed workspaces are encrypted too.
import { z } from 'zod';
import { FailureClassSchema } from '../run/usage-summary.js';

/** Queue names (BullMQ adds its own `bull:` prefix; ours is in the prefix option). */
export const AGENTS_QUEUE = 'agents';
export const PARTNERS_QUEUE = 'partners';
export const BULLMQ_PREFIX = 'orchestrate:bull';
/** How the failed reason of a job that a worker cannot verify starts (the coordinator tells it from a crash). */
export const UNVERIFIED_JOB = 'cannot verify this job';

export const clusterKeys = {
  /** Worker -> coordinator messages of one run. */
  up: (runId: string): string => `orchestrate:run:${runId}:up`,
  /** Coordinator -> one worker process. */
  down: (workerId: string): string => `orchestrate:worker:${workerId}:down`,
  /** A packed workspace (binary), by the SHA-256 of its bytes: launches of the same folder share one copy. */
  workspace: (runId: string, digest: string): string => `orchestrate:run:${runId}:ws:${digest}`,
  /** Live worker processes (a hash: worker id -> JSON with name, host, pid, concurrency, heartbeat). */
  workers: (): string => 'orchestrate:workers',
};

/** The packed workspace's description (its bytes are in clusterKeys.workspace). */
export const WorkspaceMetaSchema = z.object({
  kind: z.enum(['git', 'folder']),
  base: z.string().optional(),
  exclude: z.array(z.string()).optional(),
  ignore: z.string().optional(),
  bytes: z.number(),
  /** The Redis key holding the bytes (clusterKeys.workspace). */
  key: z.string(),
});

/** The SHA-256 (hex) of a packed workspace's bytes, from its Redis key (clusterKeys.workspace). */
export function workspaceDigestOf(key: string): string | undefined {
  return /:ws:([0-9a-f]{64})$/.exec(key)?.[1];
}
export type WorkspaceMeta = z.infer<typeof WorkspaceMetaSchema>;

export const ShippedFileSchema = z.object({ path: z.string(), data: z.string() });

export const JobDataSchema = z.object({
  runId: z.string(),
  launchId: z.string(),
  /** The run lease token of the coordinator that queued it: a worker drops the job once another holds the run. */
  leaseToken: z.string().optional(),
  /** The InstanceTask without its ports and API key (plain JSON). */
  task: z.record(z.string(), z.unknown()),
  workspace: WorkspaceMetaSchema,
  /**
   * Skill and extension files (base64), recreated on the worker under its job folder: `path` is
   * the file's absolute path on the coordinator without its leading `/` (the worker refuses an
   * absolute path or one with a `..` part).
   */
  files: z.array(ShippedFileSchema).default([]),
  /** The agent has a pair partner (its messages travel as `peer`). */
  hasPeer: z.boolean(),
  /**
   * The coordinator reads an up entry holding a list of messages (up-batcher.ts). Coordinators
   * before it read one message per entry and drop a list: a worker sends those one at a time.
   */
  readsBatches: z.boolean().optional(),
});
export type JobData = z.infer<typeof JobDataSchema>;

export const UpMessageSchema = z.discriminatedUnion('k', [
  /** A worker took the job: down messages go to `stream`. */
  z.object({ k: z.literal('claimed'), worker: z.string(), stream: z.string() }),
  z.object({ k: z.literal('port'), m: z.unknown() }),
  z.object({ k: z.literal('peer'), m: z.unknown() }),
  /** Session file bytes at `offset` (`reset`: the file was rewritten from the start). */
  z.object({ k: z.literal('session'), offset: z.number(), data: z.string(), reset: z.boolean().optional() }),
  /** Everything the agent changed in its workspace so far (a binary patch against the packed state). */
  z.object({ k: z.literal('checkpoint'), patch: z.string() }),
  /** The attempt ended: its result (protocol.ts WorkerResult) and the patch of its workspace. */
  z.object({ k: z.literal('result'), result: z.unknown(), patch: z.string() }),
  /** The worker could not run the job at all (unpack failed, the start never came). */
  z.object({ k: z.literal('refused'), failure: FailureClassSchema, error: z.string() }),
]);
export type UpMessage = z.infer<typeof UpMessageSchema>;

/**
 * An up message checked as UpMessageSchema would check it, by hand for the kinds every agent sends
 * many of (`port`, `peer`, `session`: a coordinator reads thousands a minute, issue 41); the rare
 * kinds go through the schema. undefined when it is not an up message.
 */
export function parseUpMessage(value: unknown): UpMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  switch (v.k) {
    case 'port':
    case 'peer':
      // The schema's `m: z.unknown()` wants the key there, whatever its value.
      return 'm' in v ? { k: v.k, m: v.m } : undefined;
    case 'session':
      if (typeof v.offset !== 'number' || !Number.isFinite(v.offset) || typeof v.data !== 'string') return undefined;
      if (v.reset !== undefined && typeof v.reset !== 'boolean') return undefined;
      return v.reset === undefined
        ? { k: 'session', offset: v.offset, data: v.data }
        : { k: 'session', offset: v.offset, data: v.data, reset: v.reset };
    default: {
      const parsed = UpMessageSchema.safeParse(value);
      return parsed.success ? parsed.data : undefined;
    }
  }
}

export const DownMessageSchema = z.discriminatedUnion('k', [
  /** Go: the session so far and the last workspace checkpoint (both empty for a fresh attempt). */
  z.object({ k: z.literal('start'), session: z.string(), checkpoint: z.string() }),
  z.object({ k: z.literal('port'), m: z.unknown() }),
  /** A partner message; `sync`: the partner's workspace patch, applied first so both see the same files. */
  z.object({ k: z.literal('peer'), m: z.unknown(), sync: z.string().optional() }),
  /** Stop the agent now (hard abort, or a stale incarnation). */
  z.object({ k: z.literal('cancel'), reason: z.string() }),
]);
export type DownMessage = z.infer<typeof DownMessageSchema>;

/**
 * One stream entry: its launch, the worker incarnation, the message (JSON; encrypted, base64, with
 * a cluster secret) and its MAC ('' without a secret).
 */
export interface StreamEntry {
  launch: string;
  incarnation: string;
  body: string;
  mac: string;
}

/** XADD field list for an entry. */
export function entryFields(e: StreamEntry): string[] {
  return ['l', e.launch, 'i', e.incarnation, 'b', e.body, 'm', e.mac];
}

/** Reads an XREAD entry's field list back. */
export function parseEntry(fields: string[]): StreamEntry | undefined {
  const get = (name: string): string | undefined => {
    for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
    return undefined;
  };
  const launch = get('l');
  const body = get('b');
  if (launch === undefined || body === undefined) return undefined;
  return { launch, incarnation: get('i') ?? '', body, mac: get('m') ?? '' };
}

export const b64 = (b: Buffer | Uint8Array): string => Buffer.from(b).toString('base64');
export const unb64 = (s: string): Buffer => Buffer.from(s, 'base64');
