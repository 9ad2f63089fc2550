// An async-iterable event queue with a final result. A stream always ends with a terminal
// event: if a producer calls end() without one, the result is a synthesized error message
// (the reference leaves result() pending forever in that case).
import type { AssistantMessage, AssistantMessageEvent, Model } from './types.js';
import { emptyUsage } from './usage.js';

export class EventStream<T, R> implements AsyncIterable<T> {
  private readonly queue: T[] = [];
  private readonly waiters: ((r: IteratorResult<T>) => void)[] = [];
  private finished = false;
  private resolveResult!: (r: R) => void;
  private readonly resultPromise: Promise<R>;

  constructor(
    private readonly isTerminal: (event: T) => boolean,
    private readonly resultOf: (event: T) => R,
    private readonly fallbackResult?: () => R,
  ) {
    this.resultPromise = new Promise<R>((resolve) => (this.resolveResult = resolve));
  }

  /** Adds an event. Pushes after the terminal event are ignored. */
  push(event: T): void {
    if (this.finished) return;
    if (this.isTerminal(event)) {
      this.finished = true;
      this.resolveResult(this.resultOf(event));
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.queue.push(event);
    if (this.finished) this.flushWaiters();
  }

  /** Ends the stream; without a terminal event the result falls back to `fallbackResult`. */
  end(result?: R): void {
    if (!this.finished) {
      this.finished = true;
      if (result !== undefined) this.resolveResult(result);
      else if (this.fallbackResult) this.resolveResult(this.fallbackResult());
    }
    this.flushWaiters();
  }

  get done(): boolean {
    return this.finished;
  }

  result(): Promise<R> {
    return this.resultPromise;
  }

  private flushWaiters(): void {
    if (this.queue.length > 0) return;
    for (const w of this.waiters.splice(0)) w({ value: undefined as never, done: true });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    while (true) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.finished) return;
      const r = await new Promise<IteratorResult<T>>((resolve) => this.waiters.push(resolve));
      if (r.done) return;
      yield r.value;
    }
  }
}

/** A reply with no content yet, stamped with the model: what every provider streams into. */
export function emptyAssistantMessage(model: Pick<Model, 'api' | 'provider' | 'id'>): AssistantMessage {
  return {
    role: 'assistant',
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: 'stop',
    timestamp: Date.now(),
  };
}

/** Builds an assistant message that reports a failure (used before or instead of a stream). */
export function errorAssistantMessage(
  model: Pick<Model, 'api' | 'provider' | 'id'>,
  errorMessage: string,
  stopReason: 'error' | 'aborted' = 'error',
): AssistantMessage {
  return { ...emptyAssistantMessage(model), stopReason, errorMessage };
}

export class AssistantMessageEventStream extends EventStream<AssistantMessageEvent, AssistantMessage> {
  constructor(model?: Pick<Model, 'api' | 'provider' | 'id'>) {
    super(
      (e) => e.type === 'done' || e.type === 'error',
      (e) => {
        if (e.type === 'done') return e.message;
        if (e.type === 'error') return e.error;
        throw new Error('not terminal');
      },
      () =>
        errorAssistantMessage(
          model ?? { api: 'unknown', provider: 'unknown', id: 'unknown' },
          'The stream ended without a final message',
        ),
    );
  }
}

/** Ends block `contentIndex` of the reply being built: text_end, thinking_end or toolcall_end, by the block's type. */
export function pushContentEnd(
  stream: AssistantMessageEventStream,
  partial: AssistantMessage,
  contentIndex: number,
): void {
  const block = partial.content[contentIndex]!;
  if (block.type === 'text') stream.push({ type: 'text_end', contentIndex, content: block.text, partial });
  else if (block.type === 'thinking')
    stream.push({ type: 'thinking_end', contentIndex, content: block.thinking, partial });
  else stream.push({ type: 'toolcall_end', contentIndex, toolCall: block, partial });
}
