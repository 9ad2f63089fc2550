// Ties a command's process group to the life of this process. Commands run detached (their own
// process group, so abort and timeout can kill grandchildren), which also means nothing stops
// them when this process dies without cleaning up (kill -9, out of memory, a terminated worker
// thread): they would run on as orphans and finish side effects the agent was told were cut.
//
// The lifeline: the command's fd 3 is a pipe whose other end only this process holds (stdin is
// /dev/null). A prefix (on the command's first line, so line numbers in shell errors do not move)
// hands that pipe to a sentinel in the same process group and closes it for the command. The
// sentinel blocks reading the pipe: when this process dies the pipe closes, the read fails, and
// the sentinel kills its whole group. When the command exits normally, release() sends a line
// and the sentinel exits quietly (background jobs the command started are left alone). Not
// stdin: node destroys a child's stdin before its 'exit' event, so the line never got through
// and every normal exit killed the command's background jobs.
// The sentinel is double-forked, so `wait` in the command never waits for it. A command that
// moves itself into another process group (setsid) leaves the lifeline's reach.
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/** POSIX sh (bash and dash): run before the command, on the same line. */
const PREFIX = '( ( read -r orchestrate_lifeline <&3 || kill -s KILL 0 ) >/dev/null 2>&1 & ); exec 3<&-; ';

/** How to spawn a command with a lifeline: stdin /dev/null, output piped, fd 3 the lifeline. */
export const LIFELINE_STDIO: ['ignore', 'pipe', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe', 'pipe'];

/** The command with the lifeline prefix; spawn it with LIFELINE_STDIO and call attachLifeline. */
export function withLifeline(command: string): string {
  return PREFIX + command;
}

function lifeline(child: ChildProcess): Writable | undefined {
  const end = child.stdio[3];
  return end && 'write' in end ? (end as Writable) : undefined;
}

/** Keeps a broken lifeline pipe (the sentinel already gone) from becoming an unhandled error. */
export function attachLifeline(child: ChildProcess): void {
  lifeline(child)?.on('error', () => undefined);
}

/** The command exited: tell the sentinel to stand down (its group is left running). */
export function releaseLifeline(child: ChildProcess): void {
  const end = lifeline(child);
  if (!end || end.destroyed) return;
  try {
    end.end('\n');
  } catch {
    // the sentinel is gone already
  }
}
