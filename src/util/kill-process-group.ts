// One way to stop a child and everything it started: children that may fork (shells, hooks, verify
// commands, MCP servers, detached runs) are spawned as group leaders (detached: true), so signalling the
// negative pid reaches the whole group. Killing only the leader would leave its grandchildren running
// and holding our pipes.

/**
 * Sends `signal` to the process group led by `pid` (a child spawned with detached: true). A group that
 * is gone already is not an error: stopping it is what was wanted. There is deliberately no fallback
 * to `pid` alone: once the group is gone the leader has been reaped, and its pid may belong to a
 * stranger by now.
 */
export function killProcessGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
