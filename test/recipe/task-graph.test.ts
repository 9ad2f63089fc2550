// The needs graph: cycle paths, transitive needs, topological levels.
import { describe, expect, it } from 'vitest';
import { findCycles, topologicalLevels, transitiveNeeds } from '../../src/recipe/task-graph.js';

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe('task graph', () => {
  it('prints a cycle as a closed path that starts at its smallest id', () => {
    expect(findCycles(graph({ c: ['b'], b: ['a'], a: ['c'] }))).toEqual([['a', 'c', 'b', 'a']]);
    expect(findCycles(graph({ x: ['y'], y: ['x'] }))).toEqual([['x', 'y', 'x']]);
  });

  it('finds separate cycles once each and none in a DAG', () => {
    const cycles = findCycles(graph({ a: ['b'], b: ['a'], c: ['d'], d: ['c'], e: ['a'] }));
    expect(cycles).toEqual([
      ['a', 'b', 'a'],
      ['c', 'd', 'c'],
    ]);
    expect(findCycles(graph({ a: [], b: ['a'], c: ['a', 'b'] }))).toEqual([]);
  });

  it('transitive needs follow chains and ignore unknown ids', () => {
    const g = graph({ a: [], b: ['a', 'ghost'], c: ['b'], d: [] });
    expect([...transitiveNeeds(g, 'c')].sort()).toEqual(['a', 'b']);
    expect([...transitiveNeeds(g, 'd')]).toEqual([]);
  });

  it('levels put each task one below the deepest task it needs', () => {
    expect(
      topologicalLevels(graph({ plan: [], lint: [], apply: ['plan'], review: ['apply', 'lint'], notify: ['plan'] })),
    ).toEqual([['plan', 'lint'], ['apply', 'notify'], ['review']]);
  });
});
