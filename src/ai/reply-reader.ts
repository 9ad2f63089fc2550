// What every SDK provider's stream reader (Anthropic, OpenAI Chat, OpenAI Responses) tells the
// attempt driver (provider-call.ts) about one request: whether its response began, whether content
// reached the caller (then a retry would repeat it), and the error its stop reason ends with. One
// base class, so the driver reads the three readers the same way and each reader only maps events.
import type { AssistantMessageEventStream } from './event-stream.js';
import type { AssistantMessage, Model } from './types.js';

export abstract class ReplyReader {
  /** True once content streamed: from then on the attempt may not be retried. */
  contentStarted = false;
  /** True once any event of this attempt's response arrived. */
  responseStarted = false;
  /** Called once, when the first event of the response arrives (the driver reports the start). */
  onResponseStart: (() => void) | undefined;
  /** The reply ended with a stop reason that is an error: its text. */
  stopError: string | undefined;

  /**
   * Events go to `stream`, the reply is built in place in `output` (shared by the call's requests);
   * `emitStart` pushes the stream's start event, once per call.
   */
  constructor(
    protected readonly model: Model,
    protected readonly output: AssistantMessage,
    protected readonly stream: AssistantMessageEventStream,
    protected readonly emitStart: () => void,
  ) {}

  /** Marks the response as begun; true for its first event only. */
  protected firstEvent(): boolean {
    if (this.responseStarted) return false;
    this.responseStarted = true;
    this.onResponseStart?.();
    return true;
  }
}
