// Session store at scale: append N realistic entries (1-2 KB: user prompts, assistant replies
// with tool calls, tool results), open the file and rebuild the context (with and without a
// compaction in the middle), and fork (rewind to the middle + append 3 + rebuild). Every phase
// runs in a fresh child process so its peak RSS is its own. The same phases run against the
// reference implementation's SessionManager (@mariozechner/pi-coding-agent, installed only for
// this bench in bench/node_modules) on the same generated workload, and the ratios are printed.
//
//   node --import tsx bench/session.bench.ts          (N = 100,000; BENCH_SESSION_N overrides)
//
// Setup: if bench/node_modules is missing, this script runs `npm ci` in bench/ (the pinned
// version is in bench/package.json and its lockfile). Without network the reference columns are
// skipped and our numbers are still printed.
//
// Goals: open + rebuild >= 3x faster than the reference and <= 60 % of its peak RSS;
// append <= 10 µs/entry (set against the reference's 19.6 µs measured on this machine kind, so
// also judged as >= 1.96x faster than the reference in the same run); rewind + append 3 +
// rebuild <= 1 ms. The verdicts are printed at the end.
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
// "A plain store" is the issue's other yardstick (14 µs there): a Map index and one write(2) per
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
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentMessage } from '../src/agent/types.js';
import type { AssistantMessage } from '../src/ai/types.js';
import { emptyUsage } from '../src/ai/usage.js';
import { createRedactor } from '../src/session/redact.js';
import { SessionStore } from '../src/session/session-store.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import type { SessionStorage } from '../src/session/storage.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_SESSION_N ?? 100_000);
const REF_PACKAGE = '@mariozechner/pi-coding-agent';
const FORK_REPEATS = 20;
const ROUNDS = Number(process.env.BENCH_SESSION_ROUNDS ?? 3);

// ---- workload -------------------------------------------------------------------------------

const VOCAB = (
  'the function returns a promise that resolves when the file is written and the test checks ' +
  'that every entry keeps its parent id so the context can be rebuilt after a crash while the ' +
  'agent edits src/session/store.ts and runs npm test with vitest in the repository root folder'
).split(' ');

function prose(rand: () => number, bytes: number): string {
  let out = '';
  while (out.length < bytes) out += VOCAB[Math.floor(rand() * VOCAB.length)] + (rand() < 0.08 ? '.\n' : ' ');
  return out;
}

function code(rand: () => number, bytes: number): string {
  let out = '';
  let line = 1;
  while (out.length < bytes) {
    out += `${line++}\texport function step${Math.floor(rand() * 1000)}(input: string): number { return input.length * ${Math.floor(rand() * 97)}; }\n`;
  }
  return out;
}

/** Turn pattern: user, assistant(tool call), tool result, assistant(tool call), tool result, assistant(text). */
function* workload(count: number): Generator<AgentMessage> {
  const rand = seededRandom(12345); // the same messages in every process
  let t = 1_700_000_000_000;
  const usage = () => {
    const u = emptyUsage();
    u.input = 1000 + Math.floor(rand() * 50_000);
    u.output = 200;
    u.totalTokens = u.input + u.output;
    return u;
  };
  const assistant = (
    content: AssistantMessage['content'],
    stopReason: AssistantMessage['stopReason'],
  ): AssistantMessage => ({
    role: 'assistant',
    content,
    api: 'anthropic-messages',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    usage: usage(),
    stopReason,
    timestamp: (t += 900),
  });
  for (let i = 0; i < count; ) {
    const k = i % 6;
    if (k === 0)
      yield {
        role: 'user',
        content: [{ type: 'text', text: prose(rand, 800 + rand() * 900) }],
        timestamp: (t += 1000),
      };
    else if (k === 1 || k === 3) {
      const id = `toolu_${i.toString(36)}`;
      const args =
        rand() < 0.5
          ? { path: `src/module${Math.floor(rand() * 300)}/file${i}.ts` }
          : { command: `npm test -- --grep "${prose(rand, 40).trim()}"` };
      yield assistant(
        [
          { type: 'text', text: prose(rand, 600 + rand() * 700) },
          { type: 'toolCall', id, name: 'path' in args ? 'read' : 'bash', arguments: args },
        ],
        'toolUse',
      );
    } else if (k === 2 || k === 4) {
      yield {
        role: 'toolResult',
        toolCallId: `toolu_${(i - 1).toString(36)}`,
        toolName: 'read',
        content: [{ type: 'text', text: code(rand, 900 + rand() * 900) }],
        isError: false,
        timestamp: (t += 300),
      };
    } else yield assistant([{ type: 'text', text: prose(rand, 900 + rand() * 800) }], 'stop');
    i++;
  }
}

// ---- the reference's API (checked in bench/node_modules/.../session-manager.d.ts) ----------

interface RefSessionManager {
  appendMessage(message: AgentMessage): string;
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number): string;
  getEntries(): { id: string; type: string }[];
  getLeafId(): string | null;
  branch(id: string): void;
  buildSessionContext(): { messages: unknown[] };
  getBranch(fromId?: string): { id: string }[];
}
interface RefModule {
  SessionManager: {
    create(cwd: string, sessionDir?: string): RefSessionManager;
    open(path: string, sessionDir?: string): RefSessionManager;
  };
}

async function loadReference(): Promise<RefModule> {
  const spec = REF_PACKAGE; // a variable keeps tsc from resolving bench-only node_modules
  return (await import(spec)) as RefModule;
}

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
          JSON.stringify({
            type: 'message',
            id: 'abcdef01',
            parentId: 'abcdef00',
            timestamp: new Date().toISOString(),
            message: m,
          }) + '\n',
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
      // The issue's other yardstick, "a plain correct store" (14 µs there): a Map index, and each
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
          writeSync(fd, JSON.stringify(e) + '\n');
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
      for (let r = 0; r < FORK_REPEATS; r++) {
        const target = ids[(Math.floor(ids.length / 2) + r * 97) % ids.length]!;
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
      }
      rmSync(scratch, { recursive: true, force: true });
      const sorted = [...times].sort((a, b) => a - b);
      return { firstMs: times[0]!, medianMs: sorted[Math.floor(sorted.length / 2)]!, messages };
    }
    default:
      throw new Error(`unknown phase ${name}`);
  }
}

// ---- parent: orchestrates child processes and prints the table --------------------------------

function runChild(name: string, dir: string): (PhaseResult & { peakRssMB: number }) | { error: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--phase', name, dir], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    env: { ...process.env },
  });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{'))
    return { error: (r.stderr || r.stdout).trim().split('\n').slice(-5).join(' | ') };
  return JSON.parse(last) as PhaseResult & { peakRssMB: number };
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

const fmt = (v: number | undefined, digits = 1): string =>
  v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits);

async function main(): Promise<void> {
  const refProblem = ensureReference();
  if (refProblem) console.log(`Reference unavailable (${refProblem}); printing our numbers only.`);
  const dir = mkdtempSync(join(tmpdir(), 'session-bench-'));
  console.log(
    `session bench: ${N.toLocaleString('en-US')} entries, every phase the median of ${ROUNDS} alternating rounds; files in ${dir}`,
  );
  const results: Record<string, ReturnType<typeof runChild>> = {};
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
  const samples: Record<string, (PhaseResult & { peakRssMB: number })[]> = {};
  const sample = (name: string, r: ReturnType<typeof runChild>): void => {
    if ('error' in r) results[name] = r;
    else (samples[name] ??= []).push(r);
  };
  // The first append round writes the files the open and fork phases read.
  for (const name of once) sample(name, runChild(name, dir));
  // The machine may be shared: ours and the reference alternate, ROUNDS times, and each phase
  // reports its median, so a burst of load elsewhere hits both sides alike.
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
    if (round > 0) for (const name of appends) sample(name, runChild(`${name}:scratch`, dir));
    for (const name of ['raw-writeSync', 'raw-appendFileSync']) sample(name, runChild(name, dir));
    for (const base of repeated) {
      for (const side of refProblem ? ['ours'] : ['ours', 'ref']) {
        const name = base.replace(/^(open|fork)/, `$1-${side}`);
        sample(name, runChild(name, dir));
      }
    }
  }
  for (const [name, list] of Object.entries(samples)) {
    if (results[name]) continue;
    const median: PhaseResult & { peakRssMB: number } = { peakRssMB: 0 };
    for (const key of Object.keys(list[0]!)) {
      const values = list.map((r) => r[key]!).sort((a, b) => a - b);
      median[key] = values[Math.floor(values.length / 2)]!;
    }
    results[name] = median;
  }
  for (const [name, r] of Object.entries(results)) if ('error' in r) console.log(`  ${name}: FAILED ${r.error}`);
  const get = (name: string): (PhaseResult & { peakRssMB: number }) | undefined => {
    const r = results[name];
    return r && !('error' in r) ? r : undefined;
  };
  const base = get('baseline')?.peakRssMB ?? 0;
  console.log(`\nbaseline process (node + tsx, nothing loaded): peak RSS ${fmt(base, 0)} MB`);
  console.log(
    `write primitive, 1-2 KB lines: fd kept open + writeSync ${fmt(get('raw-writeSync')?.usPerEntry, 2)} µs/line, appendFileSync ${fmt(get('raw-appendFileSync')?.usPerEntry, 2)} µs/line`,
  );
  const rows: [string, string, string, string, string][] = [['phase', 'ours', 'reference', 'ratio (ref/ours)', 'goal']];
  const row = (label: string, o: number | undefined, r: number | undefined, goal: string, digits = 1): void => {
    rows.push([label, fmt(o, digits), fmt(r, digits), o && r ? `${(r / o).toFixed(2)}x` : '-', goal]);
  };
  row('append µs/entry', get('append-ours')?.usPerEntry, get('append-ref')?.usPerEntry, '<= 10 µs', 2);
  row('  durable on return µs/entry', get('append-ours-immediate')?.usPerEntry, get('append-ref')?.usPerEntry, '', 2);
  row(
    '  with the secret redactor µs/entry',
    get('append-ours-redact')?.usPerEntry,
    get('append-ref')?.usPerEntry,
    '',
    2,
  );
  row('  no write (lines dropped) µs/entry', get('append-ours-nowrite')?.usPerEntry, undefined, '', 2);
  row('  JSON.stringify + keep, no store', get('stringify-keep')?.usPerEntry, undefined, '', 2);
  row('  a plain store (write per entry)', get('append-plain')?.usPerEntry, get('append-ref')?.usPerEntry, '', 2);
  row('open + rebuild ms', get('open-ours')?.totalMs, get('open-ref')?.totalMs, '>= 3x faster');
  row('  of which rebuild ms', get('open-ours')?.rebuildMs, get('open-ref')?.rebuildMs, '', 2);
  row('open + rebuild peak RSS MB', get('open-ours')?.peakRssMB, get('open-ref')?.peakRssMB, '<= 60 % of ref', 0);
  row(
    'open + rebuild, compacted ms',
    get('open-ours-compacted')?.totalMs,
    get('open-ref-compacted')?.totalMs,
    '>= 3x faster',
  );
  row(
    '  compacted peak RSS MB',
    get('open-ours-compacted')?.peakRssMB,
    get('open-ref-compacted')?.peakRssMB,
    '<= 60 % of ref',
    0,
  );
  row('rewind + 3 + rebuild, first ms', get('fork-ours')?.firstMs, get('fork-ref')?.firstMs, '', 3);
  row('rewind + 3 + rebuild, median ms', get('fork-ours')?.medianMs, get('fork-ref')?.medianMs, '<= 1 ms', 3);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
  const ours = get('open-ours');
  const ref = get('open-ref');
  if (ours && ref)
    console.log(
      `\nmemory: ours uses ${((ours.peakRssMB / ref.peakRssMB) * 100).toFixed(0)} % of the reference's peak RSS (open + rebuild).`,
    );
  // Verdicts. The append goal (10 µs) was set against the reference measured at 19.6 µs on this
  // machine kind; machines drift, so it is also judged as that ratio to the reference in this run.
  const verdict = (label: string, ok: boolean | undefined): void =>
    console.log(`  ${ok === undefined ? 'n/a ' : ok ? 'met ' : 'MISS'}  ${label}`);
  const ratio = (o: string, r: string, key: string): number | undefined => {
    const a = get(o)?.[key];
    const b = get(r)?.[key];
    return a && b ? b / a : undefined;
  };
  const ISSUE_REF_APPEND_US = 19.6;
  const appendRatio = ratio('append-ours', 'append-ref', 'usPerEntry');
  console.log('\ngoals:');
  verdict(
    `append <= 10 µs/entry (here: ${fmt(get('append-ours')?.usPerEntry, 2)} µs)`,
    get('append-ours')?.usPerEntry === undefined ? undefined : get('append-ours')!.usPerEntry! <= 10,
  );
  verdict(
    `append >= ${(ISSUE_REF_APPEND_US / 10).toFixed(2)}x faster than the reference in this run (10 µs against its 19.6 µs in the issue; here: ${appendRatio?.toFixed(2) ?? '-'}x)`,
    appendRatio === undefined ? undefined : appendRatio >= ISSUE_REF_APPEND_US / 10,
  );
  for (const kind of ['', '-compacted']) {
    const r = ratio(`open-ours${kind}`, `open-ref${kind}`, 'totalMs');
    const m = ratio(`open-ref${kind}`, `open-ours${kind}`, 'peakRssMB');
    verdict(
      `open + rebuild${kind ? ', compacted,' : ''} >= 3x faster (here: ${r?.toFixed(2) ?? '-'}x)`,
      r === undefined ? undefined : r >= 3,
    );
    verdict(
      `open + rebuild${kind ? ', compacted,' : ''} peak RSS <= 60 % of the reference (here: ${m === undefined ? '-' : (m * 100).toFixed(0)} %)`,
      m === undefined ? undefined : m <= 0.6,
    );
  }
  verdict(
    `rewind + append 3 + rebuild <= 1 ms (median here: ${fmt(get('fork-ours')?.medianMs, 3)} ms)`,
    get('fork-ours')?.medianMs === undefined ? undefined : get('fork-ours')!.medianMs! <= 1,
  );
  const check = [
    get('open-ours')?.messages,
    get('open-ref')?.messages,
    get('open-ours-compacted')?.messages,
    get('open-ref-compacted')?.messages,
  ];
  console.log(`context sizes (ours/ref plain, ours/ref compacted): ${check.map((c) => c ?? '-').join(' / ')} messages`);
  rmSync(dir, { recursive: true, force: true });
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
