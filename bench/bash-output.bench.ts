// Benchmark: the bash tool on commands printing 10 MB and 100 MB, against the raw command
// piped to /dev/null in the same run.
//
//   node --import tsx bench/bash-output.bench.ts
//
// Each size runs in its own child process so RSS growth is measured from a clean start.
// Goals: peak RSS growth under 64 MB; time linear in output size.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBashTool, type BashToolDetails } from '../src/tools/bash.js';

const MB = 1024 * 1024;

/** Mixed ASCII/CJK/emoji lines, exactly `bytes` bytes. */
const producer = (bytes: number): string =>
  `yes 'build step 0042: compiled module 中文テスト 😀 ok' | head -c ${bytes}`;

interface CaseResult {
  baselineMs: number;
  toolMs: number;
  peakRssGrowth: number;
  fullOutputBytes: number;
  notice: string;
}

async function baseline(command: string): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', `${command} > /dev/null`], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
  return performance.now() - t0;
}

/** Runs in a child: one size, printing one JSON line. */
async function measure(sizeMb: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bash-bench-'));
  try {
    const command = producer(sizeMb * MB);
    await baseline(producer(MB)); // warm the page cache and the binaries
    const baselineMs = await baseline(command);

    const tool = createBashTool({ cwd: dir, tempDir: dir });
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const t0 = performance.now();
    const result = await tool.execute('bench', { command }, new AbortController().signal, () => {});
    const toolMs = performance.now() - t0;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);

    const details = result.details as BashToolDetails | undefined;
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    const fullOutputBytes = details?.fullOutputPath ? statSync(details.fullOutputPath).size : 0;
    const notice = text.slice(text.lastIndexOf('\n[') + 1).replace(/Full output: .*\]/, 'Full output: <tmp>]');
    const out: CaseResult = { baselineMs, toolMs, peakRssGrowth: peak - rssBefore, fullOutputBytes, notice };
    console.log(JSON.stringify(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runCase(sizeMb: number): CaseResult {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, [...process.execArgv, self, '--case', String(sizeMb)], {
    encoding: 'utf8',
  });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !line.startsWith('{')) throw new Error(`case ${sizeMb} MB failed: ${child.stderr}`);
  return JSON.parse(line) as CaseResult;
}

function main(): void {
  console.log(
    `bash output bench: node ${process.version}, command: ${producer(0).replace(/ \| head -c 0$/, '')} | head -c <N>`,
  );
  const results = new Map<number, CaseResult>();
  for (const sizeMb of [10, 100]) {
    const r = runCase(sizeMb);
    results.set(sizeMb, r);
    const mbps = sizeMb / (r.toolMs / 1000);
    console.log(
      `${String(sizeMb).padStart(3)} MB: tool ${r.toolMs.toFixed(0)} ms (${mbps.toFixed(0)} MB/s), raw command > /dev/null ${r.baselineMs.toFixed(0)} ms, ` +
        `peak RSS growth +${(r.peakRssGrowth / MB).toFixed(1)} MB, temp file ${(r.fullOutputBytes / MB).toFixed(1)} MB`,
    );
    console.log(`        notice: ${r.notice}`);
  }
  const small = results.get(10) as CaseResult;
  const big = results.get(100) as CaseResult;
  const ratio = big.toolMs / small.toolMs;
  console.log('--- goals ---');
  const memOk = big.peakRssGrowth < 64 * MB && small.peakRssGrowth < 64 * MB;
  console.log(
    `${memOk ? 'PASS' : 'MISS'} peak RSS growth: 10 MB +${(small.peakRssGrowth / MB).toFixed(1)} MB, 100 MB +${(big.peakRssGrowth / MB).toFixed(1)} MB (goal < 64 MB)`,
  );
  // Linear: 10x the output should cost about 10x the time (fixed costs make the small case relatively slower).
  const linOk = ratio <= 13;
  console.log(`${linOk ? 'PASS' : 'MISS'} time 100 MB / 10 MB = x${ratio.toFixed(1)} (linear would be about x10)`);
  const complete = big.fullOutputBytes === 100 * MB && small.fullOutputBytes === 10 * MB;
  console.log(
    `${complete ? 'PASS' : 'MISS'} temp files hold the full output (${big.fullOutputBytes} and ${small.fullOutputBytes} bytes)`,
  );
}

const argv = process.argv.slice(2);
if (argv[0] === '--case') await measure(Number(argv[1]));
else main();
