// Shell commands the orchestrator runs itself: `verify` checks after an agent finishes, and
// `run:` steps. Each runs in its own process group so a timeout or abort kills the whole tree
// (a test runner's children included), and only the tail of its output is kept. They run in the
// same sandbox as the agents' bash (tools/sandbox.ts) where bwrap works: they run code the agent
// wrote, so they get the workspace, no provider key, and no network unless the recipe asks.
import { spawn } from 'node:child_process';
import { attachLifeline, LIFELINE_STDIO, releaseLifeline, withLifeline } from '../../tools/process-lifeline.js';
import {
  resolveSandboxMode,
  sandboxedSpawn,
  sandboxEnv,
  unconfinedEnv,
  warnOnce,
  type SandboxOptions,
} from '../../tools/sandbox.js';
import { killProcessGroup } from '../../util/kill-process-group.js';
import { ORCHESTRATOR_DEFAULTS } from '../defaults.js';

export interface CommandResult {
  command: string;
  ok: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** stdout and stderr interleaved, tail only. */
  output: string;
  durationMs: number;
}

export interface CommandOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Characters of output kept (the tail). */
  maxChars?: number;
  /**
   * Confinement (default: the workspace sandbox where bwrap works). `writable` defaults to
   * `cwd`; `warn` (if given) is told once when the sandbox cannot work here.
   */
  sandbox?: SandboxOptions & { writable?: string[] };
}

/** Runs `command` with the system shell; never throws (a spawn failure is a failed result). */
export function runCommand(command: string, opts: CommandOptions): Promise<CommandResult> {
  const started = Date.now();
  const maxChars = opts.maxChars ?? ORCHESTRATOR_DEFAULTS.commandOutputChars;
  const timeoutMs = opts.timeoutMs ?? ORCHESTRATOR_DEFAULTS.commandTimeoutMs;
  return new Promise((resolvePromise) => {
    let out = '';
    let dropped = 0;
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const keep = (chunk: Buffer): void => {
      out += chunk.toString('utf8');
      if (out.length > maxChars * 2) {
        dropped += out.length - maxChars;
        out = out.slice(-maxChars);
      }
    };
    const finish = (exitCode: number | null, signal: string | null, spawnError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (out.length > maxChars) {
        dropped += out.length - maxChars;
        out = out.slice(-maxChars);
      }
      let output = dropped > 0 ? `[... ${dropped} earlier characters of output cut ...]\n${out}` : out;
      if (spawnError) output += `${output ? '\n' : ''}${spawnError}`;
      if (timedOut) output += `\n[command timed out after ${timeoutMs} ms and was killed]`;
      if (aborted) output += '\n[command was aborted]';
      resolvePromise({
        command,
        ok: exitCode === 0 && !timedOut && !aborted && !spawnError,
        exitCode,
        signal,
        timedOut,
        aborted,
        output,
        durationMs: Date.now() - started,
      });
    };
    let child: ReturnType<typeof spawn>;
    try {
      const jail = resolveSandboxMode(opts.sandbox);
      if (jail.warning && opts.sandbox?.warn) warnOnce(jail.warning, opts.sandbox.warn);
      // The lifeline kills the command's group if this process dies (kill -9) while it runs.
      let file = '/bin/sh';
      let args = ['-c', withLifeline(command)];
      let env: Record<string, string | undefined>;
      if (jail.mode === 'workspace') {
        const plan = {
          writable: opts.sandbox?.writable ?? [opts.cwd],
          hide: opts.sandbox?.hide,
          readOnly: opts.sandbox?.readOnly,
          network: opts.sandbox?.network ?? false,
          cwd: opts.cwd,
        };
        ({ file, args } = sandboxedSpawn(opts.sandbox?.bwrapPath, plan, file, args));
        env = sandboxEnv(process.env, opts.env);
      } else env = unconfinedEnv(process.env, opts.env);
      child = spawn(file, args, {
        cwd: opts.cwd,
        env,
        detached: true,
        stdio: LIFELINE_STDIO,
      });
      attachLifeline(child);
    } catch (err) {
      finish(null, null, `cannot start the command: ${(err as Error).message}`);
      return;
    }
    const killTree = (): void => killProcessGroup(child.pid, 'SIGKILL');
    const timer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killTree();
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', (err) => finish(null, null, `cannot start the command: ${err.message}`));
    child.on('exit', () => releaseLifeline(child));
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/**
 * The error of an instance whose verify still failed after `checks` checks: the command, how it
 * ended and the last lines of its output, or that it printed nothing.
 */
export function verifyFailedError(result: CommandResult, checks: number): string {
  const how = result.timedOut ? 'timed out' : `exited with ${result.exitCode ?? result.signal}`;
  const text = result.output.trim();
  const tail = text ? `: ${text.split('\n').slice(-5).join(' | ')}` : ' and printed nothing';
  return `verify \`${result.command}\` ${how} after ${checks} check${checks > 1 ? 's' : ''}${tail}`;
}

/** The follow-up an agent gets when a verify command failed: what ran, how it ended, its output. */
export function verifyFailurePrompt(result: CommandResult, attempt: number, maxAttempts: number): string {
  const how = result.timedOut
    ? 'timed out'
    : result.exitCode !== null
      ? `exited with code ${result.exitCode}`
      : `was killed (${result.signal ?? 'unknown signal'})`;
  return [
    `The verification command \`${result.command}\` ${how} (check ${attempt} of ${maxAttempts}). Its output:`,
    '```',
    result.output.trimEnd() || '(no output)',
    '```',
    'Fix the problem, then finish with a short summary of what you changed.',
  ].join('\n');
}
