// The fold of run.jsonl does O(1) work per event, whatever the number of instances: counted, not
// timed. A fan-out of N instances is folded with the task's key list and the instance map wrapped
// so that every element they hand out is counted; the count per event must stay a small constant
// (it grew with N when each instance event scanned the task's keys and each instance's end
// scanned every instance for pair members).
import { describe, expect, it } from 'vitest';
import { applyEvent, createRunState, type RunState } from '../../src/run/run-fold.js';
import type { RunEvent } from '../../src/run/run-events.js';

/** A Map that counts the entries it hands out by iteration. */
class CountingMap<K, V> extends Map<K, V> {
  visited = 0;
  override values(): MapIterator<V> {
    this.visited += this.size;
    return super.values();
  }
  override entries(): MapIterator<[K, V]> {
    this.visited += this.size;
    return super.entries();
  }
  override keys(): MapIterator<K> {
    this.visited += this.size;
    return super.keys();
  }
  override [Symbol.iterator](): MapIterator<[K, V]> {
    this.visited += this.size;
    return super[Symbol.iterator]();
  }
}

/** An array whose element reads are counted (includes, indexOf, find... all read through the proxy). */
function countingArray(items: string[], counter: { reads: number }): string[] {
  return new Proxy(items, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && /^\d+$/.test(prop)) counter.reads++;
      return Reflect.get(target, prop, receiver);
    },
  });
}

const base = { v: 1, runId: 'r1' } as const;

function instanceEvents(key: string, ts: number): RunEvent[] {
  const ref = { ...base, task: 'fan', key, attempt: 1, parent: 'fan' };
  const usage = { input: 100, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110, cost: 0.001 };
  return [
    { ...ref, ts, type: 'instance_queued' },
    { ...ref, ts, type: 'instance_start' },
    { ...ref, ts, type: 'agent_event', event: { type: 'turn_start' } },
    { ...ref, ts, type: 'agent_event', event: { type: 'tool_execution_start', toolCallId: 't1', toolName: 'read' } },
    { ...ref, ts, type: 'agent_event', event: { type: 'tool_execution_end', toolCallId: 't1', toolName: 'read' } },
    { ...ref, ts, type: 'agent_event', event: { type: 'turn_end', stopReason: 'toolUse' } },
    { ...ref, ts, type: 'call_usage', model: 'm', provider: 'scripted', usage },
    { ...ref, ts, type: 'instance_done', output: 'done', text: 'done', usage: { ...usage, turns: 1 }, durationMs: 5 },
  ] as RunEvent[];
}

/** Folds a fan-out of n instances; returns the counted element visits per instance event. */
function foldFanOut(n: number): { perEvent: number; state: RunState } {
  const keys = Array.from({ length: n }, (_, i) => `fan.a${i}`);
  const state = createRunState();
  applyEvent(state, {
    ...base,
    ts: 1,
    type: 'run_start',
    recipe: 'recipe.yaml',
    name: 'fan',
    plan: [{ task: 'fan', needs: [], keys, dynamic: false }],
  } as unknown as RunEvent);
  const counter = { reads: 0 };
  const task = state.tasks.get('fan')!;
  task.keys = countingArray(task.keys, counter);
  const instances = new CountingMap(state.instances);
  state.instances = instances;
  let events = 0;
  for (const [i, key] of keys.entries())
    for (const e of instanceEvents(key, 2 + i)) {
      applyEvent(state, e);
      events++;
    }
  return { perEvent: (counter.reads + instances.visited) / events, state };
}

describe('fold complexity', () => {
  it('folds each instance event in O(1): the work per event does not grow with the instances', () => {
    const small = foldFanOut(100);
    const large = foldFanOut(2_000);
    expect([...large.state.instances.values()].filter((i) => i.status === 'done')).toHaveLength(2_000);
    expect(large.state.tasks.get('fan')!.keys).toHaveLength(2_000);
    // The key set is built once from the key list (n reads in all), then never scanned again.
    expect(large.perEvent).toBeLessThanOrEqual(1);
    expect(large.perEvent).toBeLessThanOrEqual(small.perEvent * 1.5 + 0.5);
  });
});
