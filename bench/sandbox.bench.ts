// Benchmark: what the sandbox costs per bash call. The same short command runs through the bash
// tool sandboxed (bwrap: namespaces, mounts, dropped capabilities) and unsandboxed, interleaved
// in the same run so load on the machine hits both alike; the overhead is the difference of the
// medians.
//
//   node --import tsx bench/sandbox.bench.ts
//
// Goal: median overhead <= 15 ms per call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBashTool } from '../src/tools/bash.js';
import { probeSandbox } from '../src/tools/sandbox.js';

const CALLS = 60;
const WARMUP = 5;
const COMMAND = 'echo hello; ls >/dev/null';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const probe = probeSandbox();
  if (!probe.ok) {
    console.log(`MISS sandbox unavailable here, nothing to measure: ${probe.reason}`);
    process.exitCode = 1;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-bench-'));
  try {
    const sandboxed = createBashTool({ cwd: dir });
    const plain = createBashTool({ cwd: dir, sandbox: { mode: 'none' } });
    const signal = new AbortController().signal;
    const time = async (tool: typeof plain): Promise<number> => {
      const t0 = performance.now();
      await tool.execute('bench', { command: COMMAND }, signal, () => {});
      return performance.now() - t0;
    };
    for (let i = 0; i < WARMUP; i++) {
      await time(sandboxed);
      await time(plain);
    }
    const inBox: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      // Alternate the order so neither side always runs right after the other.
      if (i % 2) {
        inBox.push(await time(sandboxed));
        bare.push(await time(plain));
      } else {
        bare.push(await time(plain));
        inBox.push(await time(sandboxed));
      }
    }
    sandboxed.dispose();
    plain.dispose();
    const overhead = median(inBox) - median(bare);
    console.log(`sandbox bench: node ${process.version}, ${CALLS} calls each of \`${COMMAND}\` through the bash tool`);
    console.log(
      `unsandboxed: median ${median(bare).toFixed(1)} ms; sandboxed (bwrap): median ${median(inBox).toFixed(1)} ms`,
    );
    console.log('--- goals ---');
    console.log(
      `${overhead <= 15 ? 'PASS' : 'MISS'} sandbox overhead per bash call: median ${overhead.toFixed(1)} ms (goal <= 15 ms)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
