// `orchestrate worker --redis URL [--concurrency N] [--workdir DIR] [--name NAME]`: a long-lived
// worker of distributed runs. It takes agent attempts from the queue and runs them in its own
// worker threads until it gets SIGTERM (or Ctrl-C): then it takes nothing new, lets the running
// agents finish, and exits 0. A second signal stops at once (its agents are taken over by other
// workers, as from a killed one).
//
// It needs the cluster secret of the coordinators it serves (or --insecure-no-secret), and by
// default refuses jobs that ask for another base URL, no sandbox, network or extensions
// (--allow-* flags; cluster/worker-policy.ts).
import { mkdirSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { ClusterWorker } from '../../cluster/cluster-worker.js';
import { checkRedis, redactRedisUrl } from '../../cluster/redis-connection.js';
import { type CliContext, EXIT } from '../cli-io.js';
import type { CliCommand, CommandArgs } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { redisAccessOf, redisAccessOptions, redisUrlOf } from '../redis-options.js';

function options(y: Argv): Argv<object> {
  return redisAccessOptions(y)
    .option('allow-base-url', {
      type: 'boolean',
      default: false,
      describe:
        "Accept a job's model API base URL (this worker's API key goes there); without it only the worker's own ANTHROPIC_BASE_URL is used",
    })
    .option('allow-unsandboxed', {
      type: 'boolean',
      default: false,
      describe: 'Accept jobs whose commands run unconfined (sandbox: none)',
    })
    .option('allow-network', {
      type: 'boolean',
      default: false,
      describe: 'Accept jobs whose sandboxed commands reach the network (network: true)',
    })
    .option('allow-extensions', {
      type: 'boolean',
      default: false,
      describe: 'Accept jobs that ship extension modules (they run inside this worker)',
    })
    .option('allow-repo-config', {
      type: 'boolean',
      default: false,
      describe: "Accept jobs that start the MCP servers of their repository's .mcp.json (trust_repo_config)",
    })
    .option('redis', {
      type: 'string',
      describe: 'The Redis of the distributed runs (redis://host:port; also ORCHESTRATE_REDIS_URL)',
    })
    .option('concurrency', {
      type: 'number',
      default: 4,
      describe: 'Agents this worker runs at once (pair planners have as many slots again)',
    })
    .option('workdir', {
      type: 'string',
      describe:
        'Where workspaces and sessions live while their agents run (default: a folder under the system temp dir)',
    })
    .option('name', {
      type: 'string',
      describe: 'Name shown in run events, show and the report (default: the host name)',
    })
    .option('queues', {
      type: 'string',
      choices: ['all', 'agents', 'partners'],
      default: 'all',
      describe: 'What to take: all, agents (everything but pair planners) or partners (pair planners only)',
    })
    .check(givenOnce('redis', 'workdir', 'name', 'queues'))
    .check((a) => {
      const c = a.concurrency;
      if (!(typeof c === 'number' && Number.isInteger(c) && c >= 1))
        throw new Error(`--concurrency must be a whole number of at least 1 (got ${String(c)})`);
      return true;
    })
    .example([
      [
        'ORCHESTRATE_CLUSTER_SECRET_FILE=cluster.key orchestrate worker --redis rediss://10.0.0.5:6379 --redis-tls-ca ca.pem --concurrency 8',
        'serve distributed runs from this machine',
      ],
      ['orchestrate recipe.yaml --redis redis://10.0.0.5:6379', 'a run whose agents go to the workers'],
    ]);
}

async function work(args: CommandArgs, ctx: CliContext): Promise<number> {
  const url = redisUrlOf(args, ctx.env);
  if (!url) {
    ctx.stderr(
      'orchestrate worker: no Redis given. Pass --redis redis://host:port (or set ORCHESTRATE_REDIS_URL) — the same Redis the coordinator uses.\n',
    );
    return EXIT.usage;
  }
  const resolved = redisAccessOf(url, args, ctx.env);
  if (!resolved.ok) {
    ctx.stderr(`orchestrate worker: ${resolved.error}\n`);
    return EXIT.usage;
  }
  const { endpoint, trust, warnings } = resolved.access;
  for (const w of warnings) ctx.stderr(`orchestrate worker: warning: ${w}\n`);
  const reachable = await checkRedis(endpoint, 5_000);
  if (!reachable.ok) {
    ctx.stderr(`orchestrate worker: ${reachable.error}\n`);
    return EXIT.usage;
  }
  const name = typeof args.name === 'string' && args.name.trim() ? args.name.trim() : hostname();
  const workdir = resolve(
    ctx.cwd,
    typeof args.workdir === 'string' ? args.workdir : join(tmpdir(), `orchestrate-worker-${name}`),
  );
  try {
    mkdirSync(workdir, { recursive: true, mode: 0o700 });
  } catch (err) {
    ctx.stderr(
      `orchestrate worker: cannot use the workdir ${workdir}: ${(err as Error).message}. Pass --workdir with a folder this user can write.\n`,
    );
    return EXIT.usage;
  }
  const concurrency = Number(args.concurrency);
  const queues =
    args.queues === 'agents' || args.queues === 'partners'
      ? { queues: [args.queues] as ('agents' | 'partners')[] }
      : {};
  const policy = {
    allowBaseUrl: args['allow-base-url'] === true,
    allowUnsandboxed: args['allow-unsandboxed'] === true,
    allowNetwork: args['allow-network'] === true,
    allowExtensions: args['allow-extensions'] === true,
    allowRepoConfig: args['allow-repo-config'] === true,
  };
  const worker = new ClusterWorker({
    url: endpoint,
    trust,
    policy,
    name,
    concurrency,
    workdir,
    env: ctx.env,
    ...queues,
    ...lockSettings(ctx.env),
    log: (line) => ctx.stderr(`worker ${name}: ${line}\n`),
  });
  ctx.stderr(
    `worker ${name} ready: ${concurrency} agents at once from ${redactRedisUrl(url)} (Redis ${reachable.version}); workdir ${workdir}; ${trust.secured ? 'jobs verified with the cluster secret' : 'NO cluster secret: jobs are not verified'}${allowed(policy)}. SIGTERM or Ctrl-C drains and exits.\n`,
  );
  let signals = 0;
  const stopped = new Promise<number>((resolveStop) => {
    const onSignal = (): void => {
      signals++;
      if (signals === 1) {
        ctx.stderr(
          `worker ${name}: draining: no new agents; waiting for ${worker.activeCount} running (signal again to stop now)\n`,
        );
        void worker.drain().then(() => resolveStop(EXIT.ok));
      } else resolveStop(EXIT.interrupted);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  const code = await stopped;
  ctx.stderr(`worker ${name}: ${code === EXIT.ok ? 'drained, exiting' : 'stopped'}\n`);
  return code;
}

function allowed(p: Record<string, boolean>): string {
  const on = Object.entries(p)
    .filter(([, v]) => v)
    .map(([k]) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  return on.length ? `; allowed: ${on.join(' ')}` : '';
}

/** Tests and impatient operators shorten the takeover time (ORCHESTRATE_WORKER_LOCK_MS). */
function lockSettings(env: Readonly<Record<string, string | undefined>>): { lockMs?: number } {
  const ms = Number(env.ORCHESTRATE_WORKER_LOCK_MS);
  return Number.isFinite(ms) && ms >= 500 ? { lockMs: ms } : {};
}

export const workerCommand: CliCommand = {
  command: 'worker',
  describe: 'Serve distributed runs: take agents from Redis and run them here (see --redis on run)',
  builder: options,
  run: work,
};
