// Orchestration overhead: worker threads versus one process per agent, the agent-to-agent
// message round trip between two worker threads, a run of 100 and 200 agents, and a fan-out whose
// folders lie inside one git repository (a monorepo).
//
// 1. Fan-out of N agents (default 32), each 3 tool turns + a final answer against the instant
//    scripted model, `concurrency` at a time on both sides (default: all of them at once, as in
//    the reference measurement of 32 subagent processes; `--concurrency 4` for a narrower run):
//    - threads:   `node dist/cli/main.js recipe.yaml` (the coordinator and its worker threads: the
//                 default, agents spread over one thread per core but one, and `--agents-per-thread 1`,
//                 a thread of its own for every agent);
//    - processes: `node dist/cli/main.js agent --provider scripted --script ...`, one per agent.
//    Wall time and peak RSS (sampled from /proc: the one process, or the sum of the live ones);
//    the sides alternate for --rounds rounds (default 3) and each prints its median.
//    Goals: default threads >= 10x faster and <= 1/5 of the memory; a thread per agent (issue 32)
//    >= 5x faster and <= 15 % of the memory.
// 2. Median round trip of a pair message (PairChannel: the zod-validated direct channel of a
//    planner/worker pair) between two worker threads, against a bare MessageChannel ping-pong in
//    the same run. Goal: <= 1.5x the bare round trip.
// 3. Thread start (issue 32): where a worker thread's start goes (a bare thread, the worker module,
//    zod's share of it), time and RSS per thread.
// 4. Scale (issue 32): the same fan-out with 32, 100 and 200 agents, the coordinator in this
//    process (runRecipeFile, as the CLI does): wall time, peak RSS of the process (coordinator and
//    worker threads), and the coordinator's event-loop delay (perf_hooks.monitorEventLoopDelay:
//    p99 and max). The ideal at N agents is the 32-agent wall of the same run times N/32 (linear):
//    goal wall <= 1.5x that, peak RSS <= 1 GiB at 100.
// 5. Monorepo (issue 32): the fan-out with its agent folders inside one git repository (a cwd per
//    package, so every instance takes a workspace snapshot of the repository) against the same
//    folders outside any repository, alternating. Printed: the wall of both, their ratio (goal
//    <= 1.1x: "inside a repository as fast as outside") and the snapshot cost per instance: the
//    extra spread of the instance starts (first to last instance_start) divided by the instances
//    (goal <= 5 ms).
//
// 6. Scale (issue 41): 1,000 agents, 64 at a time (`--thousand N`, `--thousand-at K`), after the
//    lines of 4 (or alone: `--only thousand`): in this process's threads, then through Redis on 3
//    `orchestrate worker` processes. Goals: peak RSS <= 2 GiB, the coordinator's event-loop delay
//    p99 <= 50 ms, and a wall per agent near the 32-agent one (linear). The load is printed beside,
//    and an idle Node process's event-loop delay measured during the same run (the machine's share).
//    A second distributed line starts the 3 workers at nice 10 (every thread: os.setPriority per
//    thread, checked after the run), which models workers on other machines: the coordinator gets
//    the CPU whenever it is runnable instead of sharing 2 cores with 66 agent threads.
//    `--thousand-lines threads,redis,redis-nice` runs some of them; `--coordinator-prof DIR` writes a CPU
//    profile of the coordinator's thread during each (bench/cpu-profile-summary.ts FILE reads it).
//
// Both sides load built JavaScript (so module loading is comparable): the bench compiles src/ with
// tsc into a temp folder first (the shared dist/ is left alone); `--dist DIR` uses a build that is
// already there (a folder holding cli/main.js). `--only fanout,rt,thread,scale,thousand,monorepo` runs some parts.
// Run: node --import tsx bench/orchestrator.bench.ts
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
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { defaultThreadCount } from '../src/orchestrator/execution/pool.js';
import type * as RunRecipeModule from '../src/orchestrator/run-recipe.js';
import { scaleThousand, type ThousandContext } from './scale-thousand.js';
import { withPeakRss } from './side-process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const stringFlag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const AGENTS = flag('agents', 32);
const CONCURRENCY = flag('concurrency', AGENTS);
const ROUND_TRIPS = flag('round-trips', 5_000);
/** Rounds of the fan-out comparison (each side once per round, alternating); medians are printed. */
const ROUNDS = flag('rounds', 3);
const onlyAt = args.indexOf('--only');
const ONLY = new Set(
  onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',') : ['fanout', 'rt', 'thread', 'scale', 'monorepo'],
);

// ---- build -------------------------------------------------------------------------------------------

/** Compiles src/ into a temp folder beside a copy of package.json and a link to node_modules. */
function build(): { dist: string; cleanup: () => void } {
  const out = mkdtempSync(join(tmpdir(), 'orch-bench-build-'));
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
  console.log(`build: ${Date.now() - t0} ms into ${out}`);
  return { dist: join(out, 'dist'), cleanup: () => rmSync(out, { recursive: true, force: true }) };
}

const distAt = args.indexOf('--dist');
const built = distAt >= 0 ? undefined : build();
const DIST = built ? built.dist : resolve(args[distAt + 1] ?? 'dist');
const CLI = join(DIST, 'cli/main.js');
if (!existsSync(CLI)) {
  console.error(`${CLI} is missing: build with npx tsc -p tsconfig.json, or leave out --dist`);
  process.exit(2);
}
const { runRecipeFile } = (await import(
  pathToFileURL(join(DIST, 'orchestrator/run-recipe.js')).href
)) as typeof RunRecipeModule;

// ---- fixtures ----------------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'orch-bench-'));
const names = Array.from({ length: AGENTS }, (_, i) => `a${String(i).padStart(2, '0')}`);
for (const n of names) {
  mkdirSync(join(work, 'agents', n), { recursive: true });
  writeFileSync(join(work, 'agents', n, 'notes.txt'), `notes of ${n}\n`);
}
const SCRIPT = `turns:
  - tools: [{ name: read, args: { path: notes.txt } }]
  - tools: [{ name: ls, args: { path: . } }]
  - tools: [{ name: read, args: { path: notes.txt } }]
  - text: "done"
`;
writeFileSync(join(work, 'script.yaml'), SCRIPT);
writeFileSync(
  join(work, 'recipe.yaml'),
  `name: bench
provider: scripted
script: script.yaml
concurrency: ${CONCURRENCY}
agents:
  reader: { tools: [read, ls] }
tasks:
  - id: fan
    for_each: { glob: "agents/*" }
    agent: reader
    cwd: \${{ item }}
    prompt: "Read the notes"
`,
);

// ---- RSS sampling ---------------------------------------------------------------------------------

function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Samples the summed RSS of the live processes every 5 ms; returns the peak in MB. */
function sampler(live: Set<ChildProcess>): { stop: () => number } {
  let peak = 0;
  const timer = setInterval(() => {
    let sum = 0;
    for (const c of live) if (c.pid) sum += rssKb(c.pid);
    peak = Math.max(peak, sum);
  }, 5);
  return {
    stop: () => {
      clearInterval(timer);
      return peak / 1024;
    },
  };
}

function exited(c: ChildProcess): Promise<number | null> {
  return new Promise((r) => c.on('exit', (code) => r(code)));
}

/** Threads side: the real CLI, with its default thread sharing or a given number of agents per thread. */
async function threadsSide(agentsPerThread?: number): Promise<{ ms: number; peakMb: number }> {
  rmSync(join(work, 'runs'), { recursive: true, force: true });
  const live = new Set<ChildProcess>();
  const s = sampler(live);
  const t0 = performance.now();
  const argv = [CLI, join(work, 'recipe.yaml'), '--run-dir', join(work, 'runs'), '--json'];
  if (agentsPerThread !== undefined) argv.push('--agents-per-thread', String(agentsPerThread));
  const c = spawn(process.execPath, argv, { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(c);
  let err = '';
  c.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const code = await exited(c);
  const ms = performance.now() - t0;
  live.delete(c);
  const peakMb = s.stop();
  if (code !== 0) throw new Error(`the threads run failed (exit ${code}): ${err}`);
  return { ms, peakMb };
}

async function processesSide(): Promise<{ ms: number; peakMb: number }> {
  rmSync(join(work, 'proc-sessions'), { recursive: true, force: true });
  const live = new Set<ChildProcess>();
  const s = sampler(live);
  const t0 = performance.now();
  const queue = [...names];
  const runOne = async (): Promise<void> => {
    for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
      const c = spawn(
        process.execPath,
        [
          CLI,
          'agent',
          '--provider',
          'scripted',
          '--script',
          join(work, 'script.yaml'),
          '--tools',
          'read,ls',
          '--cwd',
          join(work, 'agents', n),
          '--session',
          join(work, 'proc-sessions', `${n}.jsonl`),
          'Read the notes',
        ],
        { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      live.add(c);
      const code = await exited(c);
      live.delete(c);
      if (code !== 0) throw new Error(`agent ${n} exited ${code}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, runOne));
  const ms = performance.now() - t0;
  return { ms, peakMb: s.stop() };
}

// ---- message round trip ---------------------------------------------------------------------------

const PAIR_URL = pathToFileURL(join(DIST, 'orchestrator/worker/pair.js')).href;

/** Worker body (CommonJS via eval): echo or ping over the transferred port, bare or through PairChannel. */
const WORKER = `
const { parentPort } = require('node:worker_threads');
parentPort.once('message', async ({ port, mode, role, n, pairUrl }) => {
  const times = [];
  if (mode === 'bare') {
    if (role === 'echo') { port.on('message', (m) => { if (m === 'end') { port.close(); parentPort.postMessage([]); } else port.postMessage(m); }); return; }
    let i = 0; let t0 = 0;
    port.on('message', () => {
      times.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (++i >= n) { port.postMessage('end'); port.close(); parentPort.postMessage(times); return; }
      t0 = process.hrtime.bigint(); port.postMessage({ type: 'report', round: i, text: 'x' });
    });
    t0 = process.hrtime.bigint(); port.postMessage({ type: 'report', round: 0, text: 'x' });
    return;
  }
  const { PairChannel } = await import(pairUrl);
  const ch = new PairChannel(port);
  if (role === 'echo') {
    for (;;) { const m = await ch.next(); if (m.type !== 'report') break; ch.send({ type: 'verdict', round: m.round, approved: false, text: m.text }); }
    parentPort.postMessage([]);
    return;
  }
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    ch.send({ type: 'report', round: i, text: 'x' });
    await ch.next();
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  ch.send({ type: 'end', reason: 'done' });
  ch.close();
  parentPort.postMessage(times);
});
`;

async function roundTrips(mode: 'bare' | 'pair'): Promise<number[]> {
  const a = new Worker(WORKER, { eval: true });
  const b = new Worker(WORKER, { eval: true });
  const { port1, port2 } = new MessageChannel();
  const done = (w: Worker) =>
    new Promise<number[]>((r, j) => {
      w.once('message', r);
      w.once('error', j);
    });
  const pa = done(a);
  const pb = done(b);
  b.postMessage({ port: port2, mode, role: 'echo', n: ROUND_TRIPS, pairUrl: PAIR_URL }, [port2]);
  a.postMessage({ port: port1, mode, role: 'ping', n: ROUND_TRIPS, pairUrl: PAIR_URL }, [port1]);
  const [times] = await Promise.all([pa, pb]);
  await Promise.all([a.terminate(), b.terminate()]);
  return times.slice(Math.floor(times.length / 10)); // first 10 %: warm-up (JIT, module load)
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

// ---- scale and monorepo: the coordinator in this process -------------------------------------------

/** A fan-out of `n` agents (the same script as above) in `dir`; with `git`, `dir` is one repository. */
function fanOutFolder(dir: string, n: number, withGit: boolean, concurrency = n): string {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) {
    const d = join(dir, 'agents', `a${String(i).padStart(3, '0')}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'notes.txt'), `notes of agent ${i}\n`);
  }
  writeFileSync(join(dir, 'script.yaml'), SCRIPT);
  writeFileSync(
    join(dir, 'recipe.yaml'),
    `name: bench\nprovider: scripted\nscript: script.yaml\nconcurrency: ${concurrency}\nagents:\n  reader: { tools: [read, ls] }\n` +
      `tasks:\n  - id: fan\n    for_each: { glob: "agents/*" }\n    agent: reader\n    cwd: \${{ item }}\n    prompt: "Read the notes"\n`,
  );
  if (withGit) {
    writeFileSync(join(dir, '.gitignore'), '.orchestrate/\nruns/\n');
    const g = (...a: string[]) => {
      const r = spawnSync('git', a, { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr}`);
    };
    g('init', '-q');
    g('add', '-A');
    g('-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m', 'packages');
  }
  return dir;
}

interface InProcessRun {
  ms: number;
  peakMb: number;
  /** The coordinator's event-loop delay, ms. */
  delayP99: number;
  delayMax: number;
  /** First to last instance_start, ms. */
  startSpreadMs: number;
}

/** One run of the fan-out in `dir` with the coordinator in this process (`executor`: a distributed run's). */
async function inProcessRun(dir: string, n: number, executor?: unknown): Promise<InProcessRun> {
  rmSync(join(dir, 'runs'), { recursive: true, force: true });
  const h = monitorEventLoopDelay({ resolution: 10 });
  // RSS is sampled by another process: a timer here would add its /proc reads to the delay measured.
  const { value: measured, peakMb } = await withPeakRss(async () => {
    h.enable();
    const t0 = performance.now();
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { runsDir: join(dir, 'runs'), ...(executor ? { executor: executor as never } : {}) },
    );
    const ms = performance.now() - t0;
    h.disable();
    return { r, ms };
  });
  const { r, ms } = measured;
  if (!r.ok || r.outcome.status !== 'succeeded')
    throw new Error(`the ${n}-agent run failed: ${JSON.stringify(r).slice(0, 500)}`);
  const starts = readFileSync(join(r.outcome.dir, 'run.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"instance_start"'))
    .map((l) => (JSON.parse(l) as { ts: number }).ts);
  if (starts.length !== n) throw new Error(`${starts.length} of ${n} instances started`);
  return {
    ms,
    peakMb,
    delayP99: h.percentile(99) / 1e6,
    delayMax: h.max / 1e6,
    startSpreadMs: Math.max(...starts) - Math.min(...starts),
  };
}

/**
 * Where a worker thread's start goes: a bare thread against one that loads the worker module
 * (worker/worker.js, what every agent thread loads), split into zod (the tool and message schemas'
 * library, loaded first) and the rest of the module graph; time in the thread and RSS per thread
 * with 8 threads held at once.
 */
async function threadStart(): Promise<void> {
  const workerUrl = pathToFileURL(join(DIST, 'orchestrator/worker/worker.js')).href;
  const body = (load: boolean) => `
const { parentPort } = require('node:worker_threads');
const t0 = performance.now();
(async () => {
  let zodMs = 0;
  if (${load}) { await import('zod'); zodMs = performance.now() - t0; await import(${JSON.stringify(workerUrl)}); }
  parentPort.postMessage({ ms: performance.now() - t0, zodMs, heap: process.memoryUsage().heapUsed });
  parentPort.once('message', () => process.exit(0));
})();`;
  const startThreads = async (n: number, load: boolean) => {
    const rss0 = process.memoryUsage.rss();
    const ws: Worker[] = [];
    const out: { ms: number; zodMs: number; heap: number; wallMs: number }[] = [];
    for (let k = 0; k < n; k++) {
      const t0 = performance.now();
      const w = new Worker(body(load), { eval: true, env: process.env, execArgv: [] });
      // Resolved from the bench's folder: zod as the product loads it.
      ws.push(w);
      const m = await new Promise<{ ms: number; zodMs: number; heap: number }>((r, j) => {
        w.once('message', r);
        w.once('error', j);
      });
      out.push({ ...m, wallMs: performance.now() - t0 });
    }
    const perThreadMb = (process.memoryUsage.rss() - rss0) / n / 1024 / 1024;
    for (const w of ws) w.postMessage('exit');
    await Promise.all(ws.map((w) => new Promise((r) => w.once('exit', r))));
    return { out, perThreadMb };
  };
  const n = 8;
  await startThreads(2, true); // warm-up: file caches
  const bare = await startThreads(n, false);
  const loaded = await startThreads(n, true);
  const med = (xs: number[]) => median(xs);
  const wall = med(loaded.out.map((x) => x.wallMs));
  const zod = med(loaded.out.map((x) => x.zodMs));
  const all = med(loaded.out.map((x) => x.ms));
  console.log(
    `thread start (${n} threads one after another, median; RSS per thread with ${n} held at once):\n` +
      `  bare thread                ${med(bare.out.map((x) => x.wallMs))
        .toFixed(0)
        .padStart(5)} ms   ${bare.perThreadMb.toFixed(1)} MB\n` +
      `  with the worker module     ${wall.toFixed(0).padStart(5)} ms   ${loaded.perThreadMb.toFixed(1)} MB   heap ${(med(loaded.out.map((x) => x.heap)) / 1024 / 1024).toFixed(1)} MB` +
      `   (loading in the thread ${all.toFixed(0)} ms: zod ${zod.toFixed(0)} ms = ${((zod / all) * 100).toFixed(0)}%, the rest of the graph ${(all - zod).toFixed(0)} ms)`,
  );
}

async function scale(): Promise<void> {
  const sizes = [32, 100, 200];
  console.log(
    `scale: fan-outs of ${sizes.join(', ')} agents x (3 tool turns + answer), instant scripted model, all at once, coordinator in this process (default threads); median of ${ROUNDS} rounds`,
  );
  const dirs = new Map(sizes.map((n) => [n, fanOutFolder(join(work, `scale-${n}`), n, false)]));
  await inProcessRun(dirs.get(32)!, 32); // warm-up: file caches, JIT
  const runs = new Map<number, InProcessRun[]>(sizes.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++)
    for (const n of sizes) runs.get(n)!.push(await inProcessRun(dirs.get(n)!, n));
  const mid = (n: number, k: keyof InProcessRun): number => median(runs.get(n)!.map((r) => r[k]));
  const base = mid(32, 'ms');
  for (const n of sizes) {
    const ideal = (base * n) / 32;
    const ms = mid(n, 'ms');
    const peak = mid(n, 'peakMb');
    const goals =
      n === 32
        ? '(the baseline of the ideal)'
        : `= ${(ms / ideal).toFixed(2)}x the ideal ${ideal.toFixed(0)} ms (goal <= 1.5x, now/goal ${(ms / ideal / 1.5).toFixed(2)})` +
          (n === 100
            ? `; peak RSS ${(peak / 1024).toFixed(2)} GiB (goal <= 1 GiB, now/goal ${(peak / 1024).toFixed(2)})`
            : '');
    console.log(
      `  ${String(n).padStart(3)} agents  wall ${ms.toFixed(0).padStart(6)} ms (${(ms / n).toFixed(1)} ms/agent)  peak RSS ${peak.toFixed(0).padStart(5)} MB  ` +
        `event-loop delay p99 ${mid(n, 'delayP99').toFixed(1)} ms, max ${mid(n, 'delayMax').toFixed(1)} ms  ${goals}`,
    );
  }
  await scaleThousand(thousandContext(), base / 32);
}

/** What the 1,000-agent lines (scale-thousand.ts) need of this bench. */
function thousandContext(): ThousandContext {
  return {
    work,
    dist: DIST,
    cli: CLI,
    agents: flag('thousand', 1_000),
    at: flag('thousand-at', 64),
    folder: (dir, n, at) => fanOutFolder(dir, n, false, at),
    run: inProcessRun,
    ...(stringFlag('thousand-lines') ? { lines: new Set(stringFlag('thousand-lines')!.split(',')) } : {}),
    ...(stringFlag('coordinator-prof') ? { profileDir: resolve(stringFlag('coordinator-prof')!) } : {}),
  };
}

async function monorepo(): Promise<void> {
  const n = AGENTS;
  console.log(
    `monorepo: ${n} agents x (3 tool turns + answer), instant scripted model, a cwd per package inside one git repository vs the same folders outside one; coordinator in this process; median of ${ROUNDS} alternating rounds`,
  );
  const inside = fanOutFolder(join(work, 'mono-git'), n, true);
  const outside = fanOutFolder(join(work, 'mono-plain'), n, false);
  await inProcessRun(inside, n);
  await inProcessRun(outside, n);
  const a: InProcessRun[] = [];
  const b: InProcessRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    a.push(await inProcessRun(inside, n));
    b.push(await inProcessRun(outside, n));
  }
  const ms = (xs: InProcessRun[]) => median(xs.map((x) => x.ms));
  const spread = (xs: InProcessRun[]) => median(xs.map((x) => x.startSpreadMs));
  console.log(
    `  inside one repository   wall ${ms(a).toFixed(0).padStart(6)} ms   instance starts spread over ${spread(a).toFixed(0)} ms   (runs: ${a.map((x) => x.ms.toFixed(0)).join(', ')} ms)`,
  );
  console.log(
    `  outside any repository  wall ${ms(b).toFixed(0).padStart(6)} ms   instance starts spread over ${spread(b).toFixed(0)} ms   (runs: ${b.map((x) => x.ms.toFixed(0)).join(', ')} ms)`,
  );
  const perInstance = Math.max(0, spread(a) - spread(b)) / n;
  console.log(
    `  inside / outside: ${(ms(a) / ms(b)).toFixed(2)}x the wall time (goal <= 1.1x, now/goal ${(ms(a) / ms(b) / 1.1).toFixed(2)}); workspace snapshot ${perInstance.toFixed(1)} ms per instance (extra start spread / ${n}; goal <= 5 ms = ${(perInstance / 5).toFixed(2)}x the goal)`,
  );
}

// ---- run ---------------------------------------------------------------------------------------------

async function fanOut(): Promise<void> {
  console.log(
    `fan-out: ${AGENTS} agents x (3 tool turns + answer), instant scripted model, concurrency ${CONCURRENCY} on both sides; median of ${ROUNDS} alternating rounds`,
  );
  // One warm-up of each side so file caches are equally hot; then the sides alternate, so a burst
  // of load elsewhere on a shared machine hits both alike, and each reports its median.
  await threadsSide();
  await processesSide();
  const runs: Record<'threads' | 'isolated' | 'procs', { ms: number; peakMb: number }[]> = {
    threads: [],
    isolated: [],
    procs: [],
  };
  for (let round = 0; round < ROUNDS; round++) {
    runs.threads.push(await threadsSide());
    runs.isolated.push(await threadsSide(1));
    runs.procs.push(await processesSide());
  }
  const mid = (xs: { ms: number; peakMb: number }[]) => ({
    ms: median(xs.map((x) => x.ms)),
    peakMb: median(xs.map((x) => x.peakMb)),
  });
  const threads = mid(runs.threads);
  const isolated = mid(runs.isolated);
  const procs = mid(runs.procs);
  const row = (label: string, r: { ms: number; peakMb: number }, all: { ms: number }[]) =>
    console.log(
      `  ${label.padEnd(44)} ${r.ms.toFixed(0).padStart(6)} ms   peak RSS ${r.peakMb.toFixed(0).padStart(5)} MB   (runs: ${all.map((x) => x.ms.toFixed(0)).join(', ')} ms)`,
    );
  row(`worker threads (default: ${defaultThreadCount()} on ${availableParallelism()} cores)`, threads, runs.threads);
  row('worker threads (--agents-per-thread 1)', isolated, runs.isolated);
  row('process per agent (CLI agent)', procs, runs.procs);
  for (const [label, r] of [
    ['default threads', threads],
    ['a thread per agent', isolated],
  ] as const) {
    console.log(
      `  ${label}: ${(procs.ms / r.ms).toFixed(1)}x faster (goal >= 10x), ${((r.peakMb / procs.peakMb) * 100).toFixed(0)}% of the memory (goal <= 20%)`,
    );
  }
  const speedup = procs.ms / isolated.ms;
  const share = isolated.peakMb / procs.peakMb;
  console.log(
    `  a thread per agent vs a process per agent (issue 32): ${speedup.toFixed(1)}x faster = ${(speedup / 5).toFixed(2)} of the goal (>= 5x), ` +
      `${(share * 100).toFixed(0)}% of the memory = ${(share / 0.15).toFixed(2)}x the goal (<= 15%)`,
  );
}

async function messageRoundTrip(): Promise<void> {
  const bareRuns: number[] = [];
  const pairRuns: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bareRuns.push(median(await roundTrips('bare')));
    pairRuns.push(median(await roundTrips('pair')));
  }
  const bare = median(bareRuns);
  const pair = median(pairRuns);
  console.log(
    `message round trip between two worker threads (median of ${ROUND_TRIPS} per round, after warm-up; median of ${ROUNDS} alternating rounds):`,
  );
  console.log(`  bare MessageChannel ping-pong  ${bare.toFixed(1)} µs`);
  console.log(
    `  pair channel (validated)       ${pair.toFixed(1)} µs   = ${(pair / bare).toFixed(2)}x bare (goal <= 1.5x)`,
  );
}

try {
  console.log(`load: ${readFileSync('/proc/loadavg', 'utf8').trim()} (${availableParallelism()} cores)`);
  if (ONLY.has('fanout')) await fanOut();
  if (ONLY.has('rt')) await messageRoundTrip();
  if (ONLY.has('thread')) await threadStart();
  if (ONLY.has('scale')) await scale();
  // Only the 1,000-agent lines (without the 32/100/200 rounds): --only thousand.
  if (ONLY.has('thousand') && !ONLY.has('scale')) await scaleThousand(thousandContext(), undefined);
  if (ONLY.has('monorepo')) await monorepo();
  console.log(`load: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
} finally {
  rmSync(work, { recursive: true, force: true });
  built?.cleanup();
}
