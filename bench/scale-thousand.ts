// The 1,000-agent lines of bench/orchestrator.bench.ts (issue 41): a fan-out of `agents` (3 tool
// turns + answer each, the instant scripted model), `at` a time, once on this process's worker
// threads and once through Redis on 3 `orchestrate worker` processes, each printed with its peak
// RSS and the coordinator's event-loop delay p99 as now/goal (2 GiB, 50 ms) and its wall per agent
// against the 32-agent rate (linear). Kept apart so the bench stays one file per part.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
 * the agents on this process's worker threads, once through Redis on 3 worker processes
 * (`orchestrate worker`, 22 agents each; a redis-server of our own on a free port). RSS is this
 * process's (the distributed line: the coordinator alone; the workers are other processes).
 */
export async function scaleThousand(ctx: ThousandContext, base32PerAgent: number | undefined): Promise<void> {
  console.log(
    `scale (issue 41): ${ctx.agents} agents x (3 tool turns + answer), ${ctx.at} at a time, instant scripted model; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
  );
  const dir = ctx.folder(join(ctx.work, `scale-${ctx.agents}`), ctx.agents, ctx.at);
  console.log(thousandLine(ctx, 'worker threads in this process', await ctx.run(dir, ctx.agents), base32PerAgent));
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
  const workers: ChildProcess[] = [];
  try {
    const perWorker = Math.ceil(ctx.at / 3);
    for (const name of ['w1', 'w2', 'w3']) {
      const w = spawn(
        process.execPath,
        [
          ctx.cli,
          'worker',
          '--redis',
          redis.url,
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
    const executor = new RedisExecutor({ url: redis.url, trust: ClusterTrust.withSecret(secret) });
    try {
      const r = await ctx.run(dir, ctx.agents, executor);
      console.log(thousandLine(ctx, `3 workers through Redis (${perWorker} each)`, r, base32PerAgent));
    } finally {
      // Its Redis connections would keep the bench alive.
      await executor.close();
    }
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => (w.exitCode === null ? new Promise((r) => w.once('exit', r)) : undefined)));
    await redis.stop();
  }
}
