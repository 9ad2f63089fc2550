// A test file's cluster: one redis-server of its own, started before its tests and stopped after
// them, and the workers its tests start on it — real `orchestrate worker` processes (each in a
// workdir of its own, waited for until it says it is ready) or in-process ClusterWorkers. Every
// distributed test file used to write this setup out for itself; here it is once.
//
// Workers a test starts stay up until it stops them (`stop`) or the file ends: a file whose tests
// can share workers starts them once (beforeAll) and each test keeps its own run (its own queue
// jobs and keys), which saves a process start per test on a busy 2-core machine.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { ClusterTrust } from '../../../src/cluster/cluster-trust.js';
import { ClusterWorker } from '../../../src/cluster/cluster-worker.js';
import { type RedisServerHandle, skipWithoutRedis, startRedis } from '../../helpers/redis-server.js';
import { spawnCli, until } from '../../reliability/helpers/reliability-fixtures.js';

/** The cluster secret every worker and coordinator of the tests shares. */
export const CLUSTER_SECRET = 'test-cluster-secret-0123456789abcdef';
/** The secret as the CLI takes it: through the environment, never a flag. */
export const SECRET_ENV: Readonly<Record<string, string>> = { ORCHESTRATE_CLUSTER_SECRET: CLUSTER_SECRET };
/** The trust of an in-process coordinator or worker holding the secret. */
export const clusterTrust = (): ClusterTrust => ClusterTrust.withSecret(CLUSTER_SECRET);

const REPO_NODE_MODULES = resolve(import.meta.dirname, '..', '..', '..', 'node_modules');

export interface WorkerProcess {
  child: ChildProcess;
  name: string;
  workdir: string;
  /** Everything the worker wrote to stderr so far. */
  stderr(): string;
}

export interface WorkerProcessOptions {
  /** Agents at once (--concurrency); 2 unless given. */
  concurrency?: number;
  /** Added to the worker's environment (a model key and address, an MCP server's variables). */
  env?: Record<string, string>;
  /** More flags after the usual ones (--queues, --allow-extensions ...). */
  args?: string[];
  /** Another Redis address than the file's server (another database of it, say). */
  url?: string;
  /** Where its workdir is made (the system temp folder unless given). */
  workdirBase?: string;
  /** Links the repository's node_modules into the workdir: extensions import packages from there, as docs/distributed.md tells operators. */
  linkNodeModules?: boolean;
  /** How long a SIGTERM'd worker may drain before it is SIGKILLed (default 20 s). */
  drainLimitMs?: number;
}

export interface Cluster {
  /** True when redis-server is not installed here (the file's tests skip, loudly). */
  readonly skip: boolean;
  /** The file's redis-server (started by the file's beforeAll). */
  readonly redis: RedisServerHandle;
  /** Starts `orchestrate worker --name <name>` on the file's Redis and waits for its ready line. */
  startWorker(name: string, opts?: WorkerProcessOptions): Promise<WorkerProcess>;
  /** SIGTERMs the given workers (they drain) and waits for their exit; SIGKILL past their drain limit. */
  stop(workers: readonly WorkerProcess[]): Promise<void>;
  /** A ClusterWorker in this process with a workdir of its own; drained when the file ends. */
  inProcessWorker(name: string, concurrency: number): ClusterWorker;
}

/**
 * The cluster of the calling test file: registers its beforeAll (start redis-server) and afterAll
 * (stop every worker still running, remove their workdirs, stop the server). `what` names the
 * tests in the loud skip line printed when redis-server is missing.
 */
export function useCluster(what: string): Cluster {
  const skip = skipWithoutRedis(what);
  let server: RedisServerHandle | undefined;
  const running = new Map<WorkerProcess, number>();
  const inProcess: ClusterWorker[] = [];
  const workdirs: string[] = [];
  const newWorkdir = (name: string, base = tmpdir()): string => {
    const dir = mkdtempSync(join(base, `orch-worker-${name}-`));
    workdirs.push(dir);
    return dir;
  };

  const cluster: Cluster = {
    skip,
    get redis(): RedisServerHandle {
      if (!server) throw new Error('the test Redis is not running (redis-server missing, or used outside the tests)');
      return server;
    },
    async startWorker(name, opts = {}) {
      const workdir = newWorkdir(name, opts.workdirBase);
      if (opts.linkNodeModules) symlinkSync(REPO_NODE_MODULES, join(workdir, 'node_modules'));
      const args = ['--name', name, '--concurrency', String(opts.concurrency ?? 2), '--workdir', workdir];
      const child = spawnCli(['worker', '--redis', opts.url ?? cluster.redis.url, ...args, ...(opts.args ?? [])], {
        // Short job locks: a killed worker's jobs are stalled (and taken over) within seconds.
        ORCHESTRATE_WORKER_LOCK_MS: '2000',
        ...SECRET_ENV,
        ...opts.env,
      });
      let err = '';
      child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout?.resume();
      const worker: WorkerProcess = { child, name, workdir, stderr: () => err };
      running.set(worker, opts.drainLimitMs ?? 20_000);
      await until(
        () => err.includes(`worker ${name} ready`) || child.exitCode !== null,
        `worker ${name} to start`,
        60_000,
      );
      if (child.exitCode !== null) throw new Error(`worker ${name} exited: ${err}`);
      return worker;
    },
    async stop(workers) {
      await Promise.all(
        workers.map(async (w) => {
          const limit = running.get(w) ?? 20_000;
          running.delete(w);
          const c = w.child;
          if (c.exitCode !== null || c.signalCode !== null) return;
          const gone = new Promise<void>((r) => c.once('exit', () => r()));
          c.kill('SIGTERM');
          const t = setTimeout(() => c.kill('SIGKILL'), limit);
          await gone;
          clearTimeout(t);
        }),
      );
    },
    inProcessWorker(name, concurrency) {
      const worker = new ClusterWorker({
        url: cluster.redis.url,
        trust: clusterTrust(),
        name,
        concurrency,
        workdir: newWorkdir(name),
      });
      inProcess.push(worker);
      return worker;
    },
  };

  beforeAll(async () => {
    if (!skip) server = await startRedis();
  });
  afterAll(async () => {
    await cluster.stop([...running.keys()]);
    await Promise.all(inProcess.splice(0).map((w) => w.drain()));
    for (const w of workdirs.splice(0)) rmSync(w, { recursive: true, force: true });
    await server?.stop();
  });
  return cluster;
}
