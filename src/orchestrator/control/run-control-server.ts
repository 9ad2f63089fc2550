// The coordinator's end of the control channel (see run-control.ts): a unix socket in the run
// folder, owner-only (created under a umask, so no other user can connect even for a moment,
// and chmod 0600 besides). Each request is one JSON line, validated; each gets one JSON reply
// line. Nothing a client sends can crash the coordinator: a bad line gets an error reply.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { CONTROL_SOCKET_NAME, type ControlAction, type ControlReply } from '../../run/run-control.js';
import { APPROVAL_CHANNELS } from '../../run/run-events.js';
import {
  CONTROL_PATH_NAME,
  controlSocketPath,
  MAX_CONTROL_LINE_BYTES,
  socketPathFits,
} from '../../run/run-control-socket.js';

const By = z.string().max(500).optional();
const Key = z.string().min(1).max(1000);

/** An approval answer (approve / reject): the gate's task, optionally one instance, a note, the channel. */
const approvalFields = {
  task: Key,
  instance: Key.optional(),
  note: z.string().max(MAX_CONTROL_LINE_BYTES).optional(),
  by: By,
  via: z.enum(APPROVAL_CHANNELS).optional(),
  gate: z.literal('publish').optional(),
};

export const ControlActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('cancel'), instance: Key, by: By }).strict(),
  z
    .object({
      action: z.literal('steer'),
      instance: Key,
      text: z.string().min(1, 'a steering message needs text').max(MAX_CONTROL_LINE_BYTES),
      by: By,
    })
    .strict(),
  z.object({ action: z.literal('retry'), instance: Key, by: By }).strict(),
  z.object({ action: z.literal('cancel_run'), by: By }).strict(),
  z.object({ action: z.literal('peek'), instance: Key }).strict(),
  z.object({ action: z.literal('approve'), ...approvalFields }).strict(),
  z.object({ action: z.literal('reject'), ...approvalFields }).strict(),
]);

/** Private temp folders of fallback sockets start with this (a stale one is only removed when it does). */
const FALLBACK_PREFIX = 'orchestrate-ctl-';

export interface RunControlServerOptions {
  runDir: string;
  /** Carries out one action (the coordinator's control()). */
  handle(action: ControlAction): ControlReply | Promise<ControlReply>;
}

/** Parses one request line: the action, or the reply that says what is wrong with it. */
export function parseControlRequest(
  line: string,
): { ok: true; action: ControlAction } | { ok: false; reply: ControlReply } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, reply: { ok: false, code: 'malformed_request', error: 'malformed request: not a JSON line' } };
  }
  const parsed = ControlActionSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` (${issue.path.join('.')})` : '';
    return {
      ok: false,
      reply: {
        ok: false,
        code: 'malformed_request',
        error: `malformed request${where}: ${issue?.message ?? 'invalid'}; expected {"action":"cancel"|"steer"|"retry"|"cancel_run"|"peek"|"approve"|"reject", ...}`,
      },
    };
  }
  const a = parsed.data;
  if (a.action === 'peek') return { ok: true, action: { action: 'peek', instance: a.instance } };
  if (a.action === 'approve' || a.action === 'reject') {
    const { instance, note, by, via, gate } = a;
    return {
      ok: true,
      action: {
        action: a.action,
        task: a.task,
        ...(instance !== undefined ? { instance } : {}),
        ...(note !== undefined ? { note } : {}),
        ...(by !== undefined ? { by } : {}),
        ...(via !== undefined ? { via } : {}),
        ...(gate !== undefined ? { gate } : {}),
      },
    };
  }
  const action: ControlAction =
    a.action === 'cancel_run'
      ? { action: 'cancel_run', ...(a.by !== undefined ? { by: a.by } : {}) }
      : a.action === 'steer'
        ? { action: 'steer', instance: a.instance, text: a.text, ...(a.by !== undefined ? { by: a.by } : {}) }
        : { action: a.action, instance: a.instance, ...(a.by !== undefined ? { by: a.by } : {}) };
  return { ok: true, action };
}

/** Removes what a dead coordinator left (call only while holding the run's lease). */
function removeStale(runDir: string): void {
  const named = controlSocketPath(runDir);
  const own = join(runDir, CONTROL_SOCKET_NAME);
  rmSync(own, { force: true });
  if (named !== own) {
    rmSync(join(runDir, CONTROL_PATH_NAME), { force: true });
    // Only a folder this server made: never remove something a hand-edited file points at.
    if (basename(dirname(named)).startsWith(FALLBACK_PREFIX)) rmSync(dirname(named), { recursive: true, force: true });
  }
}

/** Binds with a umask that leaves the socket owner-only from the start (the main thread only may set it). */
function listenPrivately(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    let old: number | undefined;
    try {
      old = process.umask(0o177);
    } catch {
      // worker threads cannot change the umask: the chmod below still narrows it
    }
    try {
      server.listen(path, () => {
        server.off('error', onError);
        resolve();
      });
    } finally {
      if (old !== undefined) process.umask(old);
    }
  });
}

export class RunControlServer {
  private readonly sockets = new Set<Socket>();
  /** Answers being worked out: close() lets them reply first (an action that ends the run closes the server before its reply). */
  private readonly answering = new Set<Promise<void>>();
  private closed = false;

  private constructor(
    private readonly server: Server,
    /** The socket clients connect to. */
    readonly socketPath: string,
    /** The private folder of a fallback socket (removed at close). */
    private readonly privateDir: string | undefined,
    private readonly runDir: string,
    private readonly handle: RunControlServerOptions['handle'],
  ) {
    server.on('connection', (s) => this.serve(s));
    // A failure after listening (rare: the socket file removed under us) must not crash the run.
    server.on('error', () => undefined);
  }

  /** Listens on the run's control socket; rejects when it cannot (the caller runs without one). */
  static async start(opts: RunControlServerOptions): Promise<RunControlServer> {
    removeStale(opts.runDir);
    let path = join(opts.runDir, CONTROL_SOCKET_NAME);
    let privateDir: string | undefined;
    if (!socketPathFits(path)) {
      // mkdtemp makes the folder 0700; a long TMPDIR falls back to /tmp.
      const base = socketPathFits(join(tmpdir(), `${FALLBACK_PREFIX}XXXXXX`, CONTROL_SOCKET_NAME)) ? tmpdir() : '/tmp';
      privateDir = mkdtempSync(join(base, FALLBACK_PREFIX));
      path = join(privateDir, CONTROL_SOCKET_NAME);
    }
    const server = createServer({ allowHalfOpen: false });
    try {
      await listenPrivately(server, path);
      chmodSync(path, 0o600);
      if (privateDir) writeFileSync(join(opts.runDir, CONTROL_PATH_NAME), `${path}\n`, { mode: 0o600 });
    } catch (err) {
      server.close();
      if (privateDir) rmSync(privateDir, { recursive: true, force: true });
      throw err;
    }
    return new RunControlServer(server, path, privateDir, opts.runDir, opts.handle);
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.setEncoding('utf8');
    let buffer = '';
    // Requests on one connection are answered in order.
    let chain: Promise<void> = Promise.resolve();
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (Buffer.byteLength(buffer) > MAX_CONTROL_LINE_BYTES + 1024 && !buffer.includes('\n')) {
        this.reply(socket, {
          ok: false,
          code: 'malformed_request',
          error: `malformed request: a line longer than ${MAX_CONTROL_LINE_BYTES} bytes`,
        });
        socket.end();
        buffer = '';
        return;
      }
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line) continue;
        chain = chain.then(() => this.answer(socket, line));
        const pending = chain;
        this.answering.add(pending);
        void pending.finally(() => this.answering.delete(pending));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private async answer(socket: Socket, line: string): Promise<void> {
    const parsed = parseControlRequest(line);
    if (!parsed.ok) return this.reply(socket, parsed.reply);
    let reply: ControlReply;
    try {
      reply = await this.handle(parsed.action);
    } catch (err) {
      reply = {
        ok: false,
        code: 'failed',
        error: `the coordinator could not carry out ${parsed.action.action}: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    // Handlers refuse without a code: on the wire every failure names one.
    this.reply(socket, reply.ok || reply.code ? reply : { ...reply, code: 'refused' });
  }

  private reply(socket: Socket, reply: ControlReply): void {
    if (socket.destroyed || !socket.writable) return;
    socket.write(`${JSON.stringify(reply)}\n`);
  }

  /** Stops listening and removes the socket file (and control.path, and a fallback's folder). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.allSettled([...this.answering]);
    for (const s of this.sockets) s.destroy();
    await done;
    // net removes a unix socket file when the server closes; these cover the rest.
    rmSync(this.socketPath, { force: true });
    if (this.privateDir) {
      rmSync(join(this.runDir, CONTROL_PATH_NAME), { force: true });
      rmSync(this.privateDir, { recursive: true, force: true });
    }
  }
}

/** Whether a socket file is owner-only (tests and `doctor`-style checks). */
export function isOwnerOnly(mode: number): boolean {
  return (mode & 0o077) === 0;
}
