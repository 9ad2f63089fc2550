// The worker's end of its MessagePort to the coordinator: typed sends, validated receives, the
// permit channel the permit-wrapped stream uses, and request/response for send_message.
// During a task the worker's event loop runs normally, so coordinator messages (grants,
// deliveries, abort) arrive while the agent works.
import type { MessagePort } from 'node:worker_threads';
import type { PermitCallInfo, PermitChannel, PermitKind } from './permitted-stream.js';
import type { RateLimitSnapshot } from '../../ai/rate-limit-headers.js';
import type { LearnedWindow } from '../../ai/learned-windows.js';
import {
  parseCoordinatorMessage,
  type BoardAnswer,
  type BoardRequest,
  type CoordinatorMessage,
  type WorkerMessage,
} from '../protocol.js';
import type { BudgetScope, UsageSummary } from '../../run/usage-summary.js';
import type { FailureReason } from '../schedule/failure-policy.js';

type PermitAnswer = { ok: true; slotId: number } | { ok: false; reason: string; budget?: BudgetScope };
type SendAnswer = { delivered: string[]; queued: string[]; error?: string };

export interface WorkerLinkHandlers {
  deliver?: (from: string, text: string) => void;
  abort?: (reason: FailureReason) => void;
  wrapUp?: (text: string) => void;
  stream?: (on: boolean) => void;
  /** Another agent of the run learned a model's context window. */
  windowLearned?: (w: LearnedWindow) => void;
}

export class WorkerLink implements PermitChannel {
  private nextId = 1;
  private readonly permits = new Map<number, (a: PermitAnswer) => void>();
  private readonly sends = new Map<number, (a: SendAnswer) => void>();
  private readonly boardCalls = new Map<number, (a: BoardAnswer) => void>();
  /** Grants that arrived after their request was given up (aborted): handed straight back. */
  private readonly abandoned = new Set<number>();
  private handlers: WorkerLinkHandlers = {};
  private closed = false;
  /** The coordinator wants the text being written (a `stream` message; kept even before handlers are set). */
  streaming = false;
  /** Messages the coordinator sent that did not validate (reported in the result, never thrown). */
  readonly protocolErrors: string[] = [];

  constructor(private readonly port: MessagePort) {
    port.on('message', (raw: unknown) => this.receive(raw));
  }

  setHandlers(h: WorkerLinkHandlers): void {
    this.handlers = h;
  }

  post(message: WorkerMessage): void {
    if (this.closed) return;
    try {
      this.port.postMessage(message);
    } catch (err) {
      // An event that cannot be cloned must not kill the agent; report it as text instead.
      if (message.type === 'event')
        this.port.postMessage({ type: 'event', event: { type: message.event.type, unclonable: String(err) } });
    }
  }

  private receive(raw: unknown): void {
    const parsed = parseCoordinatorMessage(raw);
    if (!parsed.ok) {
      this.protocolErrors.push(parsed.error);
      return;
    }
    const m: CoordinatorMessage = parsed.message;
    switch (m.type) {
      case 'permit_grant': {
        const resolve = this.permits.get(m.requestId);
        if (resolve) {
          this.permits.delete(m.requestId);
          resolve({ ok: true, slotId: m.slotId });
        } else if (this.abandoned.delete(m.requestId)) {
          this.post({
            type: 'usage',
            slotId: m.slotId,
            model: '',
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 },
          });
        }
        break;
      }
      case 'permit_deny': {
        const resolve = this.permits.get(m.requestId);
        this.permits.delete(m.requestId);
        this.abandoned.delete(m.requestId);
        resolve?.({ ok: false, reason: m.reason, budget: m.budget });
        break;
      }
      case 'send_result': {
        const resolve = this.sends.get(m.requestId);
        this.sends.delete(m.requestId);
        resolve?.({ delivered: m.delivered, queued: m.queued, error: m.error });
        break;
      }
      case 'board_result': {
        const resolve = this.boardCalls.get(m.requestId);
        this.boardCalls.delete(m.requestId);
        resolve?.(m.answer);
        break;
      }
      case 'deliver':
        this.handlers.deliver?.(m.from, m.text);
        break;
      case 'abort':
        this.handlers.abort?.({ failure: m.failure, detail: m.detail });
        break;
      case 'wrap_up':
        this.handlers.wrapUp?.(m.text);
        break;
      case 'window_learned':
        this.handlers.windowLearned?.(m.learned);
        break;
      case 'stream':
        this.streaming = m.on;
        this.handlers.stream?.(m.on);
        break;
    }
  }

  // ---- PermitChannel ------------------------------------------------------------------------------

  request(
    model: string,
    kind: PermitKind,
    signal?: AbortSignal,
    provider?: string,
    info?: PermitCallInfo,
  ): Promise<PermitAnswer> {
    const requestId = this.nextId++;
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve({ ok: false, reason: 'aborted' });
      const onAbort = () => {
        if (!this.permits.delete(requestId)) return;
        this.abandoned.add(requestId);
        resolve({ ok: false, reason: 'aborted' });
      };
      // An answered request drops its listener: the agent's signal lives for the whole agent, and
      // one listener left per model call passed node's limit of 10 (a warning on the terminal).
      this.permits.set(requestId, (answer) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(answer);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.post({
        type: 'permit_request',
        requestId,
        model,
        ...(provider !== undefined ? { provider } : {}),
        kind,
        ...(info ? { call: info.call, ...(info.keyHash !== undefined ? { keyHash: info.keyHash } : {}) } : {}),
      });
    });
  }

  started(slotId: number, at: number, heard?: { rateLimits?: RateLimitSnapshot; refused?: boolean }): void {
    this.post({ type: 'permit_started', slotId, at, ...(heard ? { heard } : {}) });
  }

  usage(slotId: number, model: string, usage: UsageSummary, provider?: string): void {
    this.post({ type: 'usage', slotId, model, ...(provider !== undefined ? { provider } : {}), usage });
  }

  rateLimited(model: string, delayMs: number, status?: number, provider?: string): void {
    this.post({
      type: 'rate_limited',
      model,
      ...(provider !== undefined ? { provider } : {}),
      delayMs,
      ...(status !== undefined ? { status } : {}),
    });
  }

  // ---- messages -----------------------------------------------------------------------------------

  /** Sends a message to other agents; resolves with who received it. */
  sendMessage(to: string, text: string, timeoutMs = 10_000): Promise<SendAnswer> {
    const requestId = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.sends.delete(requestId))
          resolve({ delivered: [], queued: [], error: 'the coordinator did not answer in time' });
      }, timeoutMs);
      this.sends.set(requestId, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
      this.post({ type: 'send', to, text, requestId });
    });
  }

  /** One board call (the coordinator's TaskBoard answers); a coordinator that does not answer is an error. */
  board(request: BoardRequest, timeoutMs = 30_000): Promise<BoardAnswer> {
    const requestId = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.boardCalls.delete(requestId))
          resolve({ ok: false, error: 'the coordinator did not answer in time; try again' });
      }, timeoutMs);
      this.boardCalls.set(requestId, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
      this.post({ type: 'board', requestId, request });
    });
  }

  /**
   * Stops listening; pending requests are refused so nothing waits forever. The last message is
   * `done`: the coordinator settles the instance only after it (or the port's close), so every
   * usage message sent before reaches the run totals and the budget.
   */
  close(): void {
    if (this.closed) return;
    this.post({ type: 'done' });
    this.closed = true;
    for (const resolve of this.permits.values()) resolve({ ok: false, reason: 'instance ended' });
    this.permits.clear();
    for (const resolve of this.sends.values()) resolve({ delivered: [], queued: [], error: 'instance ended' });
    this.sends.clear();
    for (const resolve of this.boardCalls.values()) resolve({ ok: false, error: 'instance ended' });
    this.boardCalls.clear();
    this.port.removeAllListeners('message');
    this.port.close();
  }
}
