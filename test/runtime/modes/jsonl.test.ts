// The json/rpc event writer: every message_update line has its delta, and the full message
// snapshot stays on small messages but thins out geometrically on huge ones (linear output).
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/ai/models.js';
import { createScriptedProvider } from '../../../src/ai/scripted.js';
import { createAgentSession } from '../../../src/runtime/create-agent-session.js';
import { eventLineWriter } from '../../../src/runtime/modes/jsonl.js';
import type { AgentSessionEvent } from '../../../src/runtime/session-events.js';

async function eventsOf(reply: string): Promise<AgentSessionEvent[]> {
  const session = await createAgentSession({
    cwd: process.cwd(),
    inMemory: true,
    tools: [],
    systemPrompt: 'test',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: createScriptedProvider([{ text: reply }]),
    notify: () => {},
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((e) => events.push(e));
  await session.prompt('go');
  await session.dispose();
  return events;
}

describe('eventLineWriter', () => {
  it('a small reply: every update carries its delta and the snapshot', async () => {
    const events = await eventsOf('a short reply of a few words');
    const write = eventLineWriter();
    const updates = events
      .filter((e) => e.type === 'message_update')
      .map((e) => JSON.parse(write(e)) as { message?: unknown; assistantMessageEvent: { delta?: string } });
    expect(updates.length).toBeGreaterThan(0);
    for (const u of updates) expect(u.message).toBeDefined();
  });

  it('a huge reply: output grows linearly, snapshots thin out, deltas are all there', async () => {
    const reply = 'w'.repeat(400_000);
    const events = await eventsOf(reply);
    const write = eventLineWriter(1_000, 1.25);
    let bytes = 0;
    let snapshots = 0;
    let text = '';
    for (const e of events) {
      const line = write(e);
      bytes += line.length;
      const parsed = JSON.parse(line) as {
        type: string;
        message?: unknown;
        assistantMessageEvent?: { type: string; delta?: string };
      };
      if (parsed.type !== 'message_update') continue;
      if (parsed.message) snapshots++;
      if (parsed.assistantMessageEvent?.type === 'text_delta') text += parsed.assistantMessageEvent.delta ?? '';
    }
    expect(text).toBe(reply);
    // 16 000 deltas: a snapshot on each would be ~3 GB; linear output is a few dozen copies at most.
    expect(bytes).toBeLessThan(30 * reply.length);
    expect(snapshots).toBeLessThan(100);
  });
});
