// What every provider's request attempt watches besides its reply: the caller's abort, and a server
// that goes quiet mid-stream (streamIdleTimeoutMs). One watchdog per attempt links both into the one
// signal the SDK is given, and says afterwards whether it was the silence that ended the stream: the
// SDKs end iteration quietly on abort, so the reason has to be kept on our side.

/**
 * Marks a failure our own code detected (idle stream, cut stream), as opposed to an SDK error.
 * `timedOut`: the stream went quiet for too long, said as data so no one reads it from the text.
 */
export class StreamFailure extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

export class StreamWatchdog {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private wentIdle = false;
  private readonly onCallerAbort = (): void => this.controller.abort();

  constructor(
    private readonly idleMs: number,
    private readonly callerSignal?: AbortSignal,
  ) {
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.timer = setTimeout(() => {
      this.wentIdle = true;
      this.controller.abort();
    }, idleMs);
  }

  /** The signal to hand the SDK: aborts when the caller aborts or the stream goes idle. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The stream sent nothing for idleMs and was aborted for it. */
  get idle(): boolean {
    return this.wentIdle;
  }

  /** Reads a stream to its end, the idle clock starting again with each item (and now, as headers arrived). */
  async read<T>(items: AsyncIterable<T>, handle: (item: T) => void): Promise<void> {
    this.timer.refresh();
    for await (const item of items) {
      this.timer.refresh();
      handle(item);
    }
  }

  /** The failure an idle stream is reported as; `who` is e.g. "The Anthropic API". */
  idleFailure(who: string, contentStarted: boolean): StreamFailure {
    const what = contentStarted ? 'in the middle of the reply' : 'before the reply started';
    return new StreamFailure(
      `${who} sent nothing for ${this.idleMs} ms ${what}; the stream was abandoned (streamIdleTimeoutMs).`,
      true,
    );
  }

  /** Stops the idle clock and lets go of the caller's signal. */
  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }
}
