// The 1,000-agent lines of bench/orchestrator.bench.ts (issue 41): a fan-out of `agents` (3 tool
// turns + answer each, the instant scripted model), `at` a time, once on this process's worker
// threads and twice through Redis on 3 `orchestrate worker` processes (at the coordinator's CPU
// priority, then at nice 10: a model of workers on other machines), each printed with its peak
// RSS and the coordinator's event-loop delay p99 as now/goal (2 GiB, 50 ms) and its wall per agent
// against the 32-agent rate (linear). Kept apart so the bench stays one file per part.
// Beside each run an idle Node process (side-process.ts) measures its own event-loop delay the same
// way: the printed ratio tells the machine's descheduling from the coordinator's own work.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { Session } from 'node:inspector/promises';
import { dirname, join } from 'node:path';
import { besideIdle, type IdleFigures } from './side-process.js';
import { pathToFileURL } from 'node:url';

/** What one run measured (the bench's InProcessRun). */
export interface RunFigures {
  ms: number;
  peakMb: number;
  delayP99: number;
  delayMax: number;
}

/** What these lines need of the bench: its folders, its build, and how it makes and runs a fan-out. */
export interface ThousandContext {
  work: string;
  dist: string;
  cli: string;
  agents: number;
  at: number;
  /** A fan-out folder of `n` agents, `at` at a time. */
  folder(dir: string, n: number, at: number): string;
  /** One run of it with the coordinator in this process (`executor`: a distributed run's). */
  run(dir: string, n: number, executor?: unknown): Promise<RunFigures>;
  /** Which lines run (default all): `threads`, `redis`, `redis-nice` (the workers at nice 10). */
  lines?: ReadonlySet<string>;
  /** Writes a CPU profile of this process's main thread (the coordinator) during each run here. */
  profileDir?: string;
}

/**
 * `fn` with this thread profiled (the coordinator's thread only: the agents' threads and the
 * workers are not in it), the profile written to `file`; sampled every 1 ms as --cpu-prof does.
 */
async function profiled<T>(file: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (!file) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    console.log(`  (the coordinator's CPU profile: ${file}; node --import tsx bench/cpu-profile-summary.ts ${file})`);
  }
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/**
 * CPU seconds this process's main thread (the coordinator's) has used: its own line in /proc,
 * without the agents' threads (process.cpuUsage() counts every thread).
 */
function mainThreadCpuSeconds(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * Times the kernel took the CPU from this process's main thread while it could still run
 * (`nonvoluntary_ctxt_switches`): a long turn with many of them is the machine's, not the coordinator's work.
 */
function mainThreadPreemptions(): number {
  const status = readFileSync(`/proc/self/task/${process.pid}/status`, 'utf8');
  return Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/**
 * The baseline line under a run's lines: the idle process's p99 beside the coordinator's, the
 * coordinator thread's CPU (work that does not depend on the load), and the load.
 */
function idleLine(
  ctx: ThousandContext,
  r: RunFigures,
  idle: IdleFigures,
  cpuS: number,
  preempted: number,
  loadBefore: string,
): string {
  return (
    `  ${''.padEnd(34)} idle Node process beside it: event-loop delay p99 ${idle.p99.toFixed(1)} ms, max ${idle.max.toFixed(1)} ms; ` +
    `coordinator p99 / idle p99 = ${(r.delayP99 / Math.max(idle.p99, 0.001)).toFixed(2)}x ` +
    `(the machine alone: ${idle.p99 > 50 ? 'over' : 'within'} the 50 ms goal)\n` +
    `  ${''.padEnd(34)} coordinator thread CPU ${cpuS.toFixed(1)} s (${((cpuS * 1000) / ctx.agents).toFixed(1)} ms/agent), preempted ${preempted} times; load ${loadBefore} -> ${loadavg()}`
  );
}

/** One run with the idle baseline beside it: its two lines and the baseline's. */
async function measuredLine(
  ctx: ThousandContext,
  label: string,
  base32PerAgent: number | undefined,
  run: () => Promise<RunFigures>,
): Promise<string> {
  const loadBefore = loadavg();
  const cpu0 = mainThreadCpuSeconds();
  const preempted0 = mainThreadPreemptions();
  const { value: r, idle } = await besideIdle(run);
  const cpuS = mainThreadCpuSeconds() - cpu0;
  const preempted = mainThreadPreemptions() - preempted0;
  return `${thousandLine(ctx, label, r, base32PerAgent)}\n${idleLine(ctx, r, idle, cpuS, preempted, loadBefore)}`;
}

function thousandLine(ctx: ThousandContext, label: string, r: RunFigures, base32PerAgent: number | undefined): string {
  const gib = r.peakMb / 1024;
  const linear =
    base32PerAgent !== undefined
      ? `; ${(r.ms / ctx.agents).toFixed(1)} ms/agent = ${(r.ms / ctx.agents / base32PerAgent).toFixed(2)}x the 32-agent rate`
      : '';
  return (
    `  ${label.padEnd(34)} wall ${r.ms.toFixed(0).padStart(6)} ms${linear}\n` +
    `  ${''.padEnd(34)} peak RSS ${r.peakMb.toFixed(0)} MB (goal <= 2 GiB, now/goal ${(gib / 2).toFixed(2)}); ` +
    `event-loop delay p99 ${r.delayP99.toFixed(1)} ms (goal <= 50 ms, now/goal ${(r.delayP99 / 50).toFixed(2)}), max ${r.delayMax.toFixed(1)} ms`
  );
}

/**
 * 1,000 agents (3 tool turns + answer each, the instant scripted model), 64 at a time: once with
 * the agents on this process's worker threads, twice through Redis on 3 worker processes
 * (`orchestrate worker`, 22 agents each; a redis-server of our own on a free port): sharing the
 * coordinator's priority, then at nice 10 (redis-server stays at the coordinator's). RSS is this
 * process's (the distributed line: the coordinator alone; the workers are other processes).
 */
export async function scaleThousand(ctx: ThousandContext, base32PerAgent: number | undefined): Promise<void> {
  console.log(
    `scale (issue 41): ${ctx.agents} agents x (3 tool turns + answer), ${ctx.at} at a time, instant scripted model; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
  );
  const dir = ctx.folder(join(ctx.work, `scale-${ctx.agents}`), ctx.agents, ctx.at);
  const profileOf = (name: string): string | undefined =>
    ctx.profileDir ? join(ctx.profileDir, `coordinator-${name}-${ctx.agents}-${process.pid}.cpuprofile`) : undefined;
  if (ctx.lines?.has('threads') ?? true)
    console.log(
      await measuredLine(ctx, 'worker threads in this process', base32PerAgent, () =>
        profiled(profileOf('threads'), () => ctx.run(dir, ctx.agents)),
      ),
    );
  if (ctx.lines && !ctx.lines.has('redis') && !ctx.lines.has('redis-nice')) return;
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    console.log('  distributed: skipped (no redis-server on PATH)');
    return;
  }
  const { startRedis } = await import('../test/helpers/redis-server.js');
  const { RedisExecutor } = (await import(
    pathToFileURL(join(ctx.dist, 'cluster/redis-executor.js')).href
  )) as typeof import('../src/cluster/redis-executor.js');
  const { ClusterTrust } = (await import(
    pathToFileURL(join(ctx.dist, 'cluster/cluster-trust.js')).href
  )) as typeof import('../src/cluster/cluster-trust.js');
  const redis = await startRedis();
  const secret = 'bench-cluster-secret-0123456789abcdef';
  const perWorker = Math.ceil(ctx.at / 3);
  try {
    // The same recipe twice over the same Redis, each time with 3 workers of its own: at the
    // coordinator's priority (all of them share its 2 cores, as when everything runs on one
    // machine), then at nice 10, which models workers on other machines: the kernel gives the
    // coordinator the CPU whenever it is runnable, as it would have it alone.
    const distributed: { line: string; nice: number | undefined; label: string }[] = [
      { line: 'redis', nice: undefined, label: `3 workers through Redis (${perWorker} each)` },
      { line: 'redis-nice', nice: WORKER_NICE, label: `same, workers at nice ${WORKER_NICE}` },
    ];
    for (const { line, nice, label } of distributed) {
      if (!(ctx.lines?.has(line) ?? true)) continue;
      if (nice !== undefined)
        console.log(`  (workers at nice ${nice}: models workers on other machines; the coordinator keeps nice 0)`);
      const workers = await startWorkers(ctx, redis.url, secret, perWorker);
      try {
        if (nice !== undefined) for (const w of workers) lowerPriority(w.pid!, nice);
        const executor = new RedisExecutor({ url: redis.url, trust: ClusterTrust.withSecret(secret) });
        try {
          console.log(
            await measuredLine(ctx, label, base32PerAgent, () =>
              profiled(profileOf(line), () => ctx.run(dir, ctx.agents, executor)),
            ),
          );
        } finally {
          // Its Redis connections would keep the bench alive.
          await executor.close();
        }
        // Checked after the run: every thread the workers started (agent threads, V8's and
        // libuv's) ran at the lower priority, so the line measured what it says.
        if (nice !== undefined) {
          const threads = workers.flatMap((w) => threadNices(w.pid!));
          const off = threads.filter((n) => n !== nice).length;
          console.log(
            `  ${''.padEnd(34)} ${off === 0 ? 'all' : `NOT all: ${off} of`} ${threads.length} threads of the 3 workers at nice ${nice}`,
          );
        }
      } finally {
        await stopWorkers(workers);
      }
    }
  } finally {
    await redis.stop();
  }
}

/** The niceness of the distributed line that models workers on other machines. */
const WORKER_NICE = 10;

/** 3 `orchestrate worker` processes of `perWorker` agents each, once each has said it is ready. */
async function startWorkers(
  ctx: ThousandContext,
  url: string,
  secret: string,
  perWorker: number,
): Promise<ChildProcess[]> {
  const workers: ChildProcess[] = [];
  try {
    for (const name of ['w1', 'w2', 'w3']) {
      const w = spawn(
        process.execPath,
        [
          ctx.cli,
          'worker',
          '--redis',
          url,
          '--name',
          name,
          '--concurrency',
          String(perWorker),
          '--workdir',
          mkdtempSync(join(ctx.work, `${name}-`)),
        ],
        { env: { ...process.env, ORCHESTRATE_CLUSTER_SECRET: secret }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      workers.push(w);
      // Ready once it says so (on stderr, where its log goes; the log is kept for an early exit only).
      await new Promise<void>((resolve, reject) => {
        let out = '';
        w.stderr!.on('data', (d: Buffer) => {
          out = (out + d.toString()).slice(-4000);
          if (out.includes(' ready: ')) resolve();
        });
        w.once('exit', (code) => reject(new Error(`worker ${name} exited ${code}: ${out}`)));
      });
    }
    return workers;
  } catch (e) {
    await stopWorkers(workers);
    throw e;
  }
}

async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map((w) => (w.exitCode === null ? new Promise((r) => w.once('exit', r)) : undefined)));
}

/** The nice value of every thread of process `pid` (field 19 of /proc/PID/task/TID/stat). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // After the command name (which may hold spaces) the fields start at the 3rd: nice is the 19th.
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

/**
 * Lowers the CPU priority of every thread of process `pid`. On Linux a nice value belongs to a
 * thread (os.setPriority(pid) alone moves only the main one), and a thread starts with its
 * creator's: so once the threads running now are moved, the agent threads the worker starts later
 * follow. Repeated until a pass finds none left over (a thread may start during a pass).
 */
function lowerPriority(pid: number, nice: number): void {
  for (let pass = 0; pass < 10; pass++) {
    let moved = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        if (getPriority(Number(tid)) === nice) continue;
        setPriority(Number(tid), nice);
        moved++;
      } catch {
        // the thread ended meanwhile
      }
    }
    if (moved === 0) return;
  }
  throw new Error(`the threads of worker ${pid} kept changing: could not set them all to nice ${nice}`);
}
