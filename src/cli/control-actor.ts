// Who takes an action on a live run, as its `control` event records it: the view or command that
// sent it and the OS user, so the log and the report show who did what.
import { userInfo } from 'node:os';

export function userName(env: Record<string, string | undefined> = process.env): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry (some containers): the environment's word is the best there is.
    return env.USER ?? env.LOGNAME ?? 'unknown user';
  }
}

/** "view (ana)" for the run's own view, "watch (pid 12, ana)" for a watch in another terminal. */
export function controlActor(
  kind: 'view' | 'watch',
  env: Record<string, string | undefined> = process.env,
  pid: number = process.pid,
): string {
  return kind === 'view' ? `view (${userName(env)})` : `${kind} (pid ${pid}, ${userName(env)})`;
}
