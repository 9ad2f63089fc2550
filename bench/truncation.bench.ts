// Benchmark: truncateHead / truncateTail on 10 MB and 100 MB of mixed ASCII/CJK/emoji lines,
// against a naive baseline that splits the whole input into lines (what the reference does).
//
//   node --import tsx bench/truncation.bench.ts
//
// Each case runs in its own child process so memory figures are not polluted by earlier cases.
// Goal: 100 MB in <= 100 ms with <= 8 MB extra memory.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { truncateHead, truncateTail, type TruncationResult } from '../src/tools/truncate.js';

const MB = 1024 * 1024;
const MAX_LINES = 2000;
const MAX_BYTES = 51200;
const RUNS = 5;

type Impl = 'ours' | 'naive';
type Mode = 'head' | 'tail';
type Kind = 'string' | 'buffer';

/** Deterministic mixed lines: ASCII words, CJK runs, emoji, 5-200 characters each. */
function makeInput(bytes: number): string {
  const pieces = [
    'lorem ipsum dolor ',
    'function x() { return 42; } ',
    '漢字かなカナ한글 ',
    '中文测试内容 ',
    '😀🎉🚀 ',
    'naïve café ',
    '\t',
  ];
  let seed = 7;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    let line = '';
    const target = 5 + rand(195);
    while (line.length < target) line += pieces[rand(pieces.length)];
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  return lines.join('\n');
}

/** Reference-style truncation: measure the bytes, split everything, then walk the array. */
function naive(text: string, mode: Mode): { outputLines: number; totalLines: number; totalBytes: number } {
  const totalBytes = Buffer.byteLength(text, 'utf8');
  const lines = text.split('\n');
  const totalLines = lines.length;
  const kept: string[] = [];
  let bytes = 0;
  const order = mode === 'head' ? lines : [...lines].reverse();
  for (const line of order) {
    if (kept.length >= MAX_LINES) break;
    const b = Buffer.byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + b > MAX_BYTES) break;
    kept.push(line);
    bytes += b;
  }
  if (mode === 'tail') kept.reverse();
  return { outputLines: kept.join('\n').split('\n').length, totalLines, totalBytes };
}

function gcFn(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Runs in a child: measure one (impl, mode, kind, size) case and print one JSON line. */
function measure(impl: Impl, mode: Mode, kind: Kind, sizeMb: number): void {
  const gc = gcFn();
  const text = makeInput(sizeMb * MB);
  const input: string | Buffer = kind === 'buffer' ? Buffer.from(text) : text;
  const warm = makeInput(MB);
  const run = (x: string | Buffer): { outputLines: number; totalLines: number; totalBytes: number } =>
    impl === 'naive'
      ? naive(typeof x === 'string' ? x : x.toString('utf8'), mode)
      : ((mode === 'head' ? truncateHead : truncateTail)(x, {
          maxLines: MAX_LINES,
          maxBytes: MAX_BYTES,
        }) as TruncationResult);
  run(kind === 'buffer' ? Buffer.from(warm) : warm); // JIT warm-up on a small input
  const times: number[] = [];
  let rssDelta = 0;
  let heapDelta = 0;
  let result = { outputLines: 0, totalLines: 0, totalBytes: 0 };
  for (let i = 0; i < RUNS; i++) {
    gc();
    const before = process.memoryUsage();
    const t0 = performance.now();
    result = run(input);
    const t1 = performance.now();
    const after = process.memoryUsage();
    times.push(t1 - t0);
    rssDelta = Math.max(rssDelta, after.rss - before.rss);
    heapDelta = Math.max(heapDelta, after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers));
  }
  times.sort((a, b) => a - b);
  const { outputLines, totalLines, totalBytes } = result;
  console.log(
    JSON.stringify({
      ms: times[Math.floor(RUNS / 2)],
      minMs: times[0],
      rssDelta,
      heapDelta,
      outputLines,
      totalLines,
      totalBytes,
    }),
  );
}

interface CaseResult {
  ms: number;
  minMs: number;
  rssDelta: number;
  heapDelta: number;
  outputLines: number;
  totalLines: number;
  totalBytes: number;
}

function runCase(impl: Impl, mode: Mode, kind: Kind, sizeMb: number): CaseResult {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, [...process.execArgv, self, '--case', impl, mode, kind, String(sizeMb)], {
    encoding: 'utf8',
    maxBuffer: 16 * MB,
  });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !line.startsWith('{'))
    throw new Error(`case ${impl} ${mode} ${kind} ${sizeMb}MB failed: ${child.stderr}`);
  return JSON.parse(line) as CaseResult;
}

const fmtMb = (b: number): string => `${(b / MB).toFixed(1)} MB`;

function main(): void {
  console.log(
    `truncation bench: ${RUNS} runs per case (median ms), limits ${MAX_LINES} lines / ${MAX_BYTES} bytes, node ${process.version}`,
  );
  const verdicts: string[] = [];
  for (const sizeMb of [10, 100]) {
    for (const kind of ['string', 'buffer'] as Kind[]) {
      for (const mode of ['head', 'tail'] as Mode[]) {
        const ours = runCase('ours', mode, kind, sizeMb);
        const base = runCase('naive', mode, kind, sizeMb);
        if (
          ours.totalLines !== base.totalLines ||
          ours.outputLines !== base.outputLines ||
          ours.totalBytes !== base.totalBytes
        ) {
          throw new Error(`results differ: ours ${JSON.stringify(ours)} naive ${JSON.stringify(base)}`);
        }
        const label = `truncate${mode === 'head' ? 'Head' : 'Tail'} ${kind.padEnd(6)} ${String(sizeMb).padStart(3)} MB`;
        console.log(
          `${label}: ours ${ours.ms.toFixed(1)} ms (min ${ours.minMs.toFixed(1)}), +${fmtMb(ours.rssDelta)} RSS, +${fmtMb(ours.heapDelta)} heap | ` +
            `naive ${base.ms.toFixed(1)} ms, +${fmtMb(base.rssDelta)} RSS, +${fmtMb(base.heapDelta)} heap | ` +
            `speed-up x${(base.ms / ours.ms).toFixed(1)} | ${ours.totalLines} lines, ${fmtMb(ours.totalBytes)} -> ${ours.outputLines} lines kept`,
        );
        if (sizeMb === 100) {
          const extra = Math.max(ours.rssDelta, ours.heapDelta);
          const ok = ours.ms <= 100 && extra <= 8 * MB;
          verdicts.push(
            `${ok ? 'PASS' : 'MISS'} ${label}: ${ours.ms.toFixed(1)} ms (goal <= 100), +${fmtMb(extra)} (goal <= 8 MB)`,
          );
        }
      }
    }
  }
  console.log('--- goals (100 MB) ---');
  for (const v of verdicts) console.log(v);
}

const argv = process.argv.slice(2);
if (argv[0] === '--case') measure(argv[1] as Impl, argv[2] as Mode, argv[3] as Kind, Number(argv[4]));
else main();
