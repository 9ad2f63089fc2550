// The coordinator side of a distributed run: instead of a local worker thread, each agent attempt
// ("launch") becomes a BullMQ job that some `orchestrate worker` process takes. The coordinator
// keeps everything else: the DAG, the permit broker (so concurrency, rate limits, budgets and 429
// pauses hold across every worker: each model call asks it for a permit over Redis), the message
// router (send_message between agents on different workers), the run folder.
//
// AgentLaunch talks to its agent over a MessagePort as it always does; this executor carries that
// port's messages over Redis streams (cluster-wire.ts), writes the session bytes the worker streams
// back into the session file here as they come, keeps the worker's last workspace checkpoint
// beside the session (so an agent taken over by another worker, or resumed by a new coordinator,
// continues on the files its session describes), and applies the result's patch to the original
// workspace.
//
// Trust (cluster-trust.ts): jobs are sealed and MACed with the cluster secret, every stream entry
// too; an up entry for a live launch that does not verify fails that instance `untrusted` and
// nothing of it (patch, session, checkpoint) is used.
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ExternalExecutor } from '../orchestrator/execution/instance-executor.js';
import type { InstanceTask } from '../orchestrator/execution/instance-task.js';
import type { WorkerResult } from '../orchestrator/protocol.js';
import { zeroUsage, type FailureClass } from '../run/usage-summary.js';
import { replaceFileSync } from '../tools/atomic-write.js';
import {
  AGENTS_QUEUE,
  BULLMQ_PREFIX,
  clusterKeys,
  entryFields,
  PARTNERS_QUEUE,
  unb64,
  UNVERIFIED_JOB,
  parseUpMessage,
  type DownMessage,
  type UpMessage,
  type JobData,
  type StreamEntry,
} from './cluster-wire.js';
import type { ClusterTrust, JobEnvelope } from './cluster-trust.js';
import { portableTask, shippedFiles } from './job-payload.js';
import { connectRedis, redactRedisUrl, urlOf, type RedisTarget } from './redis-connection.js';
import { StreamBatch } from './stream-batch.js';
import { StreamReader } from './stream-reader.js';
import {
  DEFAULT_MAX_WORKSPACE_BYTES,
  applyWorkspacePatch,
  packWorkspace,
  type PackedWorkspace,
} from './workspace-transfer.js';

export { MAX_SHIPPED_BYTES } from './job-payload.js';

export interface RedisExecutorOptions {
  url: RedisTarget;
  /** The cluster secret's keys (or ClusterTrust.insecure() with --insecure-no-secret). */
  trust: ClusterTrust;
  /** Largest packed workspace that may travel (default DEFAULT_MAX_WORKSPACE_BYTES). */
  maxWorkspaceBytes?: number;
  /** The run lease token jobs carry, so workers drop the jobs of a coordinator that lost its run. */
  leaseToken?: () => string | undefined;
  /** Something went wrong that the run should log (Redis outages, recovered jobs). */
  onWarning?: (text: string) => void;
}

/** Workspaces packed at once (a wide fan-out would otherwise start a git or tar process per instance at the same moment). */
const PACKING_AT_ONCE = 4;

interface Launch {
  id: string;
  runId: string;
  task: InstanceTask;
  port: MessagePort;
  peerPort?: MessagePort;
  queue: Queue;
  data: JobData;
  /** The job as queued: `data` sealed with the cluster secret. */
  envelope: JobEnvelope;
  packed: PackedWorkspace;
  incarnation?: string;
  stream?: string;
  worker?: string;
  /** Messages for the agent before a worker took it. */
  buffered: DownMessage[];
  checkpointFile: string;
  lastCheckpoint: string;
  /** Times queued (a job lost with Redis's data is queued again, under a new job id). */
  enqueues: number;
  sessionFd?: number;
  /** The incarnation whose result is being applied: a worker that claims the launch now is told to stop. */
  resultFrom?: string;
  settled: boolean;
  resolve(r: WorkerResult): void;
  reject(err: Error): void;
}

export class RedisExecutor implements ExternalExecutor {
  readonly description: string;
  private readonly cmd: Redis;
  private readonly agents: Queue;
  private readonly partners: Queue;
  private readonly events: QueueEvents[] = [];
  private readonly readers = new Map<string, StreamReader>();
  private readonly launches = new Map<string, Launch>();
  /**
   * Launches that ended here. A job of one can still be claimed (queued again after Redis lost its
   * data, or taken while a cancel removed it); its worker is told to stop at once, instead of
   * holding a slot until its start timeout (60 s) and its drain waiting for that.
   */
  private readonly ended = new Set<string>();
  /** Launches using each stored workspace (by Redis key): the bytes are deleted with the last one. */
  private readonly workspaceUsers = new Map<string, number>();
  private packing = 0;
  private readonly packWaiters: (() => void)[] = [];
  /** Patches applied to one workspace folder go one at a time. */
  private readonly patchLocks = new Map<string, Promise<unknown>>();
  private wasReady = false;
  /** Down entries, written once per event-loop turn as one pipeline. */
  private readonly downBatch: StreamBatch;
  /** Connections handed to BullMQ, which leaves them open: closed by close(). */
  private readonly connections: Redis[] = [];
  private closed = false;

  constructor(private readonly opts: RedisExecutorOptions) {
    this.description = redactRedisUrl(urlOf(opts.url));
    this.cmd = connectRedis(opts.url, { name: 'coordinator', forBullmq: true });
    this.downBatch = new StreamBatch(this.cmd);
    const connection = connectRedis(opts.url, { name: 'coordinator-queue', forBullmq: true });
    this.connections.push(connection);
    this.agents = new Queue(AGENTS_QUEUE, { connection, prefix: BULLMQ_PREFIX });
    this.partners = new Queue(PARTNERS_QUEUE, { connection, prefix: BULLMQ_PREFIX });
    for (const name of [AGENTS_QUEUE, PARTNERS_QUEUE]) {
      const eventsConnection = connectRedis(opts.url, { name: 'coordinator-events', forBullmq: true });
      this.connections.push(eventsConnection);
      const qe = new QueueEvents(name, { connection: eventsConnection, prefix: BULLMQ_PREFIX });
      qe.on('failed', ({ jobId, failedReason }) => this.jobFailed(jobId, failedReason));
      qe.on('error', () => {});
      this.events.push(qe);
    }
    this.agents.on('error', () => {});
    this.partners.on('error', () => {});
    // A Redis that came back may have lost its data (no persistence): re-queue what vanished.
    this.cmd.on('ready', () => {
      if (this.wasReady) void this.recover();
      this.wasReady = true;
    });
  }

  run(task: InstanceTask, options: { transferList: MessagePort[]; signal?: AbortSignal }): Promise<unknown> {
    return new Promise<WorkerResult>((resolve, reject) => {
      void this.start(task, options.signal, resolve, reject).catch((err: unknown) => {
        task.port.close();
        resolve(
          failed(
            'crashed',
            `the distributed executor failed to queue the agent: ${err instanceof Error ? err.message : String(err)}`,
          ),
        );
      });
    });
  }

  private async start(
    task: InstanceTask,
    signal: AbortSignal | undefined,
    resolve: (r: WorkerResult) => void,
    reject: (e: Error) => void,
  ): Promise<void> {
    const shipped = shippedFiles(task.agent);
    if (!shipped.ok) {
      task.port.close();
      resolve(failed('workspace', `the agent files of ${task.id} cannot travel to a worker: ${shipped.error}`));
      return;
    }
    const packedR = await this.limitPacking(() =>
      packWorkspace(task.cwd, { maxBytes: this.opts.maxWorkspaceBytes ?? DEFAULT_MAX_WORKSPACE_BYTES }),
    );
    if (!packedR.ok) {
      task.port.close();
      resolve(failed('workspace', `the workspace of ${task.id} cannot travel to a worker: ${packedR.error}`));
      return;
    }
    const packed = packedR.packed;
    const id = randomUUID();
    const checkpointFile = `${task.sessionFile}.workspace.diff`;
    const data: JobData = {
      runId: task.runId,
      launchId: id,
      ...(this.opts.leaseToken?.() ? { leaseToken: this.opts.leaseToken() } : {}),
      task: portableTask(task),
      workspace: {
        kind: packed.kind,
        ...(packed.base ? { base: packed.base } : {}),
        ...(packed.exclude ? { exclude: packed.exclude } : {}),
        ...(packed.ignore ? { ignore: packed.ignore } : {}),
        bytes: packed.data.length,
        key: clusterKeys.workspace(task.runId, createHash('sha256').update(packed.data).digest('hex')),
      },
      files: shipped.files,
      hasPeer: task.peerPort !== undefined,
      readsBatches: true,
    };
    const envelope = this.opts.trust.sealJob(
      { runId: task.runId, launchId: id, instance: task.id, attempt: task.attempt },
      data,
    );
    const launch: Launch = {
      id,
      runId: task.runId,
      task,
      port: task.port,
      ...(task.peerPort ? { peerPort: task.peerPort } : {}),
      queue: task.role === 'pair-planner' ? this.partners : this.agents,
      data,
      envelope,
      packed,
      buffered: [],
      checkpointFile,
      lastCheckpoint: existsSync(checkpointFile) ? readFileSync(checkpointFile).toString('base64') : '',
      settled: false,
      enqueues: 0,
      resolve,
      reject,
    };
    this.launches.set(id, launch);
    this.ensureReader(task.runId);
    task.port.on('message', (m: unknown) => this.down(launch, { k: 'port', m }));
    // A pair partner's messages arrive on our end of the pair's channel, wrapped by the other launch.
    task.peerPort?.on('message', (w: { relay: unknown; sync?: string }) =>
      this.down(launch, { k: 'peer', m: w.relay, ...(w.sync ? { sync: w.sync } : {}) }),
    );
    signal?.addEventListener(
      'abort',
      () => this.hardStop(launch, signal.reason instanceof Error ? signal.reason.message : 'aborted'),
      { once: true },
    );
    await this.enqueue(launch);
  }

  private async enqueue(l: Launch): Promise<void> {
    const key = l.data.workspace.key;
    if (l.enqueues === 0) this.workspaceUsers.set(key, (this.workspaceUsers.get(key) ?? 0) + 1);
    // Stored once per content; a re-queue after Redis lost its data stores it again.
    if (l.enqueues > 0 || this.workspaceUsers.get(key) === 1)
      await this.cmd.set(key, this.opts.trust.sealBytes(l.packed.data, key));
    l.enqueues++;
    // A new job id each time: a worker may still run the lost job under the old id (BullMQ keys its locks by id).
    await l.queue.add('agent', l.envelope, {
      jobId: jobIdOf(l),
      attempts: 1,
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  private async limitPacking<T>(fn: () => Promise<T>): Promise<T> {
    while (this.packing >= PACKING_AT_ONCE) await new Promise<void>((r) => this.packWaiters.push(r));
    this.packing++;
    try {
      return await fn();
    } finally {
      this.packing--;
      this.packWaiters.shift()?.();
    }
  }

  private ensureReader(runId: string): void {
    if (this.readers.has(runId) || this.closed) return;
    const conn = connectRedis(this.opts.url, { name: 'coordinator-up', forBullmq: true });
    this.readers.set(runId, new StreamReader(conn, clusterKeys.up(runId), (e) => this.up(runId, e)));
  }

  /** Sends a message to the launch's worker, or keeps it until a worker took the launch. */
  private down(l: Launch, m: DownMessage): void {
    if (l.settled) return;
    if (!l.stream || !l.incarnation) {
      l.buffered.push(m);
      return;
    }
    this.send(l, l.incarnation, l.stream, m);
  }

  /** One down entry to a worker's stream, sealed for that launch and incarnation (sent at the turn's end, in order). */
  private send(l: Pick<Launch, 'runId' | 'id'>, incarnation: string, stream: string, m: DownMessage): void {
    const sealed = this.opts.trust.sealEntry('down', l.runId, l.id, incarnation, JSON.stringify(m));
    this.downBatch.add(stream, entryFields({ launch: l.id, incarnation, ...sealed }));
  }

  private up(runId: string, e: StreamEntry): void {
    const l = this.launches.get(e.launch);
    if (!l || l.settled) {
      if (this.ended.has(e.launch)) this.stopLateClaim({ runId, id: e.launch }, e);
      return;
    }
    const opened = this.upMessages(l, e);
    if (!opened.ok) {
      // Someone without the cluster secret speaks for this agent's worker (a forged result or
      // patch): nothing of it is used, the real worker (if any) is stopped, the instance fails.
      const why = `a message for ${l.task.id} in Redis cannot be trusted: ${opened.why}`;
      this.opts.onWarning?.(`${why}; the instance fails untrusted and nothing it sent is applied`);
      this.cancelIncarnation(l, 'its coordinator received a message it cannot trust for this agent');
      void l.queue.remove(jobIdOf(l)).catch(() => {});
      this.settle(
        l,
        failed(
          'untrusted',
          `${why} (is every worker using the same cluster secret? Is something else writing to this Redis?); its result was not applied`,
        ),
      );
      return;
    }
    for (const one of opened.messages) {
      if (l.settled) return;
      const m = parseUpMessage(one);
      if (m) this.upMessage(l, e, m);
    }
  }

  private upMessage(l: Launch, e: StreamEntry, m: UpMessage): void {
    if (m.k === 'claimed') {
      if (l.resultFrom !== undefined) {
        // A result is being applied: this launch is over, whatever another worker would do with it.
        this.send(l, e.incarnation, m.stream, { k: 'cancel', reason: LATE_CLAIM });
        return;
      }
      if (l.incarnation && l.incarnation !== e.incarnation && l.stream) {
        // Taken over: the previous worker is presumed dead; if it is not, it stops now.
        this.cancelIncarnation(l, 'another worker took this agent over');
      }
      l.incarnation = e.incarnation;
      l.stream = m.stream;
      l.worker = m.worker;
      const session = existsSync(l.task.sessionFile) ? readFileSync(l.task.sessionFile).toString('base64') : '';
      this.down(l, { k: 'start', session, checkpoint: l.lastCheckpoint });
      const queued = l.buffered.splice(0);
      for (const q of queued) this.down(l, q);
      return;
    }
    // Only the worker that holds the launch now is heard.
    if (e.incarnation !== l.incarnation) return;
    switch (m.k) {
      case 'port': {
        const msg = m.m as { type?: string };
        l.port.postMessage(msg && msg.type === 'hello' ? { ...msg, worker: l.worker } : msg);
        break;
      }
      case 'peer':
        l.peerPort?.postMessage({
          relay: m.m,
          ...(l.task.role === 'pair-worker' && l.lastCheckpoint ? { sync: l.lastCheckpoint } : {}),
        });
        break;
      case 'session':
        this.writeSession(l, m.offset, unb64(m.data), m.reset === true);
        break;
      case 'checkpoint':
        l.lastCheckpoint = m.patch;
        try {
          mkdirSync(dirname(l.checkpointFile), { recursive: true });
          replaceFileSync(l.checkpointFile, unb64(m.patch));
        } catch (err) {
          this.opts.onWarning?.(`cannot keep the workspace checkpoint of ${l.task.id}: ${(err as Error).message}`);
        }
        break;
      case 'result':
        l.resultFrom = e.incarnation;
        void this.finish(l, m.result, m.patch);
        break;
      case 'refused':
        this.settle(l, failed(m.failure, m.error));
        break;
    }
  }

  private writeSession(l: Launch, offset: number, bytes: Buffer, reset: boolean): void {
    try {
      if (reset && l.sessionFd !== undefined) {
        closeSync(l.sessionFd);
        l.sessionFd = undefined;
      }
      if (l.sessionFd === undefined) {
        mkdirSync(dirname(l.task.sessionFile), { recursive: true });
        l.sessionFd = openSync(l.task.sessionFile, reset || !existsSync(l.task.sessionFile) ? 'w' : 'r+');
      }
      writeSync(l.sessionFd, bytes, 0, bytes.length, offset);
    } catch (err) {
      this.opts.onWarning?.(`cannot write the session of ${l.task.id}: ${(err as Error).message}`);
    }
  }

  private async finish(l: Launch, raw: unknown, patchB64: string): Promise<void> {
    let result = raw as WorkerResult;
    const patch = unb64(patchB64);
    // The planner of a pair reviews the worker's files; the worker's patch is the pair's change.
    if (patch.length > 0 && l.task.role !== 'pair-planner') {
      const applied = await this.withPatchLock(l.task.cwd, () => applyWorkspacePatch(l.task.cwd, patch));
      if (!applied.ok) {
        result = {
          ok: false,
          failure: 'patch_conflict',
          error: `the changes ${l.task.id} made on worker ${l.worker ?? '?'} do not apply to ${l.task.cwd}: ${applied.error}`,
          usage: result.usage,
          ...(result.summary ? { summary: result.summary } : {}),
        };
      }
    }
    rmSync(l.checkpointFile, { force: true });
    this.settle(l, result);
  }

  private withPatchLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.patchLocks.get(dir) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    this.patchLocks.set(
      dir,
      next.catch(() => undefined),
    );
    return next;
  }

  /**
   * The messages of a worker's up entry once its MAC verifies (`why` when it does not). An entry
   * holds one message, or several the worker sent while its previous entry was in flight; a body
   * that is not JSON holds none.
   */
  private upMessages(
    l: Pick<Launch, 'runId'>,
    e: StreamEntry,
  ): { ok: true; messages: unknown[] } | { ok: false; why: string } {
    const opened = this.opts.trust.openEntry('up', l.runId, e.launch, e.incarnation, e.body, e.mac);
    if (!opened.ok) return opened;
    try {
      const value: unknown = JSON.parse(opened.value);
      return { ok: true, messages: Array.isArray(value) ? value : [value] };
    } catch {
      return { ok: true, messages: [] };
    }
  }

  /** A worker claimed a launch that ended here: it is told to stop (its entry verified first, like any other). */
  private stopLateClaim(l: Pick<Launch, 'runId' | 'id'>, e: StreamEntry): void {
    const opened = this.upMessages(l, e);
    if (!opened.ok) return;
    for (const one of opened.messages) {
      const m = parseUpMessage(one);
      if (m?.k === 'claimed') this.send(l, e.incarnation, m.stream, { k: 'cancel', reason: LATE_CLAIM });
    }
  }

  private settle(l: Launch, r: WorkerResult): void {
    if (l.settled) return;
    l.settled = true;
    this.cleanup(l);
    l.resolve(r);
  }

  private cleanup(l: Launch): void {
    this.launches.delete(l.id);
    this.ended.add(l.id);
    if (l.sessionFd !== undefined) closeSync(l.sessionFd);
    l.sessionFd = undefined;
    l.port.close();
    l.peerPort?.removeAllListeners('message');
    const key = l.data.workspace.key;
    const users = (this.workspaceUsers.get(key) ?? 1) - 1;
    if (users > 0) this.workspaceUsers.set(key, users);
    else {
      this.workspaceUsers.delete(key);
      void this.cmd.del(key).catch(() => {});
    }
  }

  /** Tells the worker that holds the launch now (if any) to stop its agent at once. */
  private cancelIncarnation(l: Launch, reason: string): void {
    if (!l.stream || !l.incarnation) return;
    this.send(l, l.incarnation, l.stream, { k: 'cancel', reason });
  }

  /** A hard abort: the worker stops the agent at once; the launch ends now, as a terminated thread does. */
  private hardStop(l: Launch, reason: string): void {
    if (l.settled) return;
    this.cancelIncarnation(l, reason);
    void l.queue.remove(jobIdOf(l)).catch(() => {});
    l.settled = true;
    this.cleanup(l);
    l.reject(new Error(reason));
  }

  private jobFailed(jobId: string, reason: string): void {
    const l = this.launches.get(jobId.split('.')[0] ?? '');
    // Only the launch's current job counts (an older one was replaced after a Redis restart).
    if (!l || l.settled || jobIdOf(l) !== jobId) return;
    // A worker with another cluster secret (or none): the reason says which; not a crash, not retried.
    if (reason.startsWith(UNVERIFIED_JOB)) {
      this.settle(
        l,
        failed(
          'error',
          `a worker could not verify the job of ${l.task.id} (${reason}); give the coordinator and every worker the same cluster secret`,
        ),
      );
      return;
    }
    this.settle(l, failed('crashed', `the worker running ${l.task.id} was lost: ${reason}`));
  }

  /** After Redis came back: launches whose job vanished (Redis lost its data) are queued again. */
  private async recover(): Promise<void> {
    for (const l of [...this.launches.values()]) {
      // A launch whose result is being applied has ended: its job is not needed again.
      if (l.settled || l.resultFrom !== undefined) continue;
      try {
        const job = await l.queue.getJob(jobIdOf(l));
        if (job) continue;
        this.opts.onWarning?.(`Redis lost the job of ${l.task.id} (restarted without its data?); queued it again`);
        await this.enqueue(l);
      } catch (err) {
        this.opts.onWarning?.(
          `cannot check the job of ${l.task.id} after a Redis reconnect: ${(err as Error).message}`,
        );
      }
    }
  }

  /** Fails every launch still running (the run is over) and closes the connections. */
  async close(): Promise<void> {
    this.closed = true;
    for (const l of [...this.launches.values()]) this.hardStop(l, 'the coordinator closed');
    // The cancels just sent reach the workers before the connection goes.
    await this.downBatch.flush();
    await Promise.all([...this.readers.values()].map((r) => r.stop()));
    // What is left of the runs' up streams (entries read since the last trim) is never read again.
    await Promise.all([...this.readers.keys()].map((runId) => this.cmd.del(clusterKeys.up(runId)).catch(() => 0)));
    await Promise.all(this.events.map((e) => e.close().catch(() => {})));
    await this.agents.close().catch(() => {});
    await this.partners.close().catch(() => {});
    this.cmd.disconnect();
    for (const c of this.connections) c.disconnect();
  }
}

/** Why a worker that claimed an ended launch stops. */
const LATE_CLAIM = 'this agent already ended (its job was queued again or taken late); nothing to run';

function jobIdOf(l: Launch): string {
  return `${l.id}.${l.enqueues}`;
}

function failed(failure: FailureClass, error: string): WorkerResult {
  return { ok: false, failure, error, usage: zeroUsage() };
}
