// The up messages a coordinator reads by the thousand are checked by hand (parseUpMessage, issue
// 41): it must accept and return exactly what UpMessageSchema would, for good and bad input alike.
import { describe, expect, it } from 'vitest';
import { parseUpMessage, UpMessageSchema } from '../../src/cluster/cluster-wire.js';

const inputs: unknown[] = [
  { k: 'port', m: { type: 'event', event: { type: 'turn_start' } } },
  { k: 'port', m: null },
  { k: 'port' },
  { k: 'port', m: undefined },
  { k: 'port', m: [1, 2], extra: 'dropped' },
  { k: 'peer', m: { relay: 'x' } },
  { k: 'session', offset: 0, data: 'eyJ4IjoxfQo=' },
  { k: 'session', offset: 120, data: '', reset: true },
  { k: 'session', offset: 7, data: 'AA==', reset: false, extra: 1 },
  { k: 'session', offset: '7', data: 'AA==' },
  { k: 'session', offset: 7 },
  { k: 'session', data: 'AA==' },
  { k: 'session', offset: 7, data: 5 },
  { k: 'session', offset: 7, data: 'AA==', reset: 'yes' },
  { k: 'session', offset: 7, data: 'AA==', reset: null },
  { k: 'session', offset: Number.POSITIVE_INFINITY, data: 'AA==' },
  { k: 'session', offset: Number.NaN, data: 'AA==' },
  { k: 'claimed', worker: 'w1', stream: 'orchestrate:worker:w1:down' },
  { k: 'claimed', worker: 'w1' },
  { k: 'checkpoint', patch: 'cGF0Y2g=' },
  { k: 'result', result: { ok: true }, patch: '' },
  { k: 'refused', failure: 'workspace', error: 'cannot unpack' },
  { k: 'refused', failure: 'not-a-class', error: 'x' },
  { k: 'other', m: 1 },
  { m: 1 },
  null,
  undefined,
  'port',
  42,
  [{ k: 'port', m: 1 }],
];

describe('parseUpMessage', () => {
  it('accepts and returns what UpMessageSchema does, for every kind, good or bad', () => {
    for (const input of inputs) {
      const zod = UpMessageSchema.safeParse(input);
      const mine = parseUpMessage(input);
      expect({ input, parsed: mine }).toStrictEqual({ input, parsed: zod.success ? zod.data : undefined });
    }
  });
});
