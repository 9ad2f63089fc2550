// Orchestration overhead: worker threads versus one process per agent, and the agent-to-agent
// message round trip between two worker threads.
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
//    Goal: threads >= 10x faster and <= 1/5 of the memory.
// 2. Median round trip of a pair message (PairChannel: the zod-validated direct channel of a
//    planner/worker pair) between two worker threads, against a bare MessageChannel ping-pong in
//    the same run. Goal: <= 1.5x the bare round trip.
//
// Both sides load the built dist/ (so module loading is comparable): the bench builds first
// (`npx tsc -p tsconfig.json`; pass --no-build to skip). Run: node --import tsx bench/orchestrator.bench.ts
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { defaultThreadCount } from '../src/orchestrator/pool.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.js');
const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const AGENTS = flag('agents', 32);
const CONCURRENCY = flag('concurrency', AGENTS);
const ROUND_TRIPS = flag('round-trips', 5_000);
/** Rounds of the fan-out comparison (each side once per round, alternating); medians are printed. */
const ROUNDS = flag('rounds', 3);

// ---- build -------------------------------------------------------------------------------------------

if (!args.includes('--no-build')) {
  const t0 = Date.now();
  const b = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.json')],
    { cwd: ROOT, encoding: 'utf8' },
  );
  // Type errors elsewhere still emit JavaScript; only a missing CLI is fatal.
  if (b.status !== 0)
    console.log(`(tsc exited ${b.status}; using what it emitted)\n${b.stdout.split('\n').slice(0, 5).join('\n')}`);
  console.log(`build: ${Date.now() - t0} ms`);
}
if (!existsSync(CLI)) {
  console.error(`${CLI} is missing: build with npx tsc -p tsconfig.json`);
  process.exit(2);
}

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

const PAIR_URL = pathToFileURL(join(ROOT, 'dist/orchestrator/worker/pair.js')).href;

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
  const done = (w: Worker) => new Promise<number[]>((r, j) => (w.once('message', r), w.once('error', j)));
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

// ---- run ---------------------------------------------------------------------------------------------

try {
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
} finally {
  rmSync(work, { recursive: true, force: true });
}
