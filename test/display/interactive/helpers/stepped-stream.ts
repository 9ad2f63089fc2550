// A model reply the test hands out one text delta at a time, for tests of what the interactive app
// draws while a reply streams. The stream is a real AssistantMessageEventStream fed by a
// StreamFunction (the seam the providers fill), so the app sees what it sees from a model.
import { AssistantMessageEventStream, emptyAssistantMessage } from '../../../../src/ai/event-stream.js';
import type { Context, StreamFunction } from '../../../../src/ai/types.js';

/** Steps the test releases one by one; a release before the stream waits is kept (credits), so none is lost. */
export function releasedSteps(): { release: () => void; next: () => Promise<void> } {
  let credits = 0;
  let waiting: (() => void) | undefined;
  const release = () => {
    if (waiting) {
      waiting();
      waiting = undefined;
    } else credits++;
  };
  const next = () =>
    new Promise<void>((r) => {
      if (credits > 0) {
        credits--;
        r();
      } else waiting = r;
    });
  return { release, next };
}

/** The text of the request's last message when it is the user's (what was asked), else ''. */
export function askedText(context: Context): string {
  const last = context.messages.at(-1);
  if (last?.role !== 'user') return '';
  return typeof last.content === 'string'
    ? last.content
    : last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/**
 * Answers every request with one text block streamed as `reply(asked).deltas`; when the reply is
 * `stepped`, each delta waits for the next released step first.
 */
export function textDeltaStream(
  reply: (asked: string) => { deltas: string[]; stepped: boolean },
  steps?: { next: () => Promise<void> },
): StreamFunction {
  return (model, context) => {
    const stream = new AssistantMessageEventStream();
    const out = emptyAssistantMessage(model);
    const { deltas, stepped } = reply(askedText(context));
    void (async () => {
      stream.push({ type: 'start', partial: out });
      const block = { type: 'text' as const, text: '' };
      out.content.push(block);
      stream.push({ type: 'text_start', contentIndex: 0, partial: out });
      for (const delta of deltas) {
        if (stepped) await steps?.next();
        block.text += delta;
        stream.push({ type: 'text_delta', contentIndex: 0, delta, partial: out });
      }
      stream.push({ type: 'text_end', contentIndex: 0, content: block.text, partial: out });
      out.stopReason = 'stop';
      stream.push({ type: 'done', reason: 'stop', message: out });
    })();
    return stream;
  };
}
