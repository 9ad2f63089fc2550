// Which agent's calls go first while a provider limit binds (the permit broker's queue priority).
// A call of an instance on the DAG's critical path, one whose task the most other tasks wait for
// (transitively), unblocks the most work; a pair's planner comes before its peers because its
// worker waits for every plan. Everything else keeps its arrival order.

/** For each task, how many tasks need it directly or transitively. */
export function dependentCounts(tasks: Iterable<{ id: string; needs: readonly string[] }>): Map<string, number> {
  const dependents = new Map<string, Set<string>>();
  const list = [...tasks];
  for (const t of list) dependents.set(t.id, new Set());
  for (const t of list) for (const n of t.needs) dependents.get(n)?.add(t.id);
  const counts = new Map<string, number>();
  for (const t of list) {
    // Every task reachable along "is needed by" edges (a graph without cycles: the recipe checks).
    const seen = new Set<string>();
    const stack = [...(dependents.get(t.id) ?? [])];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...(dependents.get(id) ?? []));
    }
    counts.set(t.id, seen.size);
  }
  return counts;
}

/** The broker priority of an agent's calls: its task's dependents first, a pair's planner before its peers. */
export function callPriority(dependents: number, agentKey: string): number {
  return dependents * 2 + (agentKey.endsWith('@planner') ? 1 : 0);
}
