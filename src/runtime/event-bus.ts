// Delivery of session events: synchronous listeners first (displays, the json/rpc writers),
// then async hooks (the host's onEvent, extension `event` handlers) chained on one promise so
// they run strictly in order however slow each is. The chain is what the session awaits before
// a tool call and before prompt() returns.
import type { RegisteredHandler } from './extensions.js';
import type { AgentSessionEvent, AgentSessionListener } from './session-events.js';

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class SessionEventBus {
  private listeners: readonly AgentSessionListener[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly onEvent: ((event: AgentSessionEvent) => void | Promise<void>) | undefined,
    private readonly handlers: readonly RegisteredHandler<'event'>[],
    /** Where failures of listeners and hooks are reported. */
    readonly notify: (message: string) => void,
  ) {}

  subscribe(listener: AgentSessionListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  clear(): void {
    this.listeners = [];
  }

  emit(event: AgentSessionEvent): void {
    this.callListeners(event);
    const onEvent = this.onEvent;
    const handlers = this.handlers;
    if (!onEvent && handlers.length === 0) return;
    this.chain = this.chain.then(async () => {
      if (onEvent) {
        try {
          await onEvent(event);
        } catch (err) {
          this.notify(`The onEvent hook threw on ${event.type}: ${errorText(err)}`);
        }
      }
      for (const h of handlers) {
        try {
          await h.handler(event);
        } catch (err) {
          this.reportExtensionError(h.source, 'event', err);
        }
      }
    });
  }

  /** Resolves when every async hook queued so far has run. */
  idle(): Promise<void> {
    return this.chain;
  }

  /** Reported to listeners only: an extension failing on an event must not see its own error event. */
  reportExtensionError(source: string, event: string, err: unknown): void {
    const error = errorText(err);
    this.notify(`Extension ${source} failed on ${event}: ${error}`);
    this.callListeners({ type: 'extension_error', extensionPath: source, event, error });
  }

  private callListeners(event: AgentSessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.notify(`A session listener threw on ${event.type}: ${errorText(err)}`);
      }
    }
  }
}
