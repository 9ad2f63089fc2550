// Runs one command hook the way Claude Code does: `sh -c command` with the event's JSON on stdin,
// stdout and stderr captured, the exit code returned. It runs in the command sandbox when the
// session's commands do (the workspace writable, so a formatter may rewrite the edited file),
// with the sandbox's allowlisted environment plus CLAUDE_PROJECT_DIR, never a provider key. The
// hook gets its own process group tied to this process (process-lifeline.ts); at its timeout or
// an abort the whole group is killed and the caller goes on.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { attachLifeline, releaseLifeline, withLifeline } from '../tools/process-lifeline.js';
import { sandboxedSpawn, sandboxEnv, type SandboxMode } from '../tools/sandbox.js';
import { killProcessGroup } from '../util/kill-process-group.js';

/** Output kept per stream; a hook printing more is cut (the head is what matters). */
const MAX_OUTPUT_CHARS = 64 * 1024;
/** After the hook exited, how long a background process it left may keep its pipes open. */
const EXIT_DRAIN_MS = 500;

export interface HookSandbox {
  mode: SandboxMode;
  bwrapPath?: string;
  /** Writable inside (the workspace root). */
  writable: string[];
  hide?: string[];
  readOnly?: string[];
  network?: boolean;
}

export interface HookRunRequest {
  command: string;
  /** The event's JSON, written to the hook's stdin. */
  input: unknown;
  timeoutSec: number;
  cwd: string;
  /** CLAUDE_PROJECT_DIR. */
  projectDir: string;
  sandbox: HookSandbox;
  signal?: AbortSignal;
}

export interface HookRunResult {
  /** null when the hook was killed (timeout, abort) or could not start. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Why the hook could not start. */
  spawnError?: string;
}

export function runHookCommand(req: HookRunRequest): Promise<HookRunResult> {
  const started = Date.now();
  return new Promise((resolvePromise) => {
    let file = '/bin/sh';
    let args = ['-c', withLifeline(req.command)];
    const env = sandboxEnv(process.env, { CLAUDE_PROJECT_DIR: req.projectDir });
    if (req.sandbox.mode === 'workspace') {
      const plan = {
        writable: req.sandbox.writable,
        ...(req.sandbox.hide ? { hide: req.sandbox.hide } : {}),
        readOnly: (req.sandbox.readOnly ?? []).filter((p) => existsSync(p)),
        network: req.sandbox.network ?? false,
        cwd: req.cwd,
      };
      ({ file, args } = sandboxedSpawn(req.sandbox.bwrapPath, plan, file, args, env));
    }
    // stdin carries the event; fd 3 is the lifeline (the hook dies with this process).
    const child = spawn(file, args, { cwd: req.cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    attachLifeline(child);
    const out = { stdout: '', stderr: '' };
    let stopped: 'timeout' | 'aborted' | undefined;
    let exit: number | null | undefined;
    let open = 2;
    let settled = false;
    let drain: NodeJS.Timeout | undefined;

    const finish = (spawnError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (drain) clearTimeout(drain);
      req.signal?.removeEventListener('abort', onAbort);
      resolvePromise({
        exitCode: stopped ? null : (exit ?? null),
        stdout: out.stdout,
        stderr: out.stderr,
        timedOut: stopped === 'timeout',
        aborted: stopped === 'aborted',
        durationMs: Date.now() - started,
        ...(spawnError ? { spawnError } : {}),
      });
    };
    const stop = (why: 'timeout' | 'aborted'): void => {
      stopped ??= why;
      killProcessGroup(child.pid, 'SIGKILL');
    };
    const onAbort = (): void => stop('aborted');
    const timer = setTimeout(() => stop('timeout'), req.timeoutSec * 1000);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) stop('aborted');

    for (const name of ['stdout', 'stderr'] as const) {
      const stream = child[name]!;
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        if (out[name].length < MAX_OUTPUT_CHARS) out[name] = (out[name] + chunk).slice(0, MAX_OUTPUT_CHARS);
      });
      stream.once('close', () => {
        open--;
        if (exit !== undefined && open === 0) finish();
      });
    }
    // A hook that does not read its stdin closes the pipe early: not an error.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(`${JSON.stringify(req.input)}\n`);
    child.once('error', (err) => {
      if (exit === undefined) {
        exit = null;
        finish(err.message);
      }
    });
    child.once('exit', (code) => {
      releaseLifeline(child);
      exit = code;
      if (open === 0) finish();
      else
        drain = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish();
        }, EXIT_DRAIN_MS);
    });
  });
}
