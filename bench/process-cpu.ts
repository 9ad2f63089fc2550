// CPU figures read from /proc for the benches: a process's CPU with or without the child
// processes it waited for (git, tar), and how busy the whole machine was meanwhile.
import { readFileSync } from 'node:fs';

/**
 * CPU of a process and of its children it has waited for (git, tar), ms: utime + stime + cutime +
 * cstime from /proc (clock ticks are 100 Hz on Linux). `self` for this process.
 */
export function procCpuMs(pid: number | 'self', part: 'all' | 'children' = 'all'): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const children = Number(fields[13]) + Number(fields[14]);
    return (part === 'children' ? children : Number(fields[11]) + Number(fields[12]) + children) * 10;
  } catch {
    return 0;
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat): how much of the cores a run used. */
export function machineJiffies(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - cpu[3]! - (cpu[4] ?? 0), total };
}

export function busyShare(from: { busy: number; total: number }): number {
  const now = machineJiffies();
  return (now.busy - from.busy) / Math.max(1, now.total - from.total);
}
