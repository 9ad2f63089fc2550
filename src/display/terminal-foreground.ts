// Whether this process is in its terminal's foreground process group. Raw mode (tcsetattr) and
// reading keys from a background job make the kernel stop the process (SIGTTOU / SIGTTIN), so
// `orchestrate recipe.yaml &` must leave the keyboard alone until it is brought back with `fg`.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** pgrp and tpgid (the terminal's foreground group; -1 without a terminal), or undefined. */
function processGroups(): { pgrp: number; tpgid: number } | undefined {
  try {
    // /proc/self/stat: "pid (comm) state ppid pgrp session tty_nr tpgid ..."; comm may hold spaces.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pgrp: Number(f[2]), tpgid: Number(f[5]) };
  } catch {
    // No /proc (macOS, the BSDs): ps knows both.
    const ps = spawnSync('ps', ['-o', 'pgid=,tpgid=', '-p', String(process.pid)], { encoding: 'utf8' });
    const [pgrp, tpgid] = (ps.stdout ?? '').trim().split(/\s+/).map(Number);
    return pgrp !== undefined && tpgid !== undefined && Number.isFinite(pgrp) && Number.isFinite(tpgid)
      ? { pgrp, tpgid }
      : undefined;
  }
}

/** True unless this process is known to be a background job of its terminal. */
export function inForeground(): boolean {
  const g = processGroups();
  if (!g || g.tpgid <= 0) return true; // no controlling terminal: nothing can stop us for using it
  return g.pgrp === g.tpgid;
}
