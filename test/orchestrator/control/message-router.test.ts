import { describe, expect, it } from 'vitest';
import { MessageRouter, type Endpoint } from '../../../src/orchestrator/control/message-router.js';
import type { CoordinatorMessage } from '../../../src/orchestrator/protocol.js';

function setup() {
  const instances: Record<string, string[]> = { a: ['a'], b: ['b.1', 'b.2'], later: [] };
  const finished = new Set<string>();
  const router = new MessageRouter({
    instancesOf: (t) => instances[t],
    hasInstance: (id) => Object.values(instances).some((l) => l.includes(id)),
    isFinished: (id) => finished.has(id),
  });
  const inbox: Record<string, CoordinatorMessage[]> = {};
  const ep = (id: string, task: string): Endpoint => ({
    id,
    task,
    post: (m) => {
      inbox[id] ??= [];
      inbox[id].push(m);
    },
  });
  return { router, inbox, ep, instances, finished };
}

describe('MessageRouter', () => {
  it('delivers to an instance, to every instance of a task, and to everyone but the sender', () => {
    const { router, inbox, ep } = setup();
    router.register(ep('a', 'a'));
    router.register(ep('b.1', 'b'));
    router.register(ep('b.2', 'b'));
    expect(router.send('a', 'b.1', 'hi one')).toEqual({ delivered: ['b.1'], queued: [] });
    expect(router.send('a', 'b', 'hi all b')).toEqual({ delivered: ['b.1', 'b.2'], queued: [] });
    expect(router.send('b.1', '*', 'broadcast').delivered).toEqual(['a', 'b.2']);
    expect(inbox['b.1']).toEqual([
      { type: 'deliver', from: 'a', text: 'hi one' },
      { type: 'deliver', from: 'a', text: 'hi all b' },
    ]);
    expect(inbox.a).toEqual([{ type: 'deliver', from: 'b.1', text: 'broadcast' }]);
  });

  it('keeps messages for instances that have not started and delivers them on register', () => {
    const { router, inbox, ep, instances } = setup();
    router.register(ep('a', 'a'));
    expect(router.send('a', 'b.2', 'wait for me')).toEqual({ delivered: [], queued: ['b.2'] });
    expect(router.send('a', 'later', 'for the fan-out')).toEqual({ delivered: [], queued: ['later'] });
    router.register(ep('b.2', 'b'));
    expect(inbox['b.2']).toEqual([{ type: 'deliver', from: 'a', text: 'wait for me' }]);
    instances.later = ['later.x'];
    router.register(ep('later.x', 'later'));
    expect(inbox['later.x']).toEqual([{ type: 'deliver', from: 'a', text: 'for the fan-out' }]);
    // A retried instance registering again does not get the same message twice.
    router.unregister('later.x');
    router.register(ep('later.x', 'later'));
    expect(inbox['later.x']).toHaveLength(1);
  });

  it('explains unknown, finished and self targets', () => {
    const { router, ep, finished } = setup();
    router.register(ep('a', 'a'));
    expect(router.send('a', 'nope', 'x').error).toMatch(/no task or agent is called "nope"/);
    expect(router.send('a', 'a', 'x').error).toMatch(/itself/);
    finished.add('b.1');
    expect(router.send('a', 'b.1', 'x').error).toMatch(/already finished/);
    expect(router.send('a', 'parent', 'note').delivered).toEqual(['parent']);
  });
});
