import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../../src/orchestrator/workspace/keyed-lock.js';

/** A task that runs until its `finish` is called, and records when it started. */
function gated(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const fn = async () => {
    log.push(`start ${name}`);
    await done;
    log.push(`end ${name}`);
    return name;
  };
  return { fn, finish };
}

describe('KeyedLock', () => {
  it('runs one at a time per key in arrival order, and different keys side by side', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const a1 = gated(log, 'a1');
    const a2 = gated(log, 'a2');
    const b1 = gated(log, 'b1');
    const p = [lock.run('a', a1.fn), lock.run('a', a2.fn), lock.run('b', b1.fn)];
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['start a1', 'start b1']);
    a1.finish();
    await p[0];
    await new Promise((r) => setImmediate(r));
    expect(log).toContain('start a2');
    a2.finish();
    b1.finish();
    expect(await Promise.all(p)).toEqual(['a1', 'a2', 'b1']);
  });

  it('a failed call does not block the next one and reaches its caller', async () => {
    const lock = new KeyedLock();
    const failed = lock.run('a', async () => {
      throw new Error('git failed');
    });
    const next = lock.run('a', async () => 'ok');
    await expect(failed).rejects.toThrow('git failed');
    expect(await next).toBe('ok');
  });

  it('keeps no queue for a key once its work is done', async () => {
    const lock = new KeyedLock();
    await Promise.all(Array.from({ length: 50 }, (_, i) => lock.run(`repo-${i}`, async () => i)));
    await new Promise((r) => setImmediate(r));
    expect(lock.size).toBe(0);
    await lock.run('again', async () => 1);
    await new Promise((r) => setImmediate(r));
    expect(lock.size).toBe(0);
  });
});
