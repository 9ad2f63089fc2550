// The stdio transport of MCP servers, ours rather than the SDK's StdioClientTransport because a
// server is a command run on a model's behalf like any other: it runs in the command sandbox by
// default (bwrap with --die-with-parent and its own PID namespace), gets the sandbox's env
// allowlist plus the env its config names (never a provider key), and must not outlive the
// process that started it. Unconfined (`sandbox: none`) it runs in its own process group behind
// the lifeline of process-lifeline.ts, so even kill -9 of the coordinator takes it down.
// Messages are newline-delimited JSON-RPC, parsed and written with the SDK's own helpers. What is
// not a message (a server that logs to stdout, an answer cut off or over the size limit) is
// dropped and kept as `badOutput`, so a call or a start that then gets no answer can say why.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  deserializeMessage,
  serializeMessage,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
} from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { attachLifeline, withLifeline } from '../process-lifeline.js';
import { killProcessGroup } from '../../util/kill-process-group.js';
import { sandboxedSpawn, sandboxEnv, type SandboxPlan } from '../sandbox.js';

export interface StdioServerLaunch {
  command: string;
  args: string[];
  /** The env the config names (added to the sandbox allowlist). */
  env: Record<string, string>;
  cwd: string;
  /** Confinement: `plan` when sandboxed, undefined to run unconfined (with the lifeline). */
  sandbox?: { plan: SandboxPlan; bwrapPath?: string };
  /** The parent environment the allowlist is taken from (default process.env). */
  baseEnv?: Readonly<Record<string, string | undefined>>;
}

/** How much of the server's stderr is kept for reports. */
const STDERR_TAIL = 2000;
/** How much of a line that is not a message is quoted. */
const BAD_LINE_QUOTE = 120;

export class ServerStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  /** Output not yet ended by a newline. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** True while the rest of a line over the size limit is being skipped. */
  private skippingLine = false;
  private stderrTail = '';
  private closing = false;
  /** Settles when the server's stderr is closed (everything it wrote has been read). */
  private stderrClosed: Promise<void> = Promise.resolve();
  /** How the process ended (exit code or signal), once it has. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** What the server last wrote to stdout that was not a JSON-RPC message, described. */
  badOutput: string | undefined;
  /** How many times the server wrote such output (a caller compares counts to see if it did meanwhile). */
  badOutputs = 0;

  constructor(private readonly launch: StdioServerLaunch) {}

  /** The process id (of bwrap, when sandboxed); undefined before start. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines the server wrote to stderr. */
  get stderr(): string {
    return this.stderrTail.trim();
  }

  async start(): Promise<void> {
    const l = this.launch;
    const env = sandboxEnv(l.baseEnv ?? process.env, l.env);
    let file: string;
    let args: string[];
    let stdio: ('pipe' | 'ignore')[];
    if (l.sandbox) {
      ({ file, args } = sandboxedSpawn(l.sandbox.bwrapPath, l.sandbox.plan, l.command, l.args, env));
      stdio = ['pipe', 'pipe', 'pipe'];
    } else {
      // sh execs the server after handing fd 3 to the lifeline sentinel of this process group.
      file = '/bin/sh';
      args = ['-c', withLifeline('exec "$0" "$@"'), l.command, ...l.args];
      stdio = ['pipe', 'pipe', 'pipe', 'pipe'];
    }
    const child = spawn(file, args, { cwd: l.cwd, env, stdio, detached: true });
    this.child = child;
    if (!l.sandbox) attachLifeline(child);
    await new Promise<void>((resolveStart, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        resolveStart();
      });
    });
    child.on('error', (err) => this.onerror?.(err));
    child.stdin!.on('error', () => undefined); // EPIPE after the server died: 'exit' reports it
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    this.stderrClosed = new Promise((done) => child.stderr!.once('close', () => done()));
    child.once('exit', (code, signal) => {
      this.exit = { code, signal };
      killProcessGroup(child.pid, 'SIGKILL');
      this.child = undefined;
      this.onclose?.();
    });
  }

  /** Splits stdout into lines and hands on each message; never throws (it runs in a stream event). */
  private read(chunk: Buffer): void {
    let rest = chunk;
    for (let nl = rest.indexOf(0x0a); nl !== -1; nl = rest.indexOf(0x0a)) {
      const tail = rest.subarray(0, nl);
      rest = rest.subarray(nl + 1);
      const skipped = this.skippingLine;
      this.skippingLine = false;
      const line = Buffer.concat([...this.pending, tail])
        .toString('utf8')
        .replace(/\r$/, '');
      this.pending = [];
      this.pendingBytes = 0;
      if (!skipped) this.handleLine(line);
    }
    if (this.skippingLine || rest.length === 0) return;
    if (this.pendingBytes + rest.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      // The SDK's own limit of one message; the rest of this line is dropped as it arrives.
      this.pending = [];
      this.pendingBytes = 0;
      this.skippingLine = true;
      this.bad(`a line over ${STDIO_DEFAULT_MAX_BUFFER_SIZE / (1024 * 1024)} MB (the most one message may be)`);
      return;
    }
    this.pending.push(rest);
    this.pendingBytes += rest.length;
  }

  private handleLine(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      const quoted = line.length > BAD_LINE_QUOTE ? `${line.slice(0, BAD_LINE_QUOTE)}…` : line;
      this.bad(`a line that is not a JSON-RPC message: ${JSON.stringify(quoted)}`);
      return;
    }
    this.onmessage?.(message);
  }

  private bad(what: string): void {
    this.badOutput = what;
    this.badOutputs++;
    this.onerror?.(new Error(`the MCP server wrote on stdout ${what}`));
  }

  /**
   * Waits (at most `maxMs`) until the server's stderr is read to its end: a server that died
   * reports its exit before the pipe has delivered its last words (the reason it died).
   */
  async drained(maxMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.stderrClosed, new Promise<void>((done) => (timer = setTimeout(done, maxMs)))]);
    clearTimeout(timer);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolveSend, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return reject(new Error('the MCP server is not running'));
      if (stdin.write(serializeMessage(message))) resolveSend();
      else stdin.once('drain', () => resolveSend());
    });
  }

  /** Ends the server and everything it started (its process group / PID namespace). */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closing) return;
    this.closing = true;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.stdin?.end();
    killProcessGroup(child.pid, 'SIGTERM');
    const timer = setTimeout(() => killProcessGroup(child.pid, 'SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  }
}
