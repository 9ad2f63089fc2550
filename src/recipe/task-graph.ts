// The `needs` graph: cycles (as printable paths), transitive dependencies, and topological levels.
// Edges point from a task to the tasks it needs. Only ids that exist are expected in the graph.

export type NeedsGraph = ReadonlyMap<string, readonly string[]>;

/**
 * Every elementary cycle reachable by depth-first search, each once, rotated so it starts at its
 * smallest id and closed (a -> b -> a is ['a', 'b', 'a']). Order follows the graph's insertion order.
 */
export function findCycles(graph: NeedsGraph): string[][] {
  const state = new Map<string, 'active' | 'done'>();
  const stack: string[] = [];
  const seen = new Set<string>();
  const cycles: string[][] = [];
  const visit = (id: string): void => {
    state.set(id, 'active');
    stack.push(id);
    for (const next of graph.get(id) ?? []) {
      if (!graph.has(next)) continue;
      const s = state.get(next);
      if (s === 'active') {
        const loop = stack.slice(stack.indexOf(next));
        const start = loop.indexOf([...loop].sort()[0]!);
        const rotated = [...loop.slice(start), ...loop.slice(0, start)];
        const sig = rotated.join('\u0000');
        if (!seen.has(sig)) {
          seen.add(sig);
          cycles.push([...rotated, rotated[0]!]);
        }
      } else if (s === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(id, 'done');
  };
  for (const id of graph.keys()) if (!state.has(id)) visit(id);
  return cycles;
}

/** All tasks `id` depends on, directly or through others (never includes `id` unless in a cycle). */
export function transitiveNeeds(graph: NeedsGraph, id: string): Set<string> {
  const out = new Set<string>();
  const todo = [...(graph.get(id) ?? [])];
  while (todo.length) {
    const next = todo.pop()!;
    if (out.has(next) || !graph.has(next)) continue;
    out.add(next);
    todo.push(...(graph.get(next) ?? []));
  }
  return out;
}

/**
 * Level of each task: 0 for tasks that need nothing, else 1 + the highest level of what it
 * needs. Tasks of one level can run in parallel. Requires an acyclic graph.
 */
export function topologicalLevels(graph: NeedsGraph): string[][] {
  const level = new Map<string, number>();
  const depth = (id: string): number => {
    const known = level.get(id);
    if (known !== undefined) return known;
    level.set(id, 0); // guards against a cycle slipping through: it cannot recurse forever
    const needs = (graph.get(id) ?? []).filter((n) => graph.has(n));
    const d = needs.length ? 1 + Math.max(...needs.map(depth)) : 0;
    level.set(id, d);
    return d;
  };
  const levels: string[][] = [];
  for (const id of graph.keys()) {
    const d = depth(id);
    const level = levels[d] ?? [];
    levels[d] = level;
    level.push(id);
  }
  return levels.filter((l) => l !== undefined);
}
