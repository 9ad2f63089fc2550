// The client end of a run's control channel (see run-control.ts): `orchestrate watch`, `cancel`
// and `steer` carry actions to the coordinator of a run in another process. Each send opens the
// socket, writes one JSON line, reads one reply line and closes, so a coordinator that ends
// between two sends is noticed by the second.
import { createConnection } from 'node:net';
import { basename } from 'node:path';
import { z } from 'zod';
import type { ControlAction, ControlErrorCode, ControlReply, RunControl } from './run-control.js';
import { controlSocketPath, MAX_CONTROL_LINE_BYTES } from './run-control-socket.js';

export interface RunControlClientOptions {
  /** Longest wait for the reply (default 10 s: a live coordinator answers at once). */
  timeoutMs?: number;
}

export const CONTROL_REPLY_TIMEOUT_MS = 10_000;

const CODES = [
  'refused',
  'malformed_request',
  'failed',
  'not_live',
  'no_reply',
  'timeout',
  'unreachable',
  'malformed_reply',
] as const satisfies readonly ControlErrorCode[];

// A code this client does not know (a newer coordinator) is read as a refusal: the coordinator answered.
const ReplySchema = z.union([
  z.object({ ok: z.literal(true), message: z.string() }),
  z.object({
    ok: z.literal(false),
    error: z.string(),
    code: z
      .string()
      .optional()
      .transform((c): ControlErrorCode => CODES.find((k) => k === c) ?? 'refused'),
  }),
]);

/** Errors that mean nobody listens: the run ended, or its coordinator died. */
const NOT_LIVE = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);

export function connectRunControl(runDir: string, opts: RunControlClientOptions = {}): RunControl {
  const runId = basename(runDir);
  const timeoutMs = opts.timeoutMs ?? CONTROL_REPLY_TIMEOUT_MS;
  return {
    send: (action: ControlAction) =>
      new Promise<ControlReply>((resolve) => {
        const path = controlSocketPath(runDir);
        const socket = createConnection(path);
        let buffer = '';
        let settled = false;
        const settle = (reply: ControlReply) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          socket.destroy();
          resolve(reply);
        };
        const timer = setTimeout(
          () =>
            settle({
              ok: false,
              code: 'timeout',
              error: `run ${runId} did not answer within ${Math.round(timeoutMs / 1000)}s (its coordinator at ${path} may be stuck)`,
            }),
          timeoutMs,
        );
        socket.setEncoding('utf8');
        socket.on('connect', () => socket.write(`${JSON.stringify(action)}\n`));
        socket.on('data', (chunk: string) => {
          buffer += chunk;
          const nl = buffer.indexOf('\n');
          if (nl < 0) {
            if (buffer.length > MAX_CONTROL_LINE_BYTES)
              settle({
                ok: false,
                code: 'malformed_reply',
                error: `run ${runId} sent a reply longer than ${MAX_CONTROL_LINE_BYTES} bytes`,
              });
            return;
          }
          let raw: unknown;
          try {
            raw = JSON.parse(buffer.slice(0, nl));
          } catch {
            raw = undefined;
          }
          const parsed = ReplySchema.safeParse(raw);
          settle(
            parsed.success
              ? parsed.data
              : {
                  ok: false,
                  code: 'malformed_reply',
                  error: `run ${runId} sent a malformed reply: ${buffer.slice(0, Math.min(nl, 200))}`,
                },
          );
        });
        socket.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code && NOT_LIVE.has(err.code))
            settle({
              ok: false,
              code: 'not_live',
              error: `run ${runId} is not live: no coordinator listens on ${path} (${err.code})`,
            });
          else
            settle({
              ok: false,
              code: 'unreachable',
              error: `cannot reach the coordinator of run ${runId} at ${path}: ${err.message}`,
            });
        });
        socket.on('close', () =>
          settle({
            ok: false,
            code: 'no_reply',
            error: `run ${runId} closed the connection without a reply (its run is probably ending)`,
          }),
        );
      }),
  };
}
