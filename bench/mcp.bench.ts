// Benchmark: what MCP costs. (1) The overhead of one MCP tool call (stdio, the local fixture
// server, unconfined and sandboxed) over a built-in tool call (read of a small file), interleaved
// so machine load hits both alike. (2) The memory of a 32-agent fan-out whose agents share one
// `scope: run` server against one server per agent (`scope: agent`): the resident memory of the
// server processes, read from /proc.
//
//   node --import tsx bench/mcp.bench.ts
//
// Goals: median MCP call overhead <= 5 ms; the shared server uses <= 1/10 of the per-agent memory.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyAgentTool } from '../src/agent/types.js';
import type { McpServerConfig } from '../src/tools/mcp/config.js';
import { closeSharedMcpServers, McpToolSource } from '../src/tools/mcp/tool-source.js';
import { createReadTool } from '../src/tools/read.js';
import { probeSandbox } from '../src/tools/sandbox.js';

const CALLS = 200;
const WARMUP = 10;
const AGENTS = 32;
const FIXTURE = fileURLToPath(new URL('../test/fixtures/mcp/stdio-server.mjs', import.meta.url));

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function server(scope: 'agent' | 'run', sandbox: 'workspace' | 'none'): McpServerConfig {
  return {
    name: 'bench',
    transport: 'stdio',
    command: process.execPath,
    args: [FIXTURE, 'bench'],
    env: {},
    headers: {},
    startup: 'eager',
    scope,
    startupTimeoutMs: 60_000,
    toolTimeoutMs: 60_000,
    network: false,
    sandbox,
  };
}

/** Resident memory (kB) of a process and all its descendants. */
function treeRssKb(pid: number): number {
  let total = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    try {
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
      for (const task of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
        stack.push(Number(task));
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

async function callOverhead(dir: string, sandbox: 'workspace' | 'none'): Promise<{ builtin: number; mcp: number }> {
  const source = new McpToolSource({ servers: [server('agent', sandbox)], cwd: dir, notify: (m) => console.error(m) });
  await source.start();
  const echo = source.listNow().find((t) => t.name === 'mcp__bench__echo') as AnyAgentTool;
  const read = createReadTool({ cwd: dir });
  const signal = new AbortController().signal;
  const time = async (f: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await f();
    return performance.now() - t0;
  };
  const callMcp = () => echo.execute('b', { text: 'hello' }, signal, () => {});
  const callRead = () => read.execute('b', { path: 'small.txt' }, signal, () => {});
  for (let i = 0; i < WARMUP; i++) {
    await callMcp();
    await callRead();
  }
  const mcp: number[] = [];
  const builtin: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    if (i % 2) {
      mcp.push(await time(callMcp));
      builtin.push(await time(callRead));
    } else {
      builtin.push(await time(callRead));
      mcp.push(await time(callMcp));
    }
  }
  await source.close();
  return { builtin: median(builtin), mcp: median(mcp) };
}

async function fanOutMemory(
  dir: string,
  scope: 'agent' | 'run',
): Promise<{ kb: number; processes: number; startMs: number }> {
  const t0 = performance.now();
  const sources = Array.from(
    { length: AGENTS },
    () =>
      new McpToolSource({
        servers: [server(scope, 'none')],
        cwd: dir,
        runId: 'bench-run',
        notify: (m) => console.error(m),
      }),
  );
  await Promise.all(sources.map((s) => s.start()));
  const startMs = performance.now() - t0;
  const pids = new Set(sources.map((s) => s.connections[0]!.pid!));
  let kb = 0;
  for (const pid of pids) kb += treeRssKb(pid);
  await Promise.all(sources.map((s) => s.close()));
  await closeSharedMcpServers('bench-run');
  return { kb, processes: pids.size, startMs };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-bench-'));
  try {
    writeFileSync(join(dir, 'small.txt'), 'hello\n'.repeat(20));
    console.log(
      `mcp bench: node ${process.version}, ${CALLS} calls each (echo over stdio vs read of a 20-line file), ${AGENTS}-agent fan-out`,
    );
    const plain = await callOverhead(dir, 'none');
    console.log(
      `built-in read: median ${plain.builtin.toFixed(2)} ms; MCP echo (stdio, unconfined): median ${plain.mcp.toFixed(2)} ms`,
    );
    let boxed: { builtin: number; mcp: number } | undefined;
    if (probeSandbox().ok) {
      boxed = await callOverhead(dir, 'workspace');
      console.log(
        `built-in read: median ${boxed.builtin.toFixed(2)} ms; MCP echo (stdio, sandboxed): median ${boxed.mcp.toFixed(2)} ms`,
      );
    }
    const shared = await fanOutMemory(dir, 'run');
    const own = await fanOutMemory(dir, 'agent');
    const mb = (kb: number) => (kb / 1024).toFixed(1);
    console.log(
      `${AGENTS} agents, scope: run: ${shared.processes} server process(es), ${mb(shared.kb)} MB resident, started in ${shared.startMs.toFixed(0)} ms`,
    );
    console.log(
      `${AGENTS} agents, scope: agent: ${own.processes} server processes, ${mb(own.kb)} MB resident, started in ${own.startMs.toFixed(0)} ms`,
    );
    console.log('--- goals ---');
    const overhead = plain.mcp - plain.builtin;
    console.log(
      `${overhead <= 5 ? 'PASS' : 'MISS'} MCP tool call overhead over a built-in one (stdio, unconfined): median ${overhead.toFixed(2)} ms (goal <= 5 ms)`,
    );
    if (boxed)
      console.log(`INFO MCP tool call overhead, sandboxed server: median ${(boxed.mcp - boxed.builtin).toFixed(2)} ms`);
    const ratio = shared.kb / own.kb;
    console.log(
      `${ratio <= 0.1 ? 'PASS' : 'MISS'} memory of a ${AGENTS}-agent fan-out: one shared server is ${(ratio * 100).toFixed(1)}% of one server per agent (${mb(shared.kb)} vs ${mb(own.kb)} MB; goal <= 10%)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
