import { describe, expect, it } from 'vitest';
import { AssistantMessageEventStream, errorAssistantMessage } from '../../src/ai/event-stream.js';

const model = { api: 'scripted', provider: 'scripted', id: 'm' };

describe('AssistantMessageEventStream', () => {
  it('resolves result() with the terminal message and ignores later pushes', async () => {
    const s = new AssistantMessageEventStream(model);
    const msg = { ...errorAssistantMessage(model, 'x'), stopReason: 'stop' as const, errorMessage: undefined };
    s.push({ type: 'start', partial: msg });
    s.push({ type: 'done', reason: 'stop', message: msg });
    s.push({ type: 'start', partial: msg });
    const seen: string[] = [];
    for await (const e of s) seen.push(e.type);
    expect(seen).toEqual(['start', 'done']);
    expect(await s.result()).toBe(msg);
  });

  it('end() without a terminal event yields an error message instead of hanging', async () => {
    const s = new AssistantMessageEventStream(model);
    s.end();
    const r = await s.result();
    expect(r.stopReason).toBe('error');
    expect(r.errorMessage).toMatch(/without a final message/);
  });

  it('delivers events pushed after the consumer started waiting', async () => {
    const s = new AssistantMessageEventStream(model);
    const got: string[] = [];
    const consumer = (async () => {
      for await (const e of s) got.push(e.type);
    })();
    await new Promise((r) => setTimeout(r, 5));
    const msg = errorAssistantMessage(model, 'boom');
    s.push({ type: 'error', reason: 'error', error: msg });
    await consumer;
    expect(got).toEqual(['error']);
  });
});

describe('contentText', () => {
  it('joins text blocks with newlines and leaves images out', async () => {
    const { contentText } = await import('../../src/ai/content-text.js');
    expect(contentText('plain')).toBe('plain');
    expect(
      contentText([
        { type: 'text', text: 'a' },
        { type: 'image', data: 'x', mimeType: 'image/png' },
        { type: 'text', text: 'b' },
      ]),
    ).toBe('a\nb');
    expect(contentText([])).toBe('');
  });
});
