// Whose turn it is to land with `land_order: task`. The land order is the recipe's order of its
// tasks, except that a task's needs come before it (wherever they are listed: the needed work has
// landed before its dependant can even start, so it could never land after it). An instance of a
// train task lands after every instance of the train tasks before its task in that order, in the
// same repository, has ended (landed, failed, cancelled or skipped), started or not: a task not
// expanded yet (its needs still running) is waited for too, and a task of `attempts: N` until its
// picks have landed and it has settled. Because the order follows the needs, a wait never needs
// its own waiter to end, and the lowest waiting task always lands first. Pure: no events, no
// timers; MergeTrain asks it again whenever a status changes.
import type { LoadedTask } from '../../recipe/index.js';
import { isInside } from '../../tools/workspace.js';
import { isTerminal, type InstanceState, type TaskState } from '../../run/run-state.js';

/** Whether a task's work lands through the merge train by its keys (Workspaces.trains adds: when the run has one). */
export function landsByTrain(task: Pick<LoadedTask, 'isolation' | 'merge' | 'land'>): boolean {
  return task.isolation === 'worktree' && task.merge === 'apply' && task.land === 'train';
}

/** Each task's place in the land order (recipe order, a task's needs pulled before it), by task id. */
export function landPositions(tasks: readonly TaskState[]): Map<string, number> {
  const byId = new Map(tasks.map((t) => [t.task.id, t]));
  const pos = new Map<string, number>();
  const place = (t: TaskState, path: Set<string>): void => {
    if (pos.has(t.task.id) || path.has(t.task.id)) return; // placed, or a cycle (the recipe check refuses those)
    path.add(t.task.id);
    for (const n of t.task.needs) {
      const need = byId.get(n);
      if (need) place(need, path);
    }
    pos.set(t.task.id, pos.size);
  };
  for (const t of tasks) place(t, new Set());
  return pos;
}

/** What an instance still waits behind: the earlier train tasks not ended in its repository, and their unfinished instances. */
export interface TurnWait {
  tasks: string[];
  keys: string[];
}

/**
 * What the instance of `t` in repository `root` still waits behind before it may land (empty
 * lists: its turn has come). `tasks` are the run's tasks in recipe order; `pos` their land
 * positions (landPositions), passed by a caller that asks often. `first`: stop at the first task
 * waited for (whether its turn has come is all the caller asks).
 */
export function turnWait(
  tasks: readonly TaskState[],
  t: TaskState,
  root: string,
  pos: ReadonlyMap<string, number> = landPositions(tasks),
  first = false,
): TurnWait {
  const mine = pos.get(t.task.id) ?? 0;
  const behind: { task: string; keys: string[] }[] = [];
  for (const earlier of tasks) {
    if (first && behind.length > 0) break;
    if (earlier === t || (pos.get(earlier.task.id) ?? 0) >= mine || !landsByTrain(earlier.task)) continue;
    // Not expanded yet: its instances and their repository are not known, so it is waited for.
    if (!earlier.expanded && earlier.status === 'waiting') {
      behind.push({ task: earlier.task.id, keys: [] });
      continue;
    }
    const here = earlier.instances.filter((i) => inRepository(i, root));
    const open = here.filter((i) => !isTerminal(i.status));
    // attempts: N: the attempts end before the picked one lands, so the task counts until it settles.
    const picking = earlier.task.attempts !== undefined && earlier.status === 'active' && here.length > 0;
    if (open.length === 0 && !picking) continue;
    behind.push({ task: earlier.task.id, keys: open.map((i) => i.id) });
  }
  // In the order they land (the views say "behind pre, one").
  behind.sort((a, b) => (pos.get(a.task) ?? 0) - (pos.get(b.task) ?? 0));
  return { tasks: behind.map((b) => b.task), keys: behind.flatMap((b) => b.keys) };
}

/**
 * Whether the writes scope of a waiting instance of `t` keeps `other` (an instance of task
 * `otherTask`) from starting: yes when `other` lands after it (its task is not before `t`'s in the
 * land order), so it starts from the waiting work once landed; never for the work it waits behind.
 */
export function holdsAgainst(
  tasks: readonly TaskState[],
  t: TaskState,
  otherTask: string,
  pos: ReadonlyMap<string, number> = landPositions(tasks),
): boolean {
  return (pos.get(otherTask) ?? Number.POSITIVE_INFINITY) >= (pos.get(t.task.id) ?? 0);
}

/** Whether `i` works in repository `root`: its repository once known, else where its cwd lies (unknown: yes). */
function inRepository(i: InstanceState, root: string): boolean {
  if (i.git) return i.git.root === root;
  const cwd = i.resolved?.cwd;
  return cwd === undefined || isInside(root, cwd);
}
