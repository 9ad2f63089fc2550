import { describe, expect, it } from 'vitest';
import { Scheduler, type SchedulableInstance } from '../../../src/orchestrator/schedule/scheduler.js';

interface Gate {
  started: Promise<void>;
  finish: () => void;
  run: () => Promise<void>;
  isStarted: () => boolean;
}

function gate(): Gate {
  let started = false;
  let onStart!: () => void;
  let finish!: () => void;
  const startedP = new Promise<void>((r) => (onStart = r));
  const done = new Promise<void>((r) => (finish = r));
  return {
    started: startedP,
    finish: () => finish(),
    isStarted: () => started,
    run: async () => {
      started = true;
      onStart();
      await done;
    },
  };
}

const inst = (id: string, over: Partial<SchedulableInstance> = {}): SchedulableInstance => ({
  id,
  task: id.split('.')[0]!,
  writes: [],
  order: 0,
  ...over,
});
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('Scheduler', () => {
  it('never runs more than the global concurrency', async () => {
    const s = new Scheduler({ concurrency: 2 });
    const gates = [gate(), gate(), gate()];
    for (const [i, g] of gates.entries()) s.submit(inst(`t.${i}`), g.run);
    await tick();
    expect(gates.map((g) => g.isStarted())).toEqual([true, true, false]);
    gates[0]!.finish();
    await gates[2]!.started;
    expect(s.runningCount).toBe(2);
    gates[1]!.finish();
    gates[2]!.finish();
    await s.onIdle();
  });

  it('holds a task at max_parallel while other tasks still start', async () => {
    const s = new Scheduler({ concurrency: 4 });
    const a1 = gate();
    const a2 = gate();
    const b = gate();
    s.submit(inst('a.1', { maxParallel: 1 }), a1.run);
    s.submit(inst('a.2', { maxParallel: 1 }), a2.run);
    s.submit(inst('b'), b.run);
    await tick();
    expect([a1.isStarted(), a2.isStarted(), b.isStarted()]).toEqual([true, false, true]);
    a1.finish();
    await a2.started;
    a2.finish();
    b.finish();
  });

  it('never runs two instances with overlapping writes at once, but runs disjoint ones together', async () => {
    const s = new Scheduler({ concurrency: 4 });
    const x = gate();
    const y = gate();
    const z = gate();
    s.submit(inst('w.x', { writes: ['/r/src/**'] }), x.run);
    s.submit(inst('w.y', { writes: ['/r/src/a.ts'] }), y.run);
    s.submit(inst('w.z', { writes: ['/r/docs/**'] }), z.run);
    await tick();
    expect([x.isStarted(), y.isStarted(), z.isStarted()]).toEqual([true, false, true]);
    expect(s.lastWaitReason).toMatch(/writes overlap with running w\.x/);
    x.finish();
    await y.started;
    y.finish();
    z.finish();
  });

  it('asks the admission check, keeps waiting ones, and drops refused ones', async () => {
    let allow = false;
    const refused: string[] = [];
    const s = new Scheduler({
      concurrency: 2,
      admit: (i) => (i.id === 'r' ? { refuse: 'no budget' } : allow ? undefined : { wait: 'budget reserved' }),
      onRefused: (i, why) => refused.push(`${i.id}: ${why}`),
    });
    const a = gate();
    s.submit(inst('a'), a.run);
    s.submit(inst('r'), gate().run);
    await tick();
    expect(a.isStarted()).toBe(false);
    expect(refused).toEqual(['r: no budget']);
    allow = true;
    s.pump();
    await a.started;
    a.finish();
  });

  it('starts earlier levels first and stop() returns what never started', async () => {
    const s = new Scheduler({ concurrency: 1 });
    const order: string[] = [];
    const first = gate();
    s.submit(inst('x', { order: 0 }), first.run);
    s.submit(inst('late', { order: 2 }), async () => void order.push('late'));
    s.submit(inst('early', { order: 1 }), async () => void order.push('early'));
    await first.started;
    first.finish();
    await s.onIdle();
    expect(order).toEqual(['early', 'late']);
    const g = gate();
    s.submit(inst('busy'), g.run);
    s.submit(inst('never'), gate().run);
    await g.started;
    expect(s.stop().map((i) => i.id)).toEqual(['never']);
    g.finish();
  });

  it('keeps the waiting list in order with O(1) comparisons per submit in order, O(log n) out of order (counted, not timed)', async () => {
    const g = gate();
    const s = new Scheduler({ concurrency: 1 });
    let reads = 0;
    /** An instance whose `order` reads are counted: the scheduler compares only through it. */
    const counted = (id: string, order: number): SchedulableInstance => {
      const i = inst(id);
      Object.defineProperty(i, 'order', {
        get: () => {
          reads++;
          return order;
        },
      });
      return i;
    };
    s.submit(counted('first', 0), g.run);
    await g.started;
    const n = 2_000;
    reads = 0;
    for (let k = 0; k < n; k++) s.submit(counted(`fan.${k}`, 1), async () => undefined);
    // One comparison with the last waiting instance each (sorting every time read n log n each).
    expect(reads).toBeLessThanOrEqual(2 * n);
    reads = 0;
    // An earlier level arriving late goes before the waiting fan-out by binary search.
    s.submit(counted('early', 0), async () => undefined);
    expect(reads).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(n + 1)) + 2);
    const left = s.stop().map((i) => i.id);
    expect(left[0]).toBe('early');
    expect(left.slice(1)).toEqual(Array.from({ length: n }, (_, k) => `fan.${k}`));
    g.finish();
  });
  it('a released instance gives back its slot, its max_parallel count and its budget reservation, and settles later', async () => {
    const seen: string[][] = [];
    const s = new Scheduler({
      concurrency: 1,
      admit: (_i, running) => void seen.push(running.map((r) => r.id)),
    });
    const a1 = gate();
    const a2 = gate();
    const b = gate();
    s.submit(inst('a.1', { maxParallel: 1 }), a1.run);
    s.submit(inst('a.2', { maxParallel: 1 }), a2.run);
    s.submit(inst('b'), b.run);
    expect([a1.isStarted(), a2.isStarted(), b.isStarted()]).toEqual([true, false, false]);
    // a.1's agent is done and its work waits to land: the next of its own task may start.
    s.release('a.1');
    expect([a2.isStarted(), b.isStarted()]).toEqual([true, false]);
    expect(seen.at(-1)).toEqual([]);
    expect(s.runningCount).toBe(1);
    expect(s.runningInstances().map((i) => i.id)).toEqual(['a.2']);
    a2.finish();
    await b.started;
    a1.finish();
    b.finish();
    await s.onIdle();
    expect(s.runningCount).toBe(0);
  });

  it("a released instance's writes keep out only the instances it holds them against, until its run settles", async () => {
    const s = new Scheduler({ concurrency: 4 });
    const waiter = gate();
    const earlier = gate();
    const later = gate();
    s.submit(inst('mid.1', { writes: ['/r/src/**'] }), waiter.run);
    s.release('mid.1', (other) => other.task === 'late');
    s.submit(inst('early.1', { writes: ['/r/src/a.ts'] }), earlier.run);
    s.submit(inst('late.1', { writes: ['/r/src/b.ts'] }), later.run);
    expect([earlier.isStarted(), later.isStarted()]).toEqual([true, false]);
    expect(s.lastWaitReason).toBe('writes overlap with mid.1, whose work waits to land');
    earlier.finish();
    waiter.finish();
    await later.started;
    later.finish();
  });

  it('an instance queued again (a repair) while its released run settles keeps its slot', async () => {
    const s = new Scheduler({ concurrency: 1 });
    const first = gate();
    const repair = gate();
    const other = gate();
    s.submit(inst('x'), first.run);
    s.release('x');
    s.submit(inst('x'), repair.run);
    expect(repair.isStarted()).toBe(true);
    first.finish();
    // The first run's end must not free the repair's slot: `other` waits for the repair.
    s.submit(inst('y'), other.run);
    // Every promise reaction of the first run's end has run once a macrotask has passed.
    await new Promise((r) => setImmediate(r));
    expect(other.isStarted()).toBe(false);
    expect(s.runningInstances().map((i) => i.id)).toEqual(['x']);
    repair.finish();
    await other.started;
    other.finish();
  });
});
