// Distributed runs (issue 19): a fan-out of N instances (default 200) against the scripted model
// with a simulated latency per call (default 200 ms; 2 calls per instance: a tool call, then the
// answer), run four ways with the same recipe (its `concurrency` is N, so the executor is the limit):
//
//   local C      the local thread pool, --concurrency C (one machine's worth)
//   local 3C     the local thread pool, --concurrency 3C
//   redis 1xC    one `orchestrate worker --concurrency C` process
//   redis 3xC    three of them
//
// Printed per configuration: wall time, the ideal (instances x calls x delay / parallelism), the
// overhead per instance ((wall - ideal) x parallelism / instances: what each instance costs beyond
// its model time), and from the run log the median time an instance spends from its start to its
// end (ideal: calls x delay). Then the speedup of 3 workers over 1 and the ratios against the local
// pool. For the distributed runs, read from the redis-server (CONFIG RESETSTAT before the run, then
// INFO commandstats / stats / cpu after): Redis commands and network bytes per instance, Redis CPU
// per instance, the entries added to the up and down streams; the CPU of the coordinator (this
// process) and of the worker processes per instance; and the Redis load of idle workers.
//
// The coordinator runs in this process (runRecipeFile, as the CLI does); the workers are real
// `orchestrate worker` processes (`node <build>/cli/main.js worker ...`). Both run JavaScript that
// the bench compiles first with tsc into a temp folder (the shared dist/ is left alone), as an
// installed orchestrate would; `--source` runs both from the TypeScript sources through tsx
// instead (every worker thread then compiles the agent modules again: slower starts). The bench
// starts its own redis-server (test/helpers/redis-server.ts).
//
// Flags: --instances N (200) --worker-concurrency C (4) --delay-ms D (200) --idle-seconds S (10)
//        --calls K (2: K - 1 tool calls, then the answer)
//        --no-local (skip the local pool runs) --source --keep (keep the run folders)
//        --takeover (only: the time until a killed worker's agent continues on another worker;
//        the lock is 15 s unless ORCHESTRATE_WORKER_LOCK_MS is set)
//        --monitor FILE (every Redis command of the distributed runs, with its time and client:
//        where an instance's time goes, without timing code in src/)
// Run: node --import tsx bench/distributed.bench.ts
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import type * as ExecutorModule from '../src/cluster/redis-executor.js';
import type * as TrustModule from '../src/cluster/cluster-trust.js';
import type * as RunRecipeModule from '../src/orchestrator/run-recipe.js';
import { RUN_LOG } from '../src/run/run-store.js';
import { startRedis, type RedisServerHandle } from '../test/helpers/redis-server.js';
import { summarizeProfiles } from './cpu-profile-summary.js';
import { busyShare, machineJiffies, procCpuMs } from './process-cpu.js';
import { idleLoad, parseInfo, redisCpuMs, streamEntriesAdded } from './redis-figures.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const INSTANCES = flag('instances', 200);
const C = flag('worker-concurrency', 4);
const DELAY_MS = flag('delay-ms', 200);
const IDLE_S = flag('idle-seconds', 10);
/** Model calls per instance: CALLS - 1 tool calls, then the answer. */
const CALLS = flag('calls', 2);
const FROM_SOURCE = args.includes('--source');
/** `--cpu-prof DIR`: the workers (with their threads) write V8 CPU profiles there; summarized at the end. */
const PROFILE_DIR = args.includes('--cpu-prof') ? resolve(args[args.indexOf('--cpu-prof') + 1]!) : undefined;

// ---- build ---------------------------------------------------------------------------------------

/** Compiles src/ into a temp folder beside a copy of package.json and a link to node_modules. */
function build(): string {
  const out = mkdtempSync(join(tmpdir(), 'orch-dist-bench-build-'));
  const t0 = Date.now();
  const b = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.json'), '--outDir', join(out, 'dist')],
    { cwd: ROOT, encoding: 'utf8' },
  );
  // Type errors elsewhere in a tree being edited still emit JavaScript; only a missing CLI is fatal.
  if (b.status !== 0)
    console.log(`(tsc exited ${b.status}; using what it emitted)\n${b.stdout.split('\n').slice(0, 5).join('\n')}`);
  copyFileSync(join(ROOT, 'package.json'), join(out, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'));
  if (!existsSync(join(out, 'dist/cli/main.js'))) {
    console.error(`the build in ${out} has no dist/cli/main.js:\n${b.stdout}`);
    process.exit(2);
  }
  console.log(`build: ${Date.now() - t0} ms into ${out}`);
  return out;
}

const BUILD = FROM_SOURCE ? undefined : build();
const CODE = BUILD ? join(BUILD, 'dist') : join(ROOT, 'src');
const EXT = BUILD ? 'js' : 'ts';
const CLI = join(CODE, `cli/main.${EXT}`);
const { RedisExecutor } = (await import(
  pathToFileURL(join(CODE, `cluster/redis-executor.${EXT}`)).href
)) as typeof ExecutorModule;
const { ClusterTrust } = (await import(
  pathToFileURL(join(CODE, `cluster/cluster-trust.${EXT}`)).href
)) as typeof TrustModule;
/** The cluster secret of this bench's coordinator and workers (jobs and results are sealed as in real use). */
const SECRET = randomBytes(32).toString('hex');
const { runRecipeFile } = (await import(
  pathToFileURL(join(CODE, `orchestrator/run-recipe.${EXT}`)).href
)) as typeof RunRecipeModule;

// ---- fixtures ------------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'orch-dist-bench-'));
for (let i = 0; i < INSTANCES; i++) {
  const d = join(work, 'items', `i${String(i).padStart(3, '0')}`);
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, 'notes.txt'), `notes of item ${i}\n`);
}
writeFileSync(
  join(work, 'script.yaml'),
  `turns:
${Array.from({ length: CALLS - 1 }, (_, i) => `  - tools: [{ name: read, args: { path: notes.txt, limit: ${i + 1} } }]\n    delay_ms: ${DELAY_MS}\n`).join('')}  - text: "done"
    delay_ms: ${DELAY_MS}
`,
);
writeFileSync(
  join(work, 'recipe.yaml'),
  `name: dist-bench
provider: scripted
script: script.yaml
concurrency: ${INSTANCES}
agents:
  reader: { tools: [read] }
tasks:
  - id: fan
    for_each: { glob: "items/*" }
    agent: reader
    cwd: \${{ item }}
    prompt: "Read the notes"
`,
);

// ---- measurements --------------------------------------------------------------------------------

interface RunLog {
  ts: number;
  type: string;
  key?: string;
}

interface Measured {
  label: string;
  /** Share of all cores busy during the run (whoever used them). */
  machineBusy: number;
  parallelism: number;
  ms: number;
  /** Median instance_start -> instance_done, ms. */
  serviceMs: number;
  /** Median instance_queued -> instance_start for the first `parallelism` instances (the start-up of a slot), ms. */
  firstStartMs: number;
  coordinatorCpuMs: number;
  /** The part of coordinatorCpuMs spent in its child processes (git for workspaces; tar before issue 32). */
  coordinatorChildCpuMs: number;
  workerCpuMs?: number;
  /** The part of workerCpuMs spent in the workers' child processes (git and tar for workspaces). */
  workerChildCpuMs?: number;
  redis?: RedisFigures;
}

interface RedisFigures {
  commands: Map<string, number>;
  netIn: number;
  netOut: number;
  cpuMs: number;
  upEntries: number;
  downEntries: number;
  peakMemory: number;
  baseMemory: number;
}

const median = (xs: number[]): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

function readLog(runDir: string): RunLog[] {
  return readFileSync(join(runDir, RUN_LOG), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RunLog);
}

function logFigures(runDir: string, parallelism: number): { serviceMs: number; firstStartMs: number } {
  const log = readLog(runDir);
  const at = (type: string): Map<string, number> =>
    new Map(log.filter((e) => e.type === type && e.key).map((e) => [e.key!, e.ts]));
  const queued = at('instance_queued');
  const started = at('instance_start');
  const done = at('instance_done');
  if (done.size !== INSTANCES) throw new Error(`${runDir}: ${done.size} of ${INSTANCES} instances done`);
  const service = [...done].map(([k, t]) => t - (started.get(k) ?? t));
  const firsts = [...started].sort((a, b) => a[1] - b[1]).slice(0, parallelism);
  return { serviceMs: median(service), firstStartMs: median(firsts.map(([k, t]) => t - (queued.get(k) ?? t))) };
}

/** The run's status and its first failed instance's error (the whole outcome is too long to print). */
function failureText(r: Awaited<ReturnType<typeof RunRecipeModule.runRecipeFile>>): string {
  if (!r.ok) return JSON.stringify(r).slice(0, 2000);
  const failed = r.outcome.tasks.flatMap((t) => t.instances).filter((i) => i.status !== 'done');
  return `${r.outcome.status}, ${failed.length} instances not done; first: ${failed[0]?.id} ${failed[0]?.failure ?? ''}: ${failed[0]?.error ?? ''} (run folder ${r.outcome.dir})`;
}

// ---- runs ----------------------------------------------------------------------------------------

async function localRun(concurrency: number): Promise<Measured> {
  const runsDir = join(work, `runs-local-${concurrency}`);
  const cpu0 = procCpuMs('self');
  const child0 = procCpuMs('self', 'children');
  const machine0 = machineJiffies();
  const t0 = performance.now();
  const r = await runRecipeFile(join(work, 'recipe.yaml'), { cwd: work, concurrency }, { runsDir });
  const ms = performance.now() - t0;
  const cpuMs = procCpuMs('self') - cpu0;
  const childMs = procCpuMs('self', 'children') - child0;
  const machineBusy = busyShare(machine0);
  if (!r.ok || r.outcome.status !== 'succeeded') throw new Error(`local run failed: ${failureText(r)}`);
  return {
    label: `local pool, concurrency ${concurrency}`,
    machineBusy,
    parallelism: concurrency,
    ms,
    ...logFigures(r.outcome.dir, concurrency),
    coordinatorCpuMs: cpuMs,
    coordinatorChildCpuMs: childMs,
  };
}

interface WorkerProc {
  child: ChildProcess;
  name: string;
  exited: Promise<void>;
}

async function startWorker(redisUrl: string, name: string): Promise<WorkerProc> {
  const workdir = join(work, 'workers', name);
  mkdirSync(workdir, { recursive: true });
  const argv = [
    ...(PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : []),
    ...(BUILD ? [CLI] : ['--import', 'tsx', CLI]),
  ];
  const child = spawn(
    process.execPath,
    [...argv, 'worker', '--redis', redisUrl, '--name', name, '--concurrency', String(C), '--workdir', workdir],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ORCHESTRATE_CLUSTER_SECRET: SECRET,
        ...(process.env.ORCHESTRATE_WORKER_LOCK_MS
          ? { ORCHESTRATE_WORKER_LOCK_MS: process.env.ORCHESTRATE_WORKER_LOCK_MS }
          : {}),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let err = '';
  await new Promise<void>((resolveReady, rejectReady) => {
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes(`worker ${name} ready`)) resolveReady();
    });
    void exited.then(() => rejectReady(new Error(`worker ${name} exited before it was ready:\n${err}`)));
  });
  return { child, name, exited };
}

async function stopWorkers(ws: WorkerProc[]): Promise<void> {
  for (const w of ws) w.child.kill('SIGTERM');
  await Promise.all(
    ws.map(async (w) => {
      const t = setTimeout(() => w.child.kill('SIGKILL'), 30_000);
      await w.exited;
      clearTimeout(t);
    }),
  );
}

async function distributedRun(redis: RedisServerHandle, stats: Redis, workers: WorkerProc[]): Promise<Measured> {
  const parallelism = workers.length * C;
  const runsDir = join(work, `runs-redis-${workers.length}`);
  const executor = new RedisExecutor({ url: redis.url, trust: ClusterTrust.withSecret(SECRET) });
  // Let the executor's connections settle before the counters start.
  await new Promise((r) => setTimeout(r, 500));
  await stats.config('RESETSTAT');
  const redisCpu0 = await redisCpuMs(stats);
  const baseMemory = Number(parseInfo(await stats.info('memory')).get('used_memory'));
  let peakMemory = baseMemory;
  const memTimer = setInterval(() => {
    void stats.info('memory').then(
      (t) => (peakMemory = Math.max(peakMemory, Number(parseInfo(t).get('used_memory')))),
      () => {},
    );
  }, 250);
  const wcpu0 = workers.map((w) => procCpuMs(w.child.pid!));
  const wchild0 = workers.map((w) => procCpuMs(w.child.pid!, 'children'));
  const cpu0 = procCpuMs('self');
  const child0 = procCpuMs('self', 'children');
  const machine0 = machineJiffies();
  const t0 = performance.now();
  let r: Awaited<ReturnType<typeof runRecipeFile>>;
  try {
    r = await runRecipeFile(join(work, 'recipe.yaml'), { cwd: work }, { runsDir, executor });
  } finally {
    await executor.close();
  }
  const ms = performance.now() - t0;
  const cpuMs = procCpuMs('self') - cpu0;
  const childMs = procCpuMs('self', 'children') - child0;
  const machineBusy = busyShare(machine0);
  clearInterval(memTimer);
  const workerCpuMs = workers.reduce((s, w, i) => s + procCpuMs(w.child.pid!) - wcpu0[i]!, 0);
  const workerChildCpuMs = workers.reduce((s, w, i) => s + procCpuMs(w.child.pid!, 'children') - wchild0[i]!, 0);
  if (!r.ok || r.outcome.status !== 'succeeded') throw new Error(`distributed run failed: ${failureText(r)}`);
  const commands = new Map<string, number>();
  for (const [k, v] of parseInfo(await stats.info('commandstats'))) {
    const calls = /calls=(\d+)/.exec(v);
    if (calls) commands.set(k.replace(/^cmdstat_/, ''), Number(calls[1]));
  }
  const net = parseInfo(await stats.info('stats'));
  const redisFig: RedisFigures = {
    commands,
    netIn: Number(net.get('total_net_input_bytes')),
    netOut: Number(net.get('total_net_output_bytes')),
    cpuMs: (await redisCpuMs(stats)) - redisCpu0,
    // The run's up stream is deleted when the executor closes: its entries are the XADDs that were not down entries.
    upEntries: 0,
    // Fresh worker processes for each configuration: their down streams hold this run only.
    downEntries: (
      await Promise.all(workers.map((w) => streamEntriesAdded(stats, `orchestrate:worker:${w.name}-*:down`)))
    ).reduce((a, b) => a + b, 0),
    peakMemory,
    baseMemory,
  };
  redisFig.upEntries = (commands.get('xadd') ?? 0) - redisFig.downEntries;
  return {
    label: `redis, ${workers.length} worker${workers.length > 1 ? 's' : ''} x concurrency ${C}`,
    machineBusy,
    parallelism,
    ms,
    ...logFigures(r.outcome.dir, parallelism),
    coordinatorCpuMs: cpuMs,
    coordinatorChildCpuMs: childMs,
    workerCpuMs,
    workerChildCpuMs,
    redis: redisFig,
  };
}

/**
 * `--takeover`: one agent (4 scripted calls of 3 s) on one of two workers with the default lock
 * (or ORCHESTRATE_WORKER_LOCK_MS); its worker is killed with SIGKILL 1 s after the agent started.
 * Measured: kill -> the coordinator's instance_worker (takeover) event, and whether the run ends well.
 */
async function takeover(redisUrl: string): Promise<void> {
  const dir = join(work, 'takeover');
  mkdirSync(join(dir, 'item'), { recursive: true });
  writeFileSync(join(dir, 'item', 'notes.txt'), 'notes\n');
  writeFileSync(
    join(dir, 'script.yaml'),
    `turns:\n${[1, 2, 3].map((i) => `  - tools: [{ name: read, args: { path: notes.txt, limit: ${i} } }]\n    delay_ms: 3000\n`).join('')}  - text: "done"\n    delay_ms: 3000\n`,
  );
  writeFileSync(
    join(dir, 'recipe.yaml'),
    `name: takeover\nprovider: scripted\nscript: script.yaml\nagents:\n  reader: { tools: [read] }\ntasks:\n  - id: one\n    agent: reader\n    cwd: item\n    prompt: "Read the notes"\n`,
  );
  const workers = await Promise.all(['tk-a', 'tk-b'].map((n) => startWorker(redisUrl, n)));
  const executor = new RedisExecutor({ url: redisUrl, trust: ClusterTrust.withSecret(SECRET) });
  let killedAt = 0;
  let victim: string | undefined;
  let takenAt = 0;
  let takenBy = '';
  try {
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      {
        runsDir: join(dir, 'runs'),
        executor,
        onStore: (store) =>
          store.subscribe((e) => {
            if (e.type === 'instance_start' && e.worker && !victim) {
              victim = e.worker;
              setTimeout(() => {
                killedAt = Date.now();
                workers.find((w) => w.name === victim)?.child.kill('SIGKILL');
              }, 1000);
            }
            if (e.type === 'instance_worker' && e.takeover) {
              takenAt = e.ts;
              takenBy = e.worker;
            }
          }),
      },
    );
    const status = r.ok ? r.outcome.status : 'not started';
    console.log(
      `\ntakeover: worker ${victim} killed (SIGKILL) 1 s into its agent; ${takenAt ? `${takenBy} took the agent over ${((takenAt - killedAt) / 1000).toFixed(1)} s after the kill` : 'no takeover seen'}; ` +
        `run ${status} (lock ${process.env.ORCHESTRATE_WORKER_LOCK_MS ?? '15000 (default)'} ms)`,
    );
  } finally {
    await executor.close();
    await stopWorkers(workers);
  }
}

// ---- report --------------------------------------------------------------------------------------

const f1 = (n: number): string => n.toFixed(1);
const kb = (n: number): string => `${(n / 1024).toFixed(1)} KB`;

function printRun(m: Measured): void {
  const ideal = (INSTANCES * CALLS * DELAY_MS) / m.parallelism;
  const overhead = ((m.ms - ideal) * m.parallelism) / INSTANCES;
  console.log(
    `${m.label.padEnd(38)} wall ${(m.ms / 1000).toFixed(2).padStart(6)} s   ideal ${(ideal / 1000).toFixed(2).padStart(6)} s   ` +
      `overhead/instance ${f1(overhead).padStart(6)} ms   median start->done ${m.serviceMs} ms (ideal ${CALLS * DELAY_MS})   ` +
      `median queued->start of the first ${m.parallelism}: ${m.firstStartMs} ms`,
  );
  const per = (n: number | undefined): string => `${f1((n ?? 0) / INSTANCES)} ms`;
  if (m.workerCpuMs === undefined) {
    console.log(
      `${''.padEnd(38)} CPU per instance: this process (coordinator + agent threads) ${per(m.coordinatorCpuMs)} (${per(m.coordinatorChildCpuMs)} of it in child processes); cores busy ${(m.machineBusy * 100).toFixed(0)}%`,
    );
    return;
  }
  // Issue 32's goals for a distributed instance: CPU of all processes (coordinator, workers with
  // their git/tar children, redis-server) <= 30 ms; overhead beyond the model's time <= 100 ms.
  const workerOwn = m.workerCpuMs - (m.workerChildCpuMs ?? 0);
  const coordinatorOwn = m.coordinatorCpuMs - m.coordinatorChildCpuMs;
  const children = m.coordinatorChildCpuMs + (m.workerChildCpuMs ?? 0);
  const cpu = (m.coordinatorCpuMs + m.workerCpuMs + (m.redis?.cpuMs ?? 0)) / INSTANCES;
  console.log(
    `${''.padEnd(38)} CPU per instance by process: coordinator ${per(coordinatorOwn)}, worker processes (with their agent threads) ${per(workerOwn)}, ` +
      `git/tar children ${per(children)} (coordinator's ${per(m.coordinatorChildCpuMs)}, workers' ${per(m.workerChildCpuMs)}), redis-server ${per(m.redis?.cpuMs)}; cores busy ${(m.machineBusy * 100).toFixed(0)}%`,
  );
  console.log(
    `${''.padEnd(38)} all processes ${f1(cpu)} ms CPU per instance = ${(cpu / 30).toFixed(2)}x the goal (<= 30 ms); ` +
      `overhead ${f1(overhead)} ms per instance = ${(overhead / 100).toFixed(2)}x the goal (<= 100 ms)`,
  );
}

function printRedis(m: Measured): void {
  const r = m.redis!;
  const own = new Set(['info', 'config', 'keys', 'xinfo']);
  const counted = [...r.commands].filter(([n]) => !own.has(n)).sort((a, b) => b[1] - a[1]);
  const total = counted.reduce((s, [, n]) => s + n, 0);
  console.log(`\n${m.label}: per instance (${INSTANCES} instances, ${CALLS} model calls each)`);
  console.log(`  Redis commands      ${f1(total / INSTANCES)} (the bench's own INFO/CONFIG/KEYS/XINFO left out)`);
  console.log(
    `    by command        ${counted
      .slice(0, 14)
      .map(([n, c]) => `${n} ${f1(c / INSTANCES)}`)
      .join(', ')}`,
  );
  console.log(
    `  network bytes       in ${kb(r.netIn / INSTANCES)}, out ${kb(r.netOut / INSTANCES)} (incl. the bench's INFO polls)`,
  );
  console.log(`  stream entries      up ${f1(r.upEntries / INSTANCES)}, down ${f1(r.downEntries / INSTANCES)}`);
  console.log(`  redis-server CPU    ${f1(r.cpuMs / INSTANCES)} ms`);
  console.log(
    `  Redis memory        peak ${kb(r.peakMemory - r.baseMemory)} above the start (${f1((r.peakMemory - r.baseMemory) / 1024 / 1024)} MB for the run)`,
  );
  console.log(
    `  rates               ${f1(total / (m.ms / 1000))} Redis commands/s, ${f1(r.upEntries / (m.ms / 1000) / m.parallelism)} up entries/s per running agent`,
  );
}

// ---- main ----------------------------------------------------------------------------------------

console.log(
  `distributed fan-out: ${INSTANCES} instances x ${CALLS} scripted calls of ${DELAY_MS} ms, worker concurrency C = ${C}; ` +
    `coordinator in this process, workers = \`node ${BUILD ? '<build>/dist/cli/main.js' : '--import tsx src/cli/main.ts'} worker --concurrency ${C}\` (${BUILD ? 'compiled JavaScript' : 'TypeScript through tsx'})`,
);
console.log(
  `NOTE: this machine has ${availableParallelism()} cores: 3 worker processes share them with the coordinator and redis-server, ` +
    'so "3 workers" measures the executor\'s overhead rather than the scaling of separate machines.\n',
);

const redis = await startRedis();
const stats = new Redis(redis.url, { maxRetriesPerRequest: null });
const monitorAt = args.indexOf('--monitor');
const monitor = monitorAt >= 0 ? await new Redis(redis.url).monitor() : undefined;
if (monitor) {
  const file = resolve(args[monitorAt + 1]!);
  const lines: string[] = [];
  monitor.on('monitor', (time: string, cmd: string[], source: string) => {
    lines.push(
      `${time} ${source} ${cmd.map((a) => (a.length > 80 ? `${a.slice(0, 80)}…(${a.length})` : a)).join(' ')}`,
    );
    if (lines.length >= 1000) writeFileSync(file, `${lines.splice(0).join('\n')}\n`, { flag: 'a' });
  });
  process.on('exit', () => writeFileSync(file, `${lines.join('\n')}\n`, { flag: 'a' }));
}

async function fanOuts(): Promise<void> {
  const runs: Measured[] = [];
  if (!args.includes('--no-local')) {
    runs.push(await localRun(C));
    printRun(runs.at(-1)!);
    runs.push(await localRun(3 * C));
    printRun(runs.at(-1)!);
  }
  const one = [await startWorker(redis.url, 'w1')];
  runs.push(await distributedRun(redis, stats, one));
  printRun(runs.at(-1)!);
  await stopWorkers(one);
  const three = await Promise.all(['w3a', 'w3b', 'w3c'].map((n) => startWorker(redis.url, n)));
  runs.push(await distributedRun(redis, stats, three));
  printRun(runs.at(-1)!);
  const idle = await idleLoad(stats, three.length, IDLE_S);
  await stopWorkers(three);
  const clientsAfter = Number(parseInfo(await stats.info('clients')).get('connected_clients'));

  const byLabel = (p: string): Measured | undefined => runs.find((r) => r.label.startsWith(p));
  const d1 = byLabel('redis, 1 ')!;
  const d3 = byLabel('redis, 3 ')!;
  const l1 = byLabel(`local pool, concurrency ${C}`);
  const l3 = byLabel(`local pool, concurrency ${3 * C}`);
  console.log(`\nspeedup of 3 workers over 1: ${(d1.ms / d3.ms).toFixed(2)}x (ideal 3.00x)`);
  if (l1) console.log(`redis 1 worker / local pool concurrency ${C}: ${(d1.ms / l1.ms).toFixed(2)}x the wall time`);
  if (l3)
    console.log(`redis 3 workers / local pool concurrency ${3 * C}: ${(d3.ms / l3.ms).toFixed(2)}x the wall time`);
  printRedis(d1);
  printRedis(d3);
  console.log(
    `\nidle workers: ${f1(idle.perWorkerPerSec)} Redis commands/s per worker (${IDLE_S} s with ${three.length} idle workers; top: ${idle.top})`,
  );
  console.log(`Redis connections per worker process: ${f1((idle.clients - clientsAfter) / three.length)}`);
}

let exitCode = 0;
try {
  if (args.includes('--takeover')) await takeover(redis.url);
  else await fanOuts();
  if (PROFILE_DIR) console.log(`\nworker ${summarizeProfiles(PROFILE_DIR, INSTANCES)}`);
} catch (err) {
  console.error(err instanceof Error ? err.stack : String(err));
  exitCode = 1;
} finally {
  stats.disconnect();
  monitor?.disconnect();
  await redis.stop();
  if (args.includes('--keep')) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  if (BUILD) rmSync(BUILD, { recursive: true, force: true });
}
process.exit(exitCode);
