// Ties a command's process group to the life of this process. Commands run detached (their own
// process group, so abort and timeout can kill grandchildren), which also means nothing stops
// them when this process dies without cleaning up (kill -9, out of memory, a terminated worker
// thread): they would run on as orphans and finish side effects the agent was told were cut.
//
// The lifeline: the command's stdin is a pipe whose write end only this process holds. A prefix
// (on the command's first line, so line numbers in shell errors do not move) moves that pipe to
// a sentinel in the same process group and gives the command /dev/null as stdin, as before. The
// sentinel blocks reading the pipe: when this process dies the pipe closes, the read fails, and
// the sentinel kills its whole group. When the command exits normally, release() sends a line
// and the sentinel exits quietly (background jobs the command started are left alone).
// The sentinel is double-forked, so `wait` in the command never waits for it. A command that
// moves itself into another process group (setsid) leaves the lifeline's reach.
import type { ChildProcess } from 'node:child_process';

/** POSIX sh (bash and dash): run before the command, on the same line. */
const PREFIX = 'exec 3<&0 0</dev/null; ( ( read -r orchestrate_lifeline <&3 || kill -s KILL 0 ) >/dev/null 2>&1 & ); exec 3<&-; ';

/** The command with the lifeline prefix; spawn it with stdin 'pipe' and call attachLifeline. */
export function withLifeline(command: string): string {
  return PREFIX + command;
}

/** Keeps a broken lifeline pipe (the sentinel already gone) from becoming an unhandled error. */
export function attachLifeline(child: ChildProcess): void {
  child.stdin?.on('error', () => undefined);
}

/** The command exited: tell the sentinel to stand down (its group is left running). */
export function releaseLifeline(child: ChildProcess): void {
  const stdin = child.stdin;
  if (!stdin || stdin.destroyed) return;
  try {
    stdin.end('\n');
  } catch {
    // the sentinel is gone already
  }
}
