// Small Node processes a bench starts beside a measured run, so that measuring costs the measured
// process nothing: an idle process that only measures its own event-loop delay (the machine's
// share of a coordinator's delay: descheduling on a loaded machine), and a sampler of another
// process's peak RSS from /proc (a timer in the coordinator's own loop would add to its delay).
// Each is kept alive by its stdin, says `ready` once measuring, and prints its JSON when stdin ends.
import { spawn } from 'node:child_process';

/** The event-loop delay (ms) of a Node process that does nothing, measured while a run goes. */
export interface IdleFigures {
  p99: number;
  max: number;
}

/** Same histogram as the bench's coordinator figures (resolution 10 ms). */
const IDLE_PROGRAM = `
const h = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 10 });
h.enable();
process.stdin.resume();
process.stdin.on('end', () => {
  h.disable();
  process.stdout.write(JSON.stringify({ p99: h.percentile(99) / 1e6, max: h.max / 1e6 }));
  process.exit(0);
});
process.stdout.write('ready\\n');
`;

/** Peak VmRSS (kB) of the process PID (argv), read every 20 ms. */
const RSS_PROGRAM = `
const { readFileSync } = require('node:fs');
const file = '/proc/' + process.argv[1] + '/status';
let peakKb = 0;
const sample = () => {
  try {
    const m = /VmRSS:\\s+(\\d+) kB/.exec(readFileSync(file, 'utf8'));
    if (m) peakKb = Math.max(peakKb, Number(m[1]));
  } catch {}
};
const timer = setInterval(sample, 20);
sample();
process.stdin.resume();
process.stdin.on('end', () => {
  clearInterval(timer);
  sample();
  process.stdout.write(JSON.stringify({ peakKb }));
  process.exit(0);
});
process.stdout.write('ready\\n');
`;

/** Runs `fn` with `program` in a process beside it; returns what `fn` returned and what the program printed. */
async function beside<T, F>(program: string, args: string[], fn: () => Promise<T>): Promise<{ value: T; side: F }> {
  const child = spawn(process.execPath, ['-e', program, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  const ended = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: string) => {
      out += d;
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`a side process exited ${code}: ${out}`)),
    );
  });
  try {
    // Measuring starts before the run does.
    await new Promise<void>((resolve, reject) => {
      const onData = (): void => {
        if (!out.includes('ready\n')) return;
        child.stdout!.off('data', onData);
        resolve();
      };
      child.stdout!.on('data', onData);
      ended.catch(reject);
    });
    const value = await fn();
    child.stdin!.end();
    const text = await ended;
    return { value, side: JSON.parse(text.slice(text.indexOf('ready\n') + 'ready\n'.length)) as F };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
  }
}

/** `fn` with an idle Node process beside it, and that process's event-loop delay meanwhile. */
export async function besideIdle<T>(fn: () => Promise<T>): Promise<{ value: T; idle: IdleFigures }> {
  const { value, side } = await beside<T, IdleFigures>(IDLE_PROGRAM, [], fn);
  return { value, idle: side };
}

/** `fn` with this process's RSS sampled from another process; its peak in MB. */
export async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; peakMb: number }> {
  const { value, side } = await beside<T, { peakKb: number }>(RSS_PROGRAM, [String(process.pid)], fn);
  return { value, peakMb: side.peakKb / 1024 };
}
