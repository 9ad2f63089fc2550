// Session store at scale: append N realistic entries (1-2 KB: user prompts, assistant replies
// with tool calls, tool results), open the file and rebuild the context (with and without a
// compaction in the middle), and fork (rewind to the middle + append 3 + rebuild). Every phase
// runs in a fresh child process so its peak RSS is its own. The same phases run against the
// reference implementation's SessionManager (@mariozechner/pi-coding-agent, installed only for
// this bench in bench/node_modules) on the same generated workload, and the ratios are printed.
//
//   npm run bench -- session        (or: node --import tsx bench/session.bench.ts)
//
// Setup: if bench/node_modules is missing, this script runs `npm ci` in bench/ (the pinned
// version is in bench/package.json and its lockfile). Without network the reference columns are
// skipped and our numbers are still printed.
//
// Sizes: 10k and 100k entries in one run (BENCH_SESSION_N=10000,100000; BENCH_SESSION_ROUNDS=3).
// Goals (issue #32): open + rebuild >= 5x faster than the reference at both sizes and <= 50 % of
// its peak RSS at 10k; append <= 10 µs/entry at 100k; rewind + append 3 + rebuild <= 1 ms cold
// (the first operation after opening) at 100k. The naive floor (session-workload.ts) runs beside
// both, and the end of the output prints each goal as now/goal (session-report.ts).
// Durability point measured here (src/session/session-store.ts): by default ('batched') an entry's
// line is written, with the others of the same synchronous stretch, at the next microtask
// checkpoint or when the batch passes 256 KB; the row "durable on return" is writeMode
// 'immediate' (written before append*() returns). The append figures include the final close(),
// which writes the last batch. No fsync (see src/session/jsonl-file-storage.ts).
// The row "with the secret redactor" is how the runtime appends when an API key is set (every
// line checked for the key; src/session/redact.ts). Two rows show where the append time goes:
// our store with a storage that drops the lines (serialized and staged, not written), and
// JSON.stringify of each entry while keeping it, with no store at all: what any store built on
// JSON.stringify pays before it writes a byte (ours serializes with src/session/stringify-json.ts).
// "A plain store" is the other yardstick (14 µs there): a Map index and one write(2) per
// entry.
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentMessage } from '../src/agent/types.js';
import { createRedactor } from '../src/session/redact.js';
import { SessionStore } from '../src/session/session-store.js';
import type { SessionStorage } from '../src/session/storage.js';
import { printGoals, printSize, type Results, type Sample } from './session-report.js';
import { REF_PACKAGE, loadReference, naiveContext, naiveOpen, workload } from './session-workload.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
/** Session sizes of one run (comma-separated in BENCH_SESSION_N); a phase's child gets one. */
const SIZES = (process.env.BENCH_SESSION_N ?? '10000,100000').split(',').map(Number);
const N = SIZES[0]!;
const FORK_REPEATS = 20;
const ROUNDS = Number(process.env.BENCH_SESSION_ROUNDS ?? 3);

// ---- phases (run in a child process) ----------------------------------------------------------

const BLOCK = 50;

/**
 * Appends the workload in blocks of BLOCK messages: each block is generated untimed, then appended
 * under one pair of clock readings (a reading per entry costs about a microsecond of its own on a
 * slow machine). `afterBlock` runs untimed between blocks with the count appended so far.
 */
function timeAppends(append: (m: AgentMessage) => unknown, afterBlock: (count: number) => void): number {
  const messages = workload(N);
  let ms = 0;
  let count = 0;
  for (;;) {
    const block: AgentMessage[] = [];
    for (let r = messages.next(); !r.done; r = messages.next()) if (block.push(r.value) === BLOCK) break;
    if (block.length === 0) return ms;
    const t0 = performance.now();
    for (const m of block) append(m);
    ms += performance.now() - t0;
    count += block.length;
    afterBlock(count);
  }
}

type PhaseResult = Record<string, number>;
const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;
const COMPACT_AT = () => Math.floor(N / 2);
const summary = '## Goal\nBenchmark summary\n\n## Progress\n### Done\n- [x] half of the work\n'.repeat(20);

async function phase(fullName: string, dir: string): Promise<PhaseResult> {
  // "<phase>:scratch" appends into a throwaway file (repeated rounds); otherwise into the files
  // the open and fork phases read.
  const [name, where] = fullName.split(':') as [string, string | undefined];
  const scratch = where === 'scratch' ? mkdtempSync(join(dir, 'scratch-')) : undefined;
  const ours = (kind: string) => join(scratch ?? dir, `ours-${kind}.jsonl`);
  const refDir = (kind: string) => join(scratch ?? dir, `ref-${kind}`);
  const refFile = (kind: string) => {
    const d = refDir(kind);
    return join(d, readdirSync(d).find((f) => f.endsWith('.jsonl'))!);
  };
  switch (name) {
    case 'baseline':
      return {};
    case 'raw-writeSync':
    case 'raw-appendFileSync': {
      // The write primitive alone, same lines: an fd kept open vs open/append/close per line.
      const path = join(dir, `${name}.jsonl`);
      const lines: string[] = [];
      for (const m of workload(Math.min(N, 20_000)))
        lines.push(
          `${JSON.stringify({
            type: 'message',
            id: 'abcdef01',
            parentId: 'abcdef00',
            timestamp: new Date().toISOString(),
            message: m,
          })}\n`,
        );
      const t0 = performance.now();
      if (name === 'raw-writeSync') {
        const fd = openSync(path, 'a');
        for (const l of lines) writeSync(fd, l);
        closeSync(fd);
      } else for (const l of lines) appendFileSync(path, l);
      return { usPerEntry: ((performance.now() - t0) * 1000) / lines.length };
    }
    case 'append-ours':
    case 'append-ours-immediate':
    case 'append-ours-redact':
    case 'append-ours-compacted': {
      const kind = name === 'append-ours' ? 'plain' : name.replace('append-ours-', '');
      // -redact: as the runtime runs with an API key, every line passes the secret redactor.
      const redact = name.endsWith('redact')
        ? createRedactor([{ name: 'ANTHROPIC_API_KEY', value: `sk-ant-api03-${'k'.repeat(95)}` }])
        : undefined;
      const s = SessionStore.create(ours(kind), {
        cwd: '/bench',
        writeMode: name.endsWith('immediate') ? 'immediate' : 'batched',
        ...(redact ? { redact } : {}),
      });
      let compacted = !name.endsWith('compacted');
      let appendMs = timeAppends(
        (m) => s.appendMessage(m),
        (count) => {
          if (compacted || count < COMPACT_AT()) return;
          compacted = true;
          s.appendCompaction(summary, s.getPath()[Math.max(0, count - 60)]!.id, 150_000);
        },
      );
      const t0 = performance.now();
      s.close(); // writes the last batch: part of the cost
      appendMs += performance.now() - t0;
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      return { usPerEntry: (appendMs * 1000) / N };
    }
    case 'append-ours-nowrite': {
      // Where the append time goes: our store with a storage that drops the lines (serialize,
      // index, stage; no write(2)) ...
      let appends = 0;
      const discard: SessionStorage = {
        path: undefined,
        get appendCount() {
          return appends;
        },
        readLines: () => ({ exists: false, endsWithNewline: true, bytes: 0 }),
        append: () => void appends++,
        replaceAll: () => undefined,
        backup: () => undefined,
        close: () => undefined,
      };
      const s = SessionStore.fromStorage(discard, { cwd: '/bench' });
      let appendMs = timeAppends(
        (m) => s.appendMessage(m),
        () => undefined,
      );
      const t0 = performance.now();
      s.close();
      appendMs += performance.now() - t0;
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      return { usPerEntry: (appendMs * 1000) / N };
    }
    case 'stringify-keep': {
      // ... and no store at all: JSON.stringify of each entry, keeping the entry, which any store
      // built on JSON.stringify pays (the reference included).
      const kept: unknown[] = [];
      let chars = 0;
      const ms = timeAppends(
        (m) => {
          const e = {
            type: 'message',
            id: 'abcdef01',
            parentId: 'abcdef00',
            timestamp: '2026-01-01T00:00:00.000Z',
            message: m,
          };
          kept.push(e);
          chars += JSON.stringify(e).length;
        },
        () => undefined,
      );
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      return { usPerEntry: (ms * 1000) / N, chars };
    }
    case 'append-plain': {
      // The other yardstick, "a plain correct store" (14 µs there): a Map index, and each
      // entry serialized and written with its own write(2) before append returns.
      const fd = openSync(join(scratch ?? dir, 'plain-store.jsonl'), 'a');
      const byId = new Map<string, unknown>();
      let parentId: string | null = null;
      let n = 0;
      let ms = timeAppends(
        (m) => {
          const e = {
            type: 'message',
            id: (n++).toString(16).padStart(8, '0'),
            parentId,
            timestamp: new Date().toISOString(),
            message: m,
          };
          byId.set(e.id, e);
          parentId = e.id;
          writeSync(fd, `${JSON.stringify(e)}\n`);
        },
        () => undefined,
      );
      const t0 = performance.now();
      closeSync(fd);
      ms += performance.now() - t0;
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      return { usPerEntry: (ms * 1000) / N };
    }
    case 'append-ref':
    case 'append-ref-compacted': {
      const { SessionManager } = await loadReference();
      const d = refDir(name.endsWith('compacted') ? 'compacted' : 'plain');
      mkdirSync(d, { recursive: true });
      const s = SessionManager.create('/bench', d);
      let compacted = !name.endsWith('compacted');
      let last = '';
      const appendMs = timeAppends(
        (m) => (last = s.appendMessage(m)),
        (count) => {
          if (compacted || count < COMPACT_AT()) return;
          compacted = true;
          const path = s.getBranch(last);
          s.appendCompaction(summary, path[Math.max(0, path.length - 60)]!.id, 150_000);
        },
      );
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      return { usPerEntry: (appendMs * 1000) / N };
    }
    case 'open-ours':
    case 'open-ours-compacted': {
      const t0 = performance.now();
      const s = SessionStore.open(ours(name.endsWith('compacted') ? 'compacted' : 'plain'));
      const t1 = performance.now();
      const ctx = s.buildContext();
      const t2 = performance.now();
      if (s.warnings.length > 0) throw new Error(s.warnings.join('\n'));
      return { openMs: t1 - t0, rebuildMs: t2 - t1, totalMs: t2 - t0, messages: ctx.messages.length };
    }
    case 'open-ref':
    case 'open-ref-compacted': {
      const { SessionManager } = await loadReference();
      const kind = name.endsWith('compacted') ? 'compacted' : 'plain';
      const t0 = performance.now();
      const s = SessionManager.open(refFile(kind), refDir(kind));
      const t1 = performance.now();
      const ctx = s.buildSessionContext();
      const t2 = performance.now();
      return { openMs: t1 - t0, rebuildMs: t2 - t1, totalMs: t2 - t0, messages: ctx.messages.length };
    }
    case 'open-floor': {
      // The naive floor: the whole file as one string, split, JSON.parse per line, a Map by id,
      // and the context by walking parent links from the last entry. No damage handling.
      const t0 = performance.now();
      const naive = naiveOpen(ours('plain'));
      const t1 = performance.now();
      const messages = naiveContext(naive, naive.leaf).length;
      const t2 = performance.now();
      return { openMs: t1 - t0, rebuildMs: t2 - t1, totalMs: t2 - t0, messages };
    }
    case 'fork-floor': {
      // The naive floor of a rewind: move the leaf, append 3 (each written with writeSync on a
      // kept fd, indexed in the Map), rebuild by walking parent links. Same targets as ours.
      const scratch = mkdtempSync(join(dir, 'fork-'));
      const copy = join(scratch, 'session.jsonl');
      copyFileSync(ours('plain'), copy);
      const naive = naiveOpen(copy);
      const fd = openSync(copy, 'a');
      const ids: string[] = [];
      for (let e = naive.byId.get(naive.leaf); e; e = e.parentId === null ? undefined : naive.byId.get(e.parentId))
        ids.push(e.id);
      ids.reverse();
      const extra = [...workload(3)];
      const times: number[] = [];
      let messages = 0;
      let next = 0;
      for (let r = 0; r < FORK_REPEATS; r++) {
        const target = ids[(Math.floor(ids.length / 2) + r * 97) % ids.length]!;
        const t0 = performance.now();
        let leaf = target;
        for (const m of extra) {
          const e = {
            type: 'message',
            id: `f${(next++).toString(16).padStart(7, '0')}`,
            parentId: leaf,
            timestamp: new Date().toISOString(),
            message: m,
          };
          writeSync(fd, `${JSON.stringify(e)}\n`);
          naive.byId.set(e.id, e);
          leaf = e.id;
        }
        messages = naiveContext(naive, leaf).length;
        times.push(performance.now() - t0);
      }
      closeSync(fd);
      rmSync(scratch, { recursive: true, force: true });
      const sorted = [...times].sort((a, b) => a - b);
      return { firstMs: times[0]!, medianMs: sorted[Math.floor(sorted.length / 2)]!, messages };
    }
    case 'fork-ours':
    case 'fork-ref': {
      // Rewind to a point in the middle of the path, append 3 messages, rebuild; repeated at
      // different points (first run cold, then the median).
      // On a copy: the open phases of later rounds must see the untouched files.
      const isRef = name === 'fork-ref';
      const scratch = mkdtempSync(join(dir, 'fork-'));
      const copy = join(scratch, 'session.jsonl');
      copyFileSync(isRef ? refFile('plain') : ours('plain'), copy);
      const ref = isRef ? (await loadReference()).SessionManager.open(copy, scratch) : undefined;
      const s = isRef ? undefined : SessionStore.open(copy);
      const ids = isRef ? ref!.getBranch().map((e) => e.id) : s!.getPath().map((e) => e.id);
      const extra = [...workload(3)];
      const times: number[] = [];
      let messages = 0;
      let firstCpuMs = 0;
      for (let r = 0; r < FORK_REPEATS; r++) {
        const target = ids[(Math.floor(ids.length / 2) + r * 97) % ids.length]!;
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        if (ref) {
          ref.branch(target);
          for (const m of extra) ref.appendMessage(m);
          messages = ref.buildSessionContext().messages.length;
        } else {
          s!.moveLeaf(target);
          for (const m of extra) s!.appendMessage(m);
          messages = s!.buildContext().messages.length;
        }
        times.push(performance.now() - t0);
        // CPU time of the cold round too: on a busy machine the wall time includes waiting for a core.
        if (r === 0) firstCpuMs = cpuMs(process.cpuUsage(c0));
      }
      rmSync(scratch, { recursive: true, force: true });
      const sorted = [...times].sort((a, b) => a - b);
      return { firstMs: times[0]!, firstCpuMs, medianMs: sorted[Math.floor(sorted.length / 2)]!, messages };
    }
    default:
      throw new Error(`unknown phase ${name}`);
  }
}

// ---- parent: orchestrates child processes and prints the table --------------------------------

function runChild(name: string, dir: string, size: number): Sample | { error: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--phase', name, dir], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    env: { ...process.env, BENCH_SESSION_N: String(size) },
  });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{'))
    return { error: (r.stderr || r.stdout).trim().split('\n').slice(-5).join(' | ') };
  return JSON.parse(last) as Sample;
}

function ensureReference(): string | undefined {
  if (existsSync(join(benchDir, 'node_modules', ...REF_PACKAGE.split('/')))) return undefined;
  console.log(`Installing the reference (${REF_PACKAGE}) into bench/node_modules for this benchmark only...`);
  const r = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: benchDir,
    encoding: 'utf8',
  });
  if (r.status !== 0)
    return `npm ci in bench/ failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`;
  return undefined;
}

/** Every phase at one session size: alternating rounds, medians. */
function runSize(size: number, refProblem: string | undefined): Results {
  const dir = mkdtempSync(join(tmpdir(), 'session-bench-'));
  console.log(
    `\n--- ${size.toLocaleString('en-US')} entries, every phase the median of ${ROUNDS} alternating rounds; files in ${dir}`,
  );
  const results: Results = {};
  const once = [
    'baseline',
    'append-ours',
    'append-ours-immediate',
    'append-ours-redact',
    'append-ours-compacted',
    ...(refProblem ? [] : ['append-ref', 'append-ref-compacted']),
    'append-ours-nowrite',
    'stringify-keep',
    'append-plain',
  ];
  const samples: Record<string, Sample[]> = {};
  const sample = (name: string, r: Sample | { error: string }): void => {
    if ('error' in r) results[name] = r;
    else {
      samples[name] ??= [];
      samples[name].push(r);
    }
  };
  // The first append round writes the files the open and fork phases read.
  for (const name of once) sample(name, runChild(name, dir, size));
  // The machine may be shared: ours, the reference and the floor alternate, ROUNDS times, and
  // each phase reports its median, so a burst of load elsewhere hits all sides alike.
  const repeated = ['open', 'open-compacted', 'fork'];
  const appends = [
    'append-ours',
    'append-ours-immediate',
    'append-ours-redact',
    ...(refProblem ? [] : ['append-ref']),
    'append-ours-nowrite',
    'stringify-keep',
    'append-plain',
  ];
  for (let round = 0; round < ROUNDS; round++) {
    if (round > 0) for (const name of appends) sample(name, runChild(`${name}:scratch`, dir, size));
    for (const name of ['raw-writeSync', 'raw-appendFileSync']) sample(name, runChild(name, dir, size));
    for (const base of repeated) {
      const sides = refProblem ? ['ours'] : ['ours', 'ref'];
      if (base !== 'open-compacted') sides.push('floor');
      for (const side of sides) {
        const name = base.replace(/^(open|fork)/, `$1-${side}`);
        sample(name, runChild(name, dir, size));
      }
    }
  }
  for (const [name, list] of Object.entries(samples)) {
    if (results[name]) continue;
    const median: Sample = { peakRssMB: 0 };
    for (const key of Object.keys(list[0]!)) {
      const values = list.map((r) => r[key]!).sort((a, b) => a - b);
      median[key] = values[Math.floor(values.length / 2)]!;
    }
    results[name] = median;
  }
  rmSync(dir, { recursive: true, force: true });
  return results;
}

async function main(): Promise<void> {
  const refProblem = ensureReference();
  if (refProblem) console.log(`Reference unavailable (${refProblem}); printing our numbers only.`);
  console.log(`session bench: sizes ${SIZES.map((n) => n.toLocaleString('en-US')).join(', ')} (BENCH_SESSION_N)`);
  const all = new Map<number, Results>();
  // Timings on a shared machine mean little without its load: printed before and after each size.
  const load = (): string =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(', ');
  console.log(`machine: ${cpus().length} cores, load average ${load()}`);
  for (const size of SIZES) {
    const results = runSize(size, refProblem);
    all.set(size, results);
    printSize(size, results);
    console.log(`load average after this size: ${load()}`);
  }
  printGoals(all);
}

if (process.argv[2] === '--phase') {
  const name = process.argv[3]!;
  const dir = process.argv[4]!;
  phase(name, dir).then(
    (r) => {
      const peakRssMB = process.resourceUsage().maxRSS / 1024;
      console.log(JSON.stringify({ ...r, peakRssMB }));
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.stack : String(err));
      process.exit(1);
    },
  );
} else {
  await main();
}
