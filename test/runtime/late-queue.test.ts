// A message queued as a run ends (after the loop's last look at its queues, before prompt()
// settles) is part of that prompt: the session goes on with it instead of holding it back for
// whatever prompt comes next. The interactive mode hits this when Enter lands as a reply ends.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/ai/models.js';
import { createScriptedProvider } from '../../src/ai/scripted.js';
import { createAgentSession } from '../../src/runtime/index.js';

async function session() {
  const provider = createScriptedProvider([{ text: 'first answer' }, { text: 'answer to the late message' }]);
  return createAgentSession({
    cwd: mkdtempSync(join(tmpdir(), 'late-queue-')),
    inMemory: true,
    tools: [],
    systemPrompt: 'test',
    defaultSkills: false,
    contextFiles: false,
    model: scriptedModel(),
    streamFn: provider,
    notify: () => {},
  });
}

describe('a message queued as the run ends', () => {
  for (const kind of ['steer', 'followUp'] as const) {
    it(`${kind}: delivered in the same prompt, nothing left pending`, async () => {
      const s = await session();
      let sent = false;
      // agent_end comes after the loop polled its queues for the last time.
      s.subscribe((e) => {
        if (e.type === 'agent_end' && !sent) {
          sent = true;
          s[kind]('a late message');
        }
      });
      await s.prompt('hello');
      const texts = s.messages.map((m) =>
        m.role === 'user'
          ? `user: ${JSON.stringify(m.content)}`
          : m.role === 'assistant'
            ? `assistant: ${m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')}`
            : m.role,
      );
      expect(texts).toEqual([
        'user: [{"type":"text","text":"hello"}]',
        'assistant: first answer',
        'user: [{"type":"text","text":"a late message"}]',
        'assistant: answer to the late message',
      ]);
      expect(s.getState().pendingMessageCount).toBe(0);
      expect(s.isStreaming).toBe(false);
      await s.dispose();
    });
  }

  it('an abort still ends the prompt with the message kept for the next one', async () => {
    const s = await session();
    s.subscribe((e) => {
      if (e.type === 'message_start' && e.message.role === 'assistant') {
        s.steer('while aborting');
        void s.abort();
      }
    });
    await s.prompt('hello');
    expect(s.messages.filter((m) => m.role === 'user')).toHaveLength(1);
    expect(s.getState().pendingMessageCount).toBe(1);
    await s.dispose();
  });
});
