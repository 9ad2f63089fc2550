// Where the time of a process goes, from the V8 CPU profiles `node --cpu-prof` wrote (one per
// thread): self time summed by source file and by function, per instance of a bench run. Used by
// distributed.bench.ts --cpu-prof for the worker processes and their agent threads.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `--cpu-prof DIR`: the self time of every profile written there (the workers' main threads and
 * their agent threads), summed by source file and by function: where a worker's CPU goes.
 */
export function summarizeProfiles(dir: string, instances: number): string {
  interface Node {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, name), 'utf8')) as {
      nodes: Node[];
      samples: number[];
      timeDeltas: number[];
    };
    const nodes = new Map(p.nodes.map((n) => [n.id, n]));
    p.samples.forEach((id, i) => {
      const n = nodes.get(id);
      const us = p.timeDeltas[i] ?? 0;
      if (!n || n.callFrame.functionName === '(idle)' || n.callFrame.functionName === '(program)') return;
      total += us;
      const file = n.callFrame.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/') || `(${n.callFrame.functionName})`;
      byFile.set(file, (byFile.get(file) ?? 0) + us);
      const fn = `${n.callFrame.functionName || '(anonymous)'} ${file}:${n.callFrame.lineNumber + 1}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    });
  }
  const top = (m: Map<string, number>): string =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([k, us]) => `    ${(us / 1000 / instances).toFixed(2).padStart(7)} ms/instance  ${k}`)
      .join('\n');
  return (
    `CPU profiles (${dir}): ${(total / 1000 / instances).toFixed(1)} ms/instance sampled, not idle (wall time of ` +
    `each thread while it ran: on a loaded machine more than its CPU)\n  by file:\n${top(byFile)}\n  by function:\n${top(byFunction)}`
  );
}
