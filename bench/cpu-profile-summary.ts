// Where the time of a process goes, from the V8 CPU profiles `node --cpu-prof` wrote (one per
// thread): self time summed by source file and by function, per instance of a bench run. Used by
// distributed.bench.ts --cpu-prof for the worker processes and their agent threads; run alone on one
// profile (a coordinator's, from orchestrator.bench.ts --coordinator-prof) it names what fills its long turns.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** A frame's name as the summaries print it: function, then file:line under node_modules, dist or src. */
function frameName(n: ProfileNode): string {
  const file = n.callFrame.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/');
  if (!file) return n.callFrame.functionName || '(anonymous)';
  return `${n.callFrame.functionName || '(anonymous)'} ${file}:${n.callFrame.lineNumber + 1}`;
}

/**
 * The event-loop turns of one thread's profile (a stretch of samples that are not `(idle)`) and
 * where the time of the long ones (over `overMs`) goes: self time and inclusive time (each
 * function once per sample, however deep it recurs) by function. A turn over the event-loop
 * delay goal is what a p99 measures, so this names what to move out of the coordinator's turns.
 */
export function summarizeLongTurns(file: string, overMs = 20): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Turns as [first sample, last sample] index ranges with their durations. A sample's delta is
  // the time since the previous one, so it is charged to the sample it precedes.
  const turns: { from: number; to: number; us: number }[] = [];
  let open: { from: number; to: number; us: number } | undefined;
  let busyUs = 0;
  p.samples.forEach((id, i) => {
    const idle = nodes.get(id)?.callFrame.functionName === '(idle)';
    const us = p.timeDeltas[i + 1] ?? 0;
    if (idle) {
      if (open) turns.push(open);
      open = undefined;
      return;
    }
    busyUs += us;
    if (open) {
      open.to = i;
      open.us += us;
    } else open = { from: i, to: i, us };
  });
  if (open) turns.push(open);
  const long = turns.filter((t) => t.us > overMs * 1000);
  const selfUs = new Map<string, number>();
  const inclusiveUs = new Map<string, number>();
  let longUs = 0;
  for (const t of long) {
    longUs += t.us;
    for (let i = t.from; i <= t.to; i++) {
      const us = p.timeDeltas[i + 1] ?? 0;
      const leaf = nodes.get(p.samples[i]!);
      if (!leaf) continue;
      const self = frameName(leaf);
      selfUs.set(self, (selfUs.get(self) ?? 0) + us);
      const seen = new Set<string>();
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const name = frameName(nodes.get(id)!);
        if (name === '(root)' || seen.has(name)) continue;
        seen.add(name);
        inclusiveUs.set(name, (inclusiveUs.get(name) ?? 0) + us);
      }
    }
  }
  const top = (m: Map<string, number>, n: number): string =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `    ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`)
      .join('\n');
  const longest = [...turns]
    .sort((a, b) => b.us - a.us)
    .slice(0, 10)
    .map((t) => (t.us / 1000).toFixed(1))
    .join(', ');
  return (
    `${file}: busy ${(busyUs / 1000).toFixed(0)} ms in ${turns.length} turns; ${long.length} turns over ${overMs} ms ` +
    `hold ${(longUs / 1000).toFixed(0)} ms of it; the longest (ms): ${longest}\n` +
    `  in the turns over ${overMs} ms, self time:\n${top(selfUs, 20)}\n  inclusive time:\n${top(inclusiveUs, 40)}`
  );
}

/**
 * Who calls `target` (a function name, as the summaries print it before the file) in the turns over
 * `overMs`: the time under it by the nearest caller in the project (src/ or dist/; node_modules and
 * Node's own frames are skipped), so a write(2) or a GC pause is charged to the code that asked for it.
 */
export function summarizeCallers(file: string, target: string, overMs = 20): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ours = (n: ProfileNode): boolean =>
    /\/(dist|src)\//.test(n.callFrame.url) && !n.callFrame.url.includes('/node_modules/');
  const byCaller = new Map<string, number>();
  let totalUs = 0;
  let turnUs = 0;
  let turn: number[] = [];
  const close = (): void => {
    if (turnUs > overMs * 1000)
      for (const i of turn) {
        const us = p.timeDeltas[i + 1] ?? 0;
        let id: number | undefined = p.samples[i];
        // Up to the target, then on to the first frame of ours above it.
        while (id !== undefined && nodes.get(id)?.callFrame.functionName !== target) id = parent.get(id);
        if (id === undefined) continue;
        while (id !== undefined && !ours(nodes.get(id)!)) id = parent.get(id);
        const caller = id === undefined ? '(no caller of ours)' : frameName(nodes.get(id)!);
        byCaller.set(caller, (byCaller.get(caller) ?? 0) + us);
        totalUs += us;
      }
    turn = [];
    turnUs = 0;
  };
  p.samples.forEach((id, i) => {
    if (nodes.get(id)?.callFrame.functionName === '(idle)') close();
    else {
      turn.push(i);
      turnUs += p.timeDeltas[i + 1] ?? 0;
    }
  });
  close();
  const rows = [...byCaller]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .map(([k, us]) => `    ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`)
    .join('\n');
  return `${file}: ${(totalUs / 1000).toFixed(0)} ms under ${target} in the turns over ${overMs} ms, by the nearest caller of ours:\n${rows}`;
}

// `node --import tsx bench/cpu-profile-summary.ts FILE.cpuprofile [MS] [--callers FUNCTION]`: the
// long turns of one profile, or who calls FUNCTION in them.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  const callersAt = argv.indexOf('--callers');
  const target = callersAt >= 0 ? argv.splice(callersAt, 2)[1] : undefined;
  const [file, ms] = argv;
  if (!file || (callersAt >= 0 && !target)) {
    console.error(
      'usage: node --import tsx bench/cpu-profile-summary.ts FILE.cpuprofile [turn threshold ms, default 20] [--callers FUNCTION]',
    );
    process.exit(2);
  }
  const overMs = ms ? Number(ms) : 20;
  console.log(target ? summarizeCallers(file, target, overMs) : summarizeLongTurns(file, overMs));
}
