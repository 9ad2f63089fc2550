// parseWorkerMessage checks `event` messages by hand (#41: most of a run's worker messages). Its
// answers must be the schema's: the same message for a valid one, the schema's own error for any
// malformed one.
import { describe, expect, it } from 'vitest';
import { parseWorkerMessage, WorkerMessageSchema } from '../../src/orchestrator/protocol.js';

const valid: unknown[] = [
  { type: 'event', event: { type: 'turn_end' } },
  { type: 'event', event: { type: 'tool_execution_end', toolName: 'read', result: { content: [] }, isError: false } },
  // Fields beside the message's are dropped (as the schema strips them); the event keeps all of its own.
  { type: 'event', event: { type: 'message_end', message: { role: 'assistant' } }, extra: 1 },
];

const malformed: unknown[] = [
  { type: 'event' },
  { type: 'event', event: null },
  { type: 'event', event: [] },
  { type: 'event', event: 'turn_end' },
  { type: 'event', event: { type: 3 } },
  { type: 'event', event: {} },
  ['event'],
  null,
];

describe('parseWorkerMessage, event messages', () => {
  it('gives what the schema gives for valid events', () => {
    for (const raw of valid) {
      const schema = WorkerMessageSchema.parse(raw);
      expect(parseWorkerMessage(raw)).toEqual({ ok: true, message: schema });
    }
  });

  it('does not share the event object it was given', () => {
    const raw = { type: 'event', event: { type: 'turn_end', n: 1 } };
    const r = parseWorkerMessage(raw);
    if (!r.ok || r.message.type !== 'event') throw new Error('not parsed');
    expect(r.message.event).not.toBe(raw.event);
  });

  it("refuses malformed ones with the schema's error", () => {
    for (const raw of malformed) {
      const r = parseWorkerMessage(raw);
      expect(r.ok, JSON.stringify(raw)).toBe(false);
      expect(WorkerMessageSchema.safeParse(raw).success).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/^malformed worker message: /);
    }
  });
});
