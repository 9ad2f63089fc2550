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
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, openSync, readSync, closeSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Piscina } from 'piscina';
import { loadScriptFile } from '../ai/scripted-script.js';
import type { InstanceTask } from '../orchestrator/instance-task.js';
import { createWorkerPool } from '../orchestrator/pool.js';
import { zeroUsage } from '../run/usage-summary.js';
import { WorkerResultSchema, type WorkerResult } from '../orchestrator/protocol.js';
import { AGENTS_QUEUE, b64, BULLMQ_PREFIX, clusterKeys, DownMessageSchema, entryFields, JobDataSchema, PARTNERS_QUEUE, unb64, type DownMessage, type JobData, type StreamEntry, type UpMessage } from './cluster-wire.js';
import { connectRedis } from './redis-connection.js';
import { readRunLeaseToken } from './redis-run-lease.js';
import { StreamReader } from './stream-reader.js';
import { applyWorkspacePatch, unpackWorkspace, workspaceDiff, WORKSPACE_BASE_REF } from './workspace-transfer.js';

const execFileAsync = promisify(execFile);

export interface ClusterWorkerOptions {
  url: string;
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
  log?: (line: string) => void;
}

/** Longest wait for the coordinator's start after claiming a job: past it the coordinator is gone. */
const START_TIMEOUT_MS = 60_000;
/** How often a running agent's session file is checked for new bytes. */
const TAIL_MS = 100;
/** How often a job's run lease is checked (a coordinator that lost its run: its agents stop). */
const FENCE_MS = 2_000;

interface Running {
  launch: string;
  incarnation: string;
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
    this.reader = new StreamReader(connectRedis(opts.url, { name: `worker-${this.name}-down`, forBullmq: true }), this.stream, (e) => this.onDown(e));
    // Every agent on a thread of its own: a cancel terminates exactly that agent's thread.
    this.pool = createWorkerPool({ concurrency: opts.concurrency, pairSlots: opts.concurrency, agentsPerThread: 1, minThreads: 1, onError: (err) => this.log(`worker thread error: ${String(err)}`) });
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
        .hset(clusterKeys.workers(), this.id, JSON.stringify({ name: this.name, host: hostname(), pid: process.pid, concurrency: opts.concurrency, at: Date.now(), running: this.running.size }))
        .catch(() => {});
    };
    beat();
    this.heartbeat = setInterval(beat, 5_000);
    this.heartbeat.unref();
  }

  private up(runId: string, launch: string, incarnation: string, m: UpMessage): Promise<unknown> {
    return this.cmd.xadd(clusterKeys.up(runId), '*', ...entryFields({ launch, incarnation, body: JSON.stringify(m) }));
  }

  private onDown(e: StreamEntry): void {
    const r = this.running.get(`${e.launch}/${e.incarnation}`);
    if (!r) return;
    let parsed;
    try {
      parsed = DownMessageSchema.safeParse(JSON.parse(e.body));
    } catch {
      return;
    }
    if (parsed.success) r.onDown(parsed.data);
  }

  /** One job: claim it, wait for the start, run the agent, stream everything back, send the result. */
  private async process(job: Job): Promise<string> {
    const parsed = JobDataSchema.safeParse(job.data);
    if (!parsed.success) return 'malformed job';
    const data = parsed.data;
    // Another coordinator holds the run now: this job's coordinator is gone. (No lease at all is not
    // that: a Redis that lost its data loses the lease too, until the holder's next heartbeat.)
    const holder = data.leaseToken ? await readRunLeaseToken(this.cmd, data.runId) : undefined;
    if (holder !== undefined && holder !== data.leaseToken) {
      this.log(`dropped ${String(data.task.id)} of run ${data.runId}: its coordinator no longer holds the run`);
      return 'orphaned';
    }
    const incarnation = randomUUID();
    const dir = join(this.opts.workdir, data.runId, `${String(data.task.id).replace(/[^\w.@-]/g, '_')}-${incarnation.slice(0, 8)}`);
    try {
      const outcome = await this.runJob(data, incarnation, dir);
      this.log(`${String(data.task.id)} (job ${job.id ?? '?'}): ${outcome}`);
      return outcome;
    } catch (err) {
      this.log(`${String(data.task.id)} (job ${job.id ?? '?'}) failed: ${(err as Error).message}`);
      throw err;
    } finally {
      this.running.delete(`${data.launchId}/${incarnation}`);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private async runJob(data: JobData, incarnation: string, dir: string): Promise<string> {
    const launch = data.launchId;
    const send = (m: UpMessage): Promise<unknown> => this.up(data.runId, launch, incarnation, m);
    const stop = new AbortController();
    let started: ((m: Extract<DownMessage, { k: 'start' }>) => void) | undefined;
    const start = new Promise<Extract<DownMessage, { k: 'start' }> | undefined>((resolve) => {
      started = resolve;
      setTimeout(() => resolve(undefined), START_TIMEOUT_MS).unref();
    });
    const toAgent: DownMessage[] = [];
    let agentPort: MessagePort | undefined;
    let peerPort: MessagePort | undefined;
    const ws = join(dir, 'workspace');
    const pendingSync: Promise<unknown>[] = [];
    this.running.set(`${launch}/${incarnation}`, {
      launch,
      incarnation,
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
    await send({ k: 'claimed', worker: this.name, stream: this.stream });
    const go = await start;
    if (!go) {
      this.log(`no start for ${String(data.task.id)}: its coordinator did not answer`);
      return 'no start';
    }
    if (stop.signal.aborted) return 'cancelled';
    // The workspace as packed, then the changes of earlier workers of this launch.
    const sessionFile = join(dir, 'session.jsonl');
    try {
      mkdirSync(dir, { recursive: true });
      const bytes = await this.cmd.getBuffer(data.workspace.key);
      if (!bytes) throw new Error('its packed workspace is no longer in Redis');
      await unpackWorkspace({ ...data.workspace, data: bytes }, ws);
      if (go.checkpoint) {
        const restored = await applyWorkspacePatch(ws, unb64(go.checkpoint));
        if (!restored.ok) throw new Error(`the checkpoint of the previous worker does not apply: ${restored.error}`);
      }
      // A fresh attempt has no session yet: the agent creates it (an empty file would read as a broken one).
      if (go.session) writeFileSync(sessionFile, unb64(go.session));
    } catch (err) {
      await send({ k: 'refused', failure: 'workspace', error: `worker ${this.name} could not prepare the workspace: ${(err as Error).message}` });
      return 'refused';
    }
    const task = this.localTask(data, dir, ws, sessionFile);
    const channel = new MessageChannel();
    agentPort = channel.port1;
    const transferList: MessagePort[] = [channel.port2];
    let peerChannel: MessageChannel | undefined;
    if (data.hasPeer) {
      peerChannel = new MessageChannel();
      peerPort = peerChannel.port1;
      transferList.push(peerChannel.port2);
    }
    const full: InstanceTask = { ...task, port: channel.port2, ...(peerChannel ? { peerPort: peerChannel.port2 } : {}) };
    // Everything goes up through one ordered outbox: session bytes, checkpoints and port messages
    // reach the coordinator in the order they happened. Session bytes that carry a tool result go
    // after a checkpoint of the workspace, so whatever session the coordinator holds, it also holds
    // the files that session describes (a takeover restores both).
    let outbox: Promise<unknown> = Promise.resolve();
    const enqueue = (step: () => Promise<unknown>): Promise<unknown> => (outbox = outbox.then(step).catch(() => undefined));
    const tail = new SessionTail(sessionFile);
    let lastPatch = '';
    const checkpoint = async (): Promise<void> => {
      const patch = b64(await workspaceDiff(ws).catch(() => Buffer.alloc(0)));
      if (patch === lastPatch) return;
      lastPatch = patch;
      await send({ k: 'checkpoint', patch });
    };
    const flushSession = async (): Promise<void> => {
      const chunk = tail.read();
      if (!chunk) return;
      if (mayHaveChangedFiles(chunk.bytes)) await checkpoint();
      await send({ k: 'session', offset: chunk.offset, data: b64(chunk.bytes), ...(chunk.reset ? { reset: true } : {}) });
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
        await send({ k: 'port', m });
        if (m?.type === 'done') portDone();
      });
    });
    agentPort.once('close', () => void enqueue(async () => portDone()));
    peerPort?.on('message', (m: unknown) => {
      // A pair worker's message to its planner goes after a fresh checkpoint (the planner syncs from it).
      void enqueue(async () => {
        await flushSession();
        await checkpoint();
        await send({ k: 'peer', m });
      });
    });
    for (const m of toAgent.splice(0)) deliver(m);
    const fence = data.leaseToken
      ? setInterval(() => {
          void readRunLeaseToken(this.cmd, data.runId).then(
            (t) => {
              if (t !== undefined && t !== data.leaseToken) stop.abort(new Error('its coordinator no longer holds the run'));
            },
            () => {},
          );
        }, FENCE_MS)
      : undefined;
    let result: WorkerResult;
    try {
      const raw = await this.pool.run(full, { transferList, signal: stop.signal });
      const r = WorkerResultSchema.safeParse(raw);
      result = r.success ? r.data : { ok: false, failure: 'crashed', error: 'the worker returned a malformed result', usage: zeroUsage() };
      await Promise.race([done, new Promise((r2) => setTimeout(r2, 10_000).unref())]);
    } catch (err) {
      if (stop.signal.aborted) {
        clearInterval(tick);
        if (fence) clearInterval(fence);
        return 'cancelled';
      }
      result = { ok: false, failure: 'crashed', error: `its worker thread on ${this.name} died: ${(err as Error).message}`, usage: zeroUsage() };
    } finally {
      clearInterval(tick);
      if (fence) clearInterval(fence);
    }
    await Promise.all(pendingSync).catch(() => {});
    await enqueue(flushSession);
    const patch = await workspaceDiff(ws).catch(() => Buffer.alloc(0));
    await send({ k: 'result', result, patch: b64(patch) });
    agentPort.close();
    peerPort?.close();
    return result.ok ? 'done' : `failed: ${result.failure}`;
  }

  /** The job's task with this machine's paths, API key and shipped files. */
  private localTask(data: JobData, dir: string, ws: string, sessionFile: string): Omit<InstanceTask, 'port' | 'peerPort'> {
    const t = data.task as unknown as Omit<InstanceTask, 'port' | 'peerPort'>;
    const moved = new Map<string, string>();
    for (const f of data.files) {
      const local = join(dir, 'files', f.path.replace(/^\/+/, ''));
      mkdirSync(dirname(local), { recursive: true });
      writeFileSync(local, unb64(f.data));
      moved.set(f.path, local);
    }
    const relocate = (p: string): string => {
      if (moved.has(p)) return moved.get(p)!;
      // A shipped folder: its files are under the same relative path.
      const local = join(dir, 'files', p.replace(/^\/+/, ''));
      return existsSync(local) ? local : p;
    };
    const key = this.env.ANTHROPIC_API_KEY;
    const baseUrl = this.env.ANTHROPIC_BASE_URL ?? t.baseUrl;
    const secrets = [...(t.secrets ?? []), ...(key ? [{ name: 'ANTHROPIC_API_KEY', value: key }] : [])];
    return {
      ...t,
      cwd: ws,
      sessionFile,
      agent: { ...t.agent, skills: t.agent.skills.map(relocate), extensions: t.agent.extensions.map(relocate), ...(t.agent.script ? scripted(relocate(t.agent.script)) : {}) },
      ...(key ? { apiKey: key } : {}),
      ...(baseUrl ? { baseUrl } : {}),
      secrets,
      // The workdir (other agents' workspaces and every session here) is hidden from this agent's
      // commands, as the run folder is in a local run; its own workspace, inside, stays reachable.
      ...(t.sandbox ? { sandbox: { ...t.sandbox, hide: [this.opts.workdir] } } : {}),
    };
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

/** Tools that never change the workspace: their results need no checkpoint before them. */
const READ_ONLY_TOOLS = new Set(['read', 'ls', 'grep', 'find']);

/**
 * Whether session bytes carry a tool result that may have changed files (any tool but the
 * read-only ones, or one whose name cannot be read): those go after a checkpoint.
 */
function mayHaveChangedFiles(bytes: Buffer): boolean {
  const text = bytes.toString('utf8');
  if (!text.includes('"role":"toolResult"')) return false;
  const results = text.split('"role":"toolResult"').slice(1);
  return results.some((r) => {
    const name = /^,"toolCallId":"[^"]*","toolName":"([^"]+)"/.exec(r)?.[1];
    return name === undefined || !READ_ONLY_TOOLS.has(name);
  });
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
  try {
    await execFileAsync('git', ['checkout', '-q', '-f', WORKSPACE_BASE_REF, '--', '.'], { cwd: ws });
    await execFileAsync('git', ['clean', '-q', '-f', '-d'], { cwd: ws });
  } catch {
    // best effort: the apply below says whether it fits
  }
  await applyWorkspacePatch(ws, patch);
}

/** Follows a file that only grows (or is rewritten from the start): the bytes written since the last read. */
class SessionTail {
  private offset: number;
  constructor(private readonly file: string) {
    try {
      this.offset = statSync(file).size;
    } catch {
      this.offset = 0;
    }
  }

  read(): { offset: number; bytes: Buffer; reset: boolean } | undefined {
    let size: number;
    try {
      size = statSync(this.file).size;
    } catch {
      return undefined;
    }
    let reset = false;
    if (size < this.offset) {
      this.offset = 0;
      reset = true;
    }
    if (size === this.offset) return undefined;
    const fd = openSync(this.file, 'r');
    try {
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      const at = this.offset;
      this.offset += n;
      return { offset: at, bytes: buf.subarray(0, n), reset };
    } finally {
      closeSync(fd);
    }
  }
}
