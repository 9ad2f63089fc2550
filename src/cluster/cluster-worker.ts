// `orchestrate worker`: a long-lived process that takes agent attempts from the distributed queue
// and runs each in its own piscina pool with the unchanged loop and session core (the same
// worker module as a local run). It shares nothing with the coordinator but Redis: the workspace
// arrives packed and is unpacked into this worker's workdir, the session and workspace changes
// stream back as they happen, and the result goes back with the patch of the workspace.
//
// A worker killed with kill -9 stops renewing its jobs' locks; BullMQ's stalled-job check (run
// by the other workers) puts those jobs back in the queue after `lockMs`, and another worker
// takes them: the coordinator sends it the session and workspace checkpoint streamed so far, and
// the agent continues as a local resume would.
//
// Trust (cluster-trust.ts, worker-policy.ts): a job whose MAC does not verify with the cluster
// secret is dropped unrun, and so is a verified job replayed after its launch finished; down entries that do not verify are ignored; a verified job that asks
// for what this worker's flags do not allow (another base URL, no sandbox, network, extensions)
// fails its instance with the flag named; shipped files land only inside the job's folder.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Piscina } from 'piscina';
import { loadScriptFile } from '../ai/scripted-script.js';
import type { InstanceTask } from '../orchestrator/execution/instance-task.js';
import { createWorkerPool } from '../orchestrator/execution/pool.js';
import { zeroUsage } from '../run/usage-summary.js';
import { WorkerResultSchema, type WorkerResult } from '../orchestrator/protocol.js';
import {
  AGENTS_QUEUE,
  b64,
  BULLMQ_PREFIX,
  clusterKeys,
  DownMessageSchema,
  entryFields,
  JobDataSchema,
  PARTNERS_QUEUE,
  unb64,
  UNVERIFIED_JOB,
  workspaceDigestOf,
  type DownMessage,
  type JobData,
  type StreamEntry,
  type UpMessage,
} from './cluster-wire.js';
import type { ClusterTrust } from './cluster-trust.js';
import { connectRedis, type RedisTarget } from './redis-connection.js';
import { launchFinished, markLaunchFinished } from './finished-launches.js';
import { policyRefusal, STRICT_POLICY, writeShippedFile, type WorkerPolicy } from './worker-policy.js';
import { readRunLeaseToken } from './redis-run-lease.js';
import { mayHaveChangedFiles, SessionTail } from './session-tail.js';
import { StreamReader } from './stream-reader.js';
import { UpBatcher } from './up-batcher.js';
import { WORKER_BEAT_MS, type WorkerBeat } from './worker-roster.js';
import {
  applyWorkspacePatch,
  forgetWorkspace,
  resetToBaseline,
  unpackWorkspace,
  workspaceDiff,
} from './workspace-transfer.js';

export interface ClusterWorkerOptions {
  url: RedisTarget;
  /** The cluster secret's keys (or ClusterTrust.insecure() with --insecure-no-secret). */
  trust: ClusterTrust;
  /** What this worker agrees to run (default: STRICT_POLICY, nothing extra allowed). */
  policy?: WorkerPolicy;
  /** Shown in events, `show` and the report (default: the host name). */
  name?: string;
  /** Agents this worker runs at once (plus as many pair planners). */
  concurrency: number;
  /** Where workspaces and sessions live while their agents run. */
  workdir: string;
  /** This worker's environment: its own API key and base URL. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A job whose worker stops renewing it (killed) is taken over after about this long (default 15 s). */
  lockMs?: number;
  /** The queues served (default both): a worker can be kept for pair planners only, or for everything but them. */
  queues?: ('agents' | 'partners')[];
  /** How often the queue looks for such jobs (default: a third of lockMs). */
  stalledIntervalMs?: number;
  /** How often a running agent's run lease is checked (default 2 s); a job of the run's new holder stops the old holder's agents at once. */
  fenceMs?: number;
  log?: (line: string) => void;
}

/** Longest wait for the coordinator's start after claiming a job: past it the coordinator is gone. */
const START_TIMEOUT_MS = 60_000;
/** How often a running agent's session file is checked for new bytes. */
const TAIL_MS = 100;
/** How often a job's run lease is checked (a coordinator that lost its run: its agents stop). */
const FENCE_MS = 2_000;
/** Why the agents of a coordinator that lost its run stop. */
const ORPHANED = 'its coordinator no longer holds the run';

interface Running {
  runId: string;
  launch: string;
  incarnation: string;
  /** The lease token of the coordinator that queued the job. */
  leaseToken?: string;
  onDown(m: DownMessage): void;
}

export class ClusterWorker {
  readonly id: string;
  readonly name: string;
  private readonly stream: string;
  private readonly cmd: Redis;
  private readonly reader: StreamReader;
  private readonly pool: Piscina;
  private readonly workers: Worker[] = [];
  /** The queue workers' connections: BullMQ leaves a connection it was given open, so we close them. */
  private readonly connections: Redis[] = [];
  private readonly running = new Map<string, Running>();
  private readonly log: (line: string) => void;
  private readonly env: Readonly<Record<string, string | undefined>>;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly opts: ClusterWorkerOptions) {
    this.name = opts.name ?? hostname();
    this.id = `${this.name}-${randomBytes(4).toString('hex')}`;
    this.stream = clusterKeys.down(this.id);
    this.log = opts.log ?? (() => {});
    this.env = opts.env ?? process.env;
    this.cmd = connectRedis(opts.url, { name: `worker-${this.name}`, forBullmq: true });
    this.reader = new StreamReader(
      connectRedis(opts.url, { name: `worker-${this.name}-down`, forBullmq: true }),
      this.stream,
      (e) => this.onDown(e),
    );
    // Every agent on a thread of its own: a cancel terminates exactly that agent's thread.
    this.pool = createWorkerPool({
      concurrency: opts.concurrency,
      pairSlots: opts.concurrency,
      agentsPerThread: 1,
      // One warm thread; more start as agents come and stay for the next ones (piscina's idle timeout).
      // Starting a thread per slot up front made a 4-slot worker miss its 2 s job locks under load.
      minThreads: 1,
      onError: (err) => this.log(`worker thread error: ${String(err)}`),
    });
    const lockDuration = opts.lockMs ?? 15_000;
    for (const name of opts.queues ?? [AGENTS_QUEUE, PARTNERS_QUEUE]) {
      const connection = connectRedis(opts.url, { name: `worker-${this.name}-${name}`, forBullmq: true });
      this.connections.push(connection);
      const w = new Worker(name, (job: Job) => this.process(job), {
        connection,
        prefix: BULLMQ_PREFIX,
        concurrency: opts.concurrency,
        lockDuration,
        stalledInterval: opts.stalledIntervalMs ?? Math.max(500, Math.floor(lockDuration / 3)),
        // A job whose worker died is taken over again and again (each takeover continues the session).
        maxStalledCount: 10,
      });
      w.on('error', (err) => this.log(`queue ${name}: ${err.message}`));
      this.workers.push(w);
    }
    const beat = (): void => {
      void this.cmd
        .hset(
          clusterKeys.workers(),
          this.id,
          JSON.stringify({
            name: this.name,
            host: hostname(),
            pid: process.pid,
            concurrency: opts.concurrency,
            at: Date.now(),
            running: this.running.size,
          } satisfies WorkerBeat),
        )
        .catch(() => {});
    };
    beat();
    this.heartbeat = setInterval(beat, WORKER_BEAT_MS);
    this.heartbeat.unref();
  }

  /** One up entry: a message, or several sent while the previous entry was in flight (UpBatcher). */
  private up(runId: string, launch: string, incarnation: string, ms: UpMessage[]): Promise<unknown> {
    const body = JSON.stringify(ms.length === 1 ? ms[0] : ms);
    const sealed = this.opts.trust.sealEntry('up', runId, launch, incarnation, body);
    return this.cmd.xadd(clusterKeys.up(runId), '*', ...entryFields({ launch, incarnation, ...sealed }));
  }

  private onDown(e: StreamEntry): void {
    const r = this.running.get(`${e.launch}/${e.incarnation}`);
    if (!r) return;
    const opened = this.opts.trust.openEntry('down', r.runId, e.launch, e.incarnation, e.body, e.mac);
    if (!opened.ok) {
      this.log(`ignored a message for launch ${e.launch}: ${opened.why}`);
      return;
    }
    let parsed: ReturnType<typeof DownMessageSchema.safeParse>;
    try {
      parsed = DownMessageSchema.safeParse(JSON.parse(opened.value));
    } catch {
      return;
    }
    if (parsed.success) r.onDown(parsed.data);
  }

  /** One job: claim it, wait for the start, run the agent, stream everything back, send the result. */
  private async process(job: Job): Promise<string> {
    const opened = this.opts.trust.openJob(job.data);
    if (!opened.ok) {
      this.log(`dropped job ${job.id ?? '?'} unrun: it cannot be verified: ${opened.why}`);
      // Failed, not completed: a real coordinator whose secret differs from ours learns why (jobFailed).
      throw new UnrecoverableError(`${UNVERIFIED_JOB} on worker ${this.name}: ${opened.why}`);
    }
    const parsed = JobDataSchema.safeParse(opened.value.job);
    const envelope = opened.value.envelope;
    if (!parsed.success || parsed.data.runId !== envelope.runId || parsed.data.launchId !== envelope.launchId) {
      this.log(`dropped job ${job.id ?? '?'} unrun: its data is malformed`);
      return 'malformed job';
    }
    const data = parsed.data;
    if (await launchFinished(this.cmd, data)) {
      this.log(
        `dropped job ${job.id ?? '?'} (${String(data.task.id)} of run ${data.runId}) unrun: its launch ${data.launchId} already finished; a replayed job takes no slot`,
      );
      return 'replayed';
    }
    // Another coordinator holds the run now: this job's coordinator is gone. (No lease at all is not
    // that: a Redis that lost its data loses the lease too, until the holder's next heartbeat.)
    const holder = data.leaseToken ? await this.leaseHolder(data.runId) : undefined;
    if (holder !== undefined && holder !== data.leaseToken) {
      this.log(`dropped ${String(data.task.id)} of run ${data.runId}: ${ORPHANED}`);
      return 'orphaned';
    }
    // A job of the run's holder now: the agents here of an earlier holder (a coordinator killed,
    // its run resumed) stop now rather than at their next lease check.
    if (holder !== undefined)
      for (const r of this.running.values())
        if (r.runId === data.runId && r.leaseToken !== undefined && r.leaseToken !== holder)
          r.onDown({ k: 'cancel', reason: ORPHANED });
    const incarnation = randomUUID();
    const dir = join(
      this.opts.workdir,
      data.runId,
      `${String(data.task.id).replace(/[^\w.@-]/g, '_')}-${incarnation.slice(0, 8)}`,
    );
    try {
      const outcome = await this.runJob(data, incarnation, dir);
      this.log(`${String(data.task.id)} (job ${job.id ?? '?'}): ${outcome}`);
      // Without a start the coordinator may queue the launch again (after Redis lost the job): not finished.
      if (outcome !== 'no start') await markLaunchFinished(this.cmd, data);
      return outcome;
    } catch (err) {
      this.log(`${String(data.task.id)} (job ${job.id ?? '?'}) failed: ${(err as Error).message}`);
      await markLaunchFinished(this.cmd, data);
      throw err;
    } finally {
      this.running.delete(`${data.launchId}/${incarnation}`);
      forgetWorkspace(join(dir, 'workspace'));
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private async runJob(data: JobData, incarnation: string, dir: string): Promise<string> {
    const launch = data.launchId;
    const batcher = new UpBatcher((ms) => this.up(data.runId, launch, incarnation, ms), data.readsBatches === true);
    const send = (m: UpMessage): Promise<unknown> => batcher.send(m);
    // From the agent's outbox: not waited for, so what comes meanwhile shares the next entry (order is kept).
    const post = (m: UpMessage): void => void batcher.send(m).catch(() => {});
    const stop = new AbortController();
    let started: ((m: Extract<DownMessage, { k: 'start' }>) => void) | undefined;
    const start = new Promise<Extract<DownMessage, { k: 'start' }> | undefined>((resolve) => {
      started = resolve;
      setTimeout(() => resolve(undefined), START_TIMEOUT_MS).unref();
      // A cancel before the start (the coordinator ended this launch) frees the slot now, not at the timeout.
      stop.signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    const toAgent: DownMessage[] = [];
    let agentPort: MessagePort | undefined;
    let peerPort: MessagePort | undefined;
    const ws = join(dir, 'workspace');
    const pendingSync: Promise<unknown>[] = [];
    this.running.set(`${launch}/${incarnation}`, {
      runId: data.runId,
      launch,
      incarnation,
      ...(data.leaseToken ? { leaseToken: data.leaseToken } : {}),
      onDown: (m) => {
        if (m.k === 'start') started?.(m);
        else if (m.k === 'cancel') stop.abort(new Error(m.reason));
        else if (agentPort) deliver(m);
        else toAgent.push(m);
      },
    });
    const deliver = (m: DownMessage): void => {
      if (m.k === 'port') agentPort?.postMessage(m.m);
      else if (m.k === 'peer') {
        // The partner's files first, so the planner reviews what the worker wrote.
        const sync = m.sync ? applySync(ws, unb64(m.sync)) : Promise.resolve();
        pendingSync.push(sync);
        void sync.then(() => peerPort?.postMessage(m.m));
      }
    };
    // What this worker's operator allows (a verified job still runs here, with this machine's key).
    const refusal = policyRefusal(data.task, this.opts.policy ?? STRICT_POLICY, this.env.ANTHROPIC_BASE_URL);
    // The workspace is fetched and unpacked while the claim and the coordinator's start travel.
    const unpacking: Promise<Error | undefined> = refusal
      ? Promise.resolve(undefined)
      : this.unpackJobWorkspace(data, dir, ws).then(
          () => undefined,
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        );
    let go: Extract<DownMessage, { k: 'start' }> | undefined;
    try {
      await send({ k: 'claimed', worker: this.name, stream: this.stream });
      go = await start;
    } finally {
      // The job folder is removed when this returns: never while the unpack still writes into it.
      if (!go || stop.signal.aborted) await unpacking;
    }
    if (stop.signal.aborted) return 'cancelled';
    if (!go) {
      this.log(`no start for ${String(data.task.id)}: its coordinator did not answer`);
      return 'no start';
    }
    if (refusal) {
      this.log(`refused ${String(data.task.id)}: ${refusal}`);
      await send({ k: 'refused', failure: 'error', error: `worker ${this.name} refused the job: ${refusal}` });
      return 'refused';
    }
    // The workspace as packed, then the changes of earlier workers of this launch.
    const sessionFile = join(dir, 'session.jsonl');
    try {
      const failed = await unpacking;
      if (failed) throw failed;
      if (go.checkpoint) {
        const restored = await applyWorkspacePatch(ws, unb64(go.checkpoint));
        if (!restored.ok) throw new Error(`the checkpoint of the previous worker does not apply: ${restored.error}`);
      }
      // A fresh attempt has no session yet: the agent creates it (an empty file would read as a broken one).
      if (go.session) writeFileSync(sessionFile, unb64(go.session));
    } catch (err) {
      await send({
        k: 'refused',
        failure: 'workspace',
        error: `worker ${this.name} could not prepare the workspace: ${(err as Error).message}`,
      });
      return 'refused';
    }
    let task: Omit<InstanceTask, 'port' | 'peerPort'>;
    try {
      task = this.localTask(data, dir, ws, sessionFile);
    } catch (err) {
      this.log(`refused ${String(data.task.id)}: ${(err as Error).message}`);
      await send({
        k: 'refused',
        failure: 'workspace',
        error: `worker ${this.name} could not place the agent's files: ${(err as Error).message}`,
      });
      return 'refused';
    }
    const channel = new MessageChannel();
    agentPort = channel.port1;
    const transferList: MessagePort[] = [channel.port2];
    let peerChannel: MessageChannel | undefined;
    if (data.hasPeer) {
      peerChannel = new MessageChannel();
      peerPort = peerChannel.port1;
      transferList.push(peerChannel.port2);
    }
    const full: InstanceTask = {
      ...task,
      port: channel.port2,
      ...(peerChannel ? { peerPort: peerChannel.port2 } : {}),
    };
    // Everything goes up through one ordered outbox: session bytes, checkpoints and port messages
    // reach the coordinator in the order they happened. Session bytes that carry a tool result go
    // after a checkpoint of the workspace, so whatever session the coordinator holds, it also holds
    // the files that session describes (a takeover restores both).
    let outbox: Promise<unknown> = Promise.resolve();
    const enqueue = (step: () => Promise<unknown>): Promise<unknown> =>
      (outbox = outbox.then(step).catch(() => undefined));
    const tail = new SessionTail(sessionFile);
    let lastPatch = '';
    const checkpoint = async (): Promise<void> => {
      // A checkpoint that cannot be measured is skipped, never sent empty (that would tell a
      // takeover "nothing changed"); the last good one stands and the final diff fails closed.
      const diff = await workspaceDiff(ws).catch(() => undefined);
      if (!diff) return;
      const patch = b64(diff);
      if (patch === lastPatch) return;
      lastPatch = patch;
      post({ k: 'checkpoint', patch });
    };
    const flushSession = async (): Promise<void> => {
      const chunk = tail.read();
      if (!chunk) return;
      if (mayHaveChangedFiles(chunk.bytes)) await checkpoint();
      post({
        k: 'session',
        offset: chunk.offset,
        data: b64(chunk.bytes),
        ...(chunk.reset ? { reset: true } : {}),
      });
    };
    let flushing = false;
    const tick = setInterval(() => {
      if (flushing) return;
      flushing = true;
      void enqueue(flushSession).finally(() => (flushing = false));
    }, TAIL_MS);
    let portDone: () => void = () => {};
    const done = new Promise<void>((r) => (portDone = r));
    agentPort.on('message', (m: { type?: string }) => {
      // The session written so far goes first: a message may make the coordinator read it.
      void enqueue(async () => {
        await flushSession();
        post({ k: 'port', m });
        if (m?.type === 'done') portDone();
      });
    });
    agentPort.once('close', () => void enqueue(async () => portDone()));
    // Two ports keep no order: the planner's last verdict may arrive after the thread's result. Sent
    // after it, the coordinator (launch settled) drops it and the pair's worker waits forever; so the
    // result waits for the thread's close of the pair channel, which comes after all it sent there.
    const peerClosed = new Promise<void>((r) => (peerPort ? peerPort.once('close', () => r()) : r()));
    peerPort?.on('message', (m: unknown) => {
      // A pair worker's message to its planner goes after a fresh checkpoint (the planner syncs from it).
      void enqueue(async () => {
        await flushSession();
        await checkpoint();
        post({ k: 'peer', m });
      });
    });
    for (const m of toAgent.splice(0)) deliver(m);
    const fence = data.leaseToken
      ? setInterval(() => {
          void this.leaseHolder(data.runId).then(
            (t) => {
              if (t !== undefined && t !== data.leaseToken) stop.abort(new Error(ORPHANED));
            },
            () => {},
          );
        }, this.opts.fenceMs ?? FENCE_MS)
      : undefined;
    let result: WorkerResult;
    try {
      const raw = await this.pool.run(full, { transferList, signal: stop.signal });
      const r = WorkerResultSchema.safeParse(raw);
      result = r.success
        ? r.data
        : { ok: false, failure: 'crashed', error: 'the worker returned a malformed result', usage: zeroUsage() };
      await Promise.race([Promise.all([done, peerClosed]), new Promise((r2) => setTimeout(r2, 10_000).unref())]);
    } catch (err) {
      if (stop.signal.aborted) {
        clearInterval(tick);
        if (fence) clearInterval(fence);
        return 'cancelled';
      }
      result = {
        ok: false,
        failure: 'crashed',
        error: `its worker thread on ${this.name} died: ${(err as Error).message}`,
        usage: zeroUsage(),
      };
    } finally {
      clearInterval(tick);
      if (fence) clearInterval(fence);
    }
    await Promise.all(pendingSync).catch(() => {});
    await enqueue(flushSession);
    // The patch is the work: a diff that fails must fail the attempt (class workspace), never
    // report success with an empty patch (the coordinator would land nothing and call it done).
    let patch: Buffer = Buffer.alloc(0);
    try {
      patch = await workspaceDiff(ws);
    } catch (err) {
      if (result.ok)
        result = {
          ok: false,
          failure: 'workspace',
          error: `its workspace on ${this.name} could not be measured after the agent ran: ${(err as Error).message}`,
          usage: result.usage,
          ...(result.summary !== undefined ? { summary: result.summary } : {}),
        };
    }
    await send({ k: 'result', result, patch: b64(patch) });
    agentPort.close();
    peerPort?.close();
    return result.ok ? 'done' : `failed: ${result.failure}`;
  }

  /** The job's packed workspace from Redis, checked against its key's digest, unpacked into `ws`. */
  private async unpackJobWorkspace(data: JobData, dir: string, ws: string): Promise<void> {
    mkdirSync(dir, { recursive: true });
    const stored = await this.cmd.getBuffer(data.workspace.key);
    if (!stored) throw new Error('its packed workspace is no longer in Redis');
    let bytes: Buffer;
    try {
      bytes = this.opts.trust.openBytes(stored, data.workspace.key);
    } catch {
      throw new Error(
        'its packed workspace in Redis does not decrypt with the cluster secret (replaced by someone else?)',
      );
    }
    if (createHash('sha256').update(bytes).digest('hex') !== workspaceDigestOf(data.workspace.key))
      throw new Error('its packed workspace in Redis is not the one the coordinator packed (its digest differs)');
    await unpackWorkspace({ ...data.workspace, data: bytes }, ws);
  }

  /** The job's task with this machine's paths, API key and shipped files. */
  private localTask(
    data: JobData,
    dir: string,
    ws: string,
    sessionFile: string,
  ): Omit<InstanceTask, 'port' | 'peerPort'> {
    const t = data.task as unknown as Omit<InstanceTask, 'port' | 'peerPort'>;
    const filesRoot = join(dir, 'files');
    mkdirSync(filesRoot, { recursive: true });
    // Refuses absolute paths, `..` parts and folders that resolve outside filesRoot (worker-policy.ts).
    for (const f of data.files) writeShippedFile(filesRoot, f.path, unb64(f.data));
    const relocate = (p: string): string => {
      // A shipped file or folder: under the coordinator's path without its leading '/'.
      const local = join(filesRoot, p.replace(/^\/+/, ''));
      return local.startsWith(`${filesRoot}/`) && existsSync(local) ? local : p;
    };
    const key = this.env.ANTHROPIC_API_KEY;
    // The worker's own endpoint wins; the job's only with --allow-base-url (checked before this).
    const baseUrl =
      this.env.ANTHROPIC_BASE_URL ?? ((this.opts.policy ?? STRICT_POLICY).allowBaseUrl ? t.baseUrl : undefined);
    // The worker's own credentials join the job's secrets: the session it writes (and streams to
    // the coordinator) never shows its API key or the cluster secret.
    const clusterSecret = this.opts.trust.secretToRedact;
    const secrets = [
      ...(t.secrets ?? []),
      ...(key ? [{ name: 'ANTHROPIC_API_KEY', value: key }] : []),
      ...(clusterSecret ? [{ name: 'ORCHESTRATE_CLUSTER_SECRET', value: clusterSecret }] : []),
    ];
    return {
      ...t,
      cwd: ws,
      sessionFile,
      agent: {
        ...t.agent,
        skills: t.agent.skills.map(relocate),
        extensions: t.agent.extensions.map(relocate),
        ...(t.agent.script ? scripted(relocate(t.agent.script)) : {}),
      },
      ...(key ? { apiKey: key } : {}),
      ...(baseUrl ? { baseUrl } : {}),
      secrets,
      // The workdir (other agents' workspaces and every session here) is hidden from this agent's
      // commands, as the run folder is in a local run; its own workspace, inside, stays reachable.
      ...(t.sandbox ? { sandbox: { ...t.sandbox, hide: [this.opts.workdir] } } : {}),
    };
  }

  /** The lease token of the run's holder now; a token not made with the cluster secret counts as no holder. */
  private async leaseHolder(runId: string): Promise<string | undefined> {
    const token = await readRunLeaseToken(this.cmd, runId);
    if (token === undefined || this.opts.trust.leaseTokenValid(runId, token)) return token;
    this.log(`ignored the lease of run ${runId} in Redis: its token was not made with the cluster secret`);
    return undefined;
  }

  /** SIGTERM: takes no new jobs, lets the running agents finish, then closes everything. */
  async drain(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    clearInterval(this.heartbeat);
    await this.cmd.hdel(clusterKeys.workers(), this.id).catch(() => {});
    await this.reader.stop();
    await this.cmd.del(this.stream).catch(() => 0);
    await this.pool.destroy().catch(() => {});
    this.cmd.disconnect();
    for (const c of this.connections) c.disconnect();
  }

  /** Agents running now. */
  get activeCount(): number {
    return this.running.size;
  }
}

/** A scripted agent's script, parsed here once (as the coordinator does for local threads); a bad file is reported by the thread. */
function scripted(path: string): { script: string; scriptData?: ReturnType<typeof loadScriptFile> } {
  try {
    return { script: path, scriptData: loadScriptFile(path) };
  } catch {
    return { script: path };
  }
}

/** Applies a partner's workspace patch over the packed state: reset to the baseline, then apply. */
async function applySync(ws: string, patch: Buffer): Promise<void> {
  if (!existsSync(ws)) return;
  // best effort: the apply below says whether it fits
  await resetToBaseline(ws);
  await applyWorkspacePatch(ws, patch);
}
