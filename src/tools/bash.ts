// bash: runs a command in its own process group, streams merged stdout+stderr with bounded
// memory, keeps the tail, spills the full output to a temp file when it does not fit, and
// kills the whole group on abort or timeout, or when this process dies (process-lifeline.ts).
// Commands run in the sandbox (sandbox.ts) where bwrap works: the workspace root and the tool's
// private temp folder writable, the rest read-only or hidden, no network unless asked for.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { AgentTool, AgentToolUpdate } from '../agent/types.js';
import { checkBashPolicy, type BashPolicy } from './bash-policy.js';
import { TOOL_DEFAULTS } from './defaults.js';
import { OutputCapture, type OutputSnapshot } from './output-capture.js';
import { StreamRedactor, type ToolSecret } from './stream-redactor.js';
import { PrivateTempDir } from './private-temp.js';
import { attachLifeline, LIFELINE_STDIO, releaseLifeline, withLifeline } from './process-lifeline.js';
import {
  resolveSandboxMode,
  sandboxedSpawn,
  sandboxEnv,
  sandboxTmpBytes,
  tmpfsFullHint,
  warnOnce,
  type SandboxOptions,
} from './sandbox.js';
import { textResult, throwIfAborted } from './tool-result.js';
import { killProcessGroup } from '../util/kill-process-group.js';
import { formatSize, type TruncationResult } from './truncate.js';
import { incompleteUtf8TailLength } from './utf8.js';
import { Workspace, type WorkspaceOptions } from './workspace.js';

export const bashParameters = z.object({
  command: z.string().describe('Bash command to run'),
  timeout: z.number().positive().optional().describe('Timeout in seconds (no timeout by default)'),
});

export interface BashToolDetails {
  truncation?: TruncationResult;
  fullOutputPath?: string;
  exitCode?: number | null;
}

export interface BashToolOptions extends WorkspaceOptions {
  /** Commands refused or required before anything runs. */
  policy?: BashPolicy;
  /** Shell binary (default /bin/bash, else bash on PATH). */
  shellPath?: string;
  /** Prepended to every command on its own line (e.g. `set -o pipefail`, `source env.sh`). */
  commandPrefix?: string;
  /** Extra environment variables on top of the process environment. */
  env?: Record<string, string | undefined>;
  maxLines?: number;
  maxBytes?: number;
  /**
   * Folder for the full-output temp files. Default: a private folder of this tool (mode 700,
   * also the sandbox's $TMPDIR), removed by `dispose()` or when the process exits.
   */
  tempDir?: string;
  /** Confinement of the commands (default: the workspace sandbox where bwrap works). */
  sandbox?: SandboxOptions;
  /** Values replaced by `[REDACTED:<name>]` in the full-output temp files (API keys, recipe secrets). */
  secrets?: readonly ToolSecret[];
  updateIntervalMs?: number;
}

function defaultShell(): string {
  return existsSync('/bin/bash') ? '/bin/bash' : 'bash';
}

/** The visible text: the tail plus a notice saying what was cut and where the rest is. */
function renderOutput(snap: OutputSnapshot, maxBytes: number, saveError?: Error): string {
  if (snap.totalBytes === 0) return '(no output)';
  const t = snap.truncation;
  if (!t) return snap.text;
  const where = saveError
    ? `Full output could not be saved: ${saveError.message}`
    : `Full output: ${snap.fullOutputPath}`;
  const end = snap.totalLines;
  if (t.lastLinePartial) {
    return `${snap.text}\n\n[Showing last ${formatSize(t.outputBytes)} of line ${end} (line is ${formatSize(snap.lastLineBytes)}). ${where}]`;
  }
  const start = end - t.outputLines + 1;
  const limit = t.truncatedBy === 'bytes' ? ` (${formatSize(maxBytes)} limit)` : '';
  return `${snap.text}\n\n[Showing lines ${start}-${end} of ${snap.totalLines}${limit}. ${where}]`;
}

/**
 * The result's details. `keepPath`: the full-output file outlives the session (a caller's
 * tempDir), so its path is worth recording; the tool's private folder is removed with the session.
 */
function detailsOf(snap: OutputSnapshot, exitCode?: number | null, keepPath = true): BashToolDetails | undefined {
  const details: BashToolDetails = {};
  if (snap.truncation) details.truncation = snap.truncation;
  if (snap.fullOutputPath && keepPath) details.fullOutputPath = snap.fullOutputPath;
  if (exitCode !== undefined) details.exitCode = exitCode;
  return Object.keys(details).length > 0 ? details : undefined;
}

/** The bash tool: an AgentTool plus `dispose()`, which removes its private temp folder. */
export type BashTool = AgentTool<typeof bashParameters, BashToolDetails> & { dispose(): void };

export function createBashTool(options: BashToolOptions): BashTool {
  const workspace = new Workspace(options);
  const privateTemp = new PrivateTempDir();
  const sandbox = resolveSandboxMode(options.sandbox);
  const confined = sandbox.mode === 'workspace';
  const network = options.sandbox?.network ?? false;
  const tmpBytes = sandboxTmpBytes(options.sandbox?.tmpBytes);
  const maxLines = options.maxLines ?? TOOL_DEFAULTS.maxLines;
  const maxBytes = options.maxBytes ?? TOOL_DEFAULTS.maxBytes;
  const interval = options.updateIntervalMs ?? TOOL_DEFAULTS.bashUpdateIntervalMs;
  const newRedactor = StreamRedactor.factory(options.secrets);

  return {
    name: 'bash',
    label: 'Bash',
    description:
      `Run a bash command in the working directory. stdout and stderr are merged; the last ${maxLines} lines or ` +
      `${formatSize(maxBytes)} are returned (whichever comes first) and the full output is saved to a file when cut. ` +
      'Use timeout (seconds) for commands that might hang.' +
      (confined
        ? // The workspace's path is in the system prompt's per-session part, not here: tool texts open the
          // prompt prefix that a fan-out's instances share in the cache, whatever their folders.
          ` Commands run in a sandbox: only the working directory${workspace.root !== workspace.cwd ? ' and the rest of its workspace (the workspace root in the system prompt)' : ''} and $TMPDIR can be written, ` +
          `/tmp is fresh for every command and holds at most ${Math.round(tmpBytes / 1048576)} MiB (keep files across commands in $TMPDIR), ` +
          `$HOME is an empty private folder${network ? '' : ', and there is no network'}.`
        : ''),
    promptSnippet: 'Execute bash commands (ls, grep, find, tests, builds, git)',
    parameters: bashParameters,
    argumentAliases: { cmd: 'command', script: 'command' },
    async execute(_id, params, signal, onUpdate) {
      throwIfAborted(signal);
      const refusal = checkBashPolicy(params.command, options.policy);
      if (refusal) throw new Error(refusal);
      const cwd = workspace.cwd;
      let isDir = false;
      try {
        isDir = statSync(cwd).isDirectory();
      } catch {
        isDir = false;
      }
      if (!isDir) throw new Error(`Working directory does not exist: ${cwd}\nCannot execute bash commands.`);

      if (sandbox.warning)
        warnOnce(sandbox.warning, options.sandbox?.warn ?? ((m) => void process.stderr.write(`${m}\n`)));
      const command = options.commandPrefix ? `${options.commandPrefix}\n${params.command}` : params.command;
      const redactor = newRedactor?.();
      const tempDir = options.tempDir ?? privateTemp.path;
      const capture = new OutputCapture({ maxLines, maxBytes, tempDir, ...(redactor ? { redactor } : {}) });
      const jail = confined ? { root: workspace.root, tempDir: privateTemp.path, network, tmpBytes } : undefined;
      const outcome = await run(command, cwd, params.timeout, signal, capture, onUpdate, interval, options, jail);
      const saveError = await capture.close();
      const snap = capture.snapshot();
      const text = renderOutput(snap, maxBytes, saveError);
      const withOutput = (message: string): string => (snap.totalBytes === 0 ? message : `${text}\n\n${message}`);

      if (outcome.kind === 'aborted') throw new Error(withOutput('Command aborted'));
      if (outcome.kind === 'timeout') throw new Error(withOutput(`Command timed out after ${params.timeout} seconds`));
      if (outcome.kind === 'spawn-error') throw new Error(withOutput(`Could not start the shell: ${outcome.message}`));
      if (outcome.signal) throw new Error(withOutput(`Command was killed by signal ${outcome.signal}`));
      // A capped tmpfs (/tmp, /dev/shm, the home) that filled up: say which cap, and what to do.
      const full =
        confined && outcome.code !== 0 && /No space left on device/.test(snap.text)
          ? `\n${tmpfsFullHint(tmpBytes)}`
          : '';
      if (outcome.code !== 0) throw new Error(withOutput(`Command exited with code ${outcome.code}${full}`));
      return textResult(text, detailsOf(snap, outcome.code, options.tempDir !== undefined));
    },
    dispose: () => privateTemp.remove(),
  };
}

/** Where a confined command may write, and whether it may reach the network. */
interface Jail {
  root: string;
  tempDir: string;
  network: boolean;
  /** Size cap of the sandbox's /tmp. */
  tmpBytes: number;
}

type RunOutcome =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'aborted' }
  | { kind: 'timeout' }
  | { kind: 'spawn-error'; message: string };

function run(
  command: string,
  cwd: string,
  timeoutSec: number | undefined,
  signal: AbortSignal,
  capture: OutputCapture,
  onUpdate: AgentToolUpdate<BashToolDetails> | undefined,
  interval: number,
  options: BashToolOptions,
  jail: Jail | undefined,
): Promise<RunOutcome> {
  return new Promise((resolve) => {
    const shell = options.shellPath ?? defaultShell();
    // bash sources ~/.bashrc even for -c when stdin is a socket (its rshd heuristic), and node's
    // stdio pipes are socketpairs: without --norc every call ran the user's rc file (a pyenv
    // rehash there waited 60 s on a stale lock). Other shells do not have the heuristic.
    let file = shell;
    let args = /(^|\/)bash$/.test(shell) ? ['--norc', '-c', withLifeline(command)] : ['-c', withLifeline(command)];
    let env: Record<string, string | undefined> = { ...process.env, ...options.env };
    if (jail) {
      const plan = {
        writable: [jail.root, jail.tempDir],
        hide: options.sandbox?.hide,
        readOnly: options.sandbox?.readOnly,
        network: jail.network,
        cwd,
        tmpBytes: jail.tmpBytes,
      };
      ({ file, args } = sandboxedSpawn(options.sandbox?.bwrapPath, plan, shell, args));
      env = sandboxEnv(process.env, { ...options.env, TMPDIR: jail.tempDir });
    }
    const child = spawn(file, args, {
      cwd,
      env,
      detached: true, // its own process group, so abort and timeout can kill grandchildren too
      stdio: LIFELINE_STDIO, // stdin /dev/null, fd 3 the lifeline
    });
    attachLifeline(child);
    // Both piped (LIFELINE_STDIO), so never null.
    const streams = [child.stdout!, child.stderr!];
    let stopped: 'aborted' | 'timeout' | undefined;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let openStreams = streams.length;
    let lastUpdate = 0;
    let paused = false;
    let drainTimer: NodeJS.Timeout | undefined;

    const stop = (why: 'aborted' | 'timeout'): void => {
      stopped ??= why;
      // The whole group: the shell and everything it started.
      killProcessGroup(child.pid, 'SIGKILL');
    };
    const onAbort = (): void => stop('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = timeoutSec !== undefined ? setTimeout(() => stop('timeout'), timeoutSec * 1000) : undefined;

    let settled = false;
    const finish = (outcome: RunOutcome): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (drainTimer) clearTimeout(drainTimer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const maybeFinish = (): void => {
      if (!exited || openStreams > 0) return;
      if (stopped) finish({ kind: stopped });
      else finish({ kind: 'exited', ...exited });
    };

    const emit = (force: boolean): void => {
      if (!onUpdate) return;
      const now = Date.now();
      if (!force && now - lastUpdate < interval) return;
      lastUpdate = now;
      const snap = capture.snapshot();
      onUpdate(textResult(snap.text, detailsOf(snap, undefined, options.tempDir !== undefined)));
    };
    const accept = (chunk: Buffer): void => {
      if (!capture.push(chunk) && !paused) {
        paused = true;
        for (const s of streams) s.pause();
        void capture.drain().then(() => {
          paused = false;
          for (const s of streams) s.resume();
        });
      }
      emit(false);
    };

    for (const stream of streams) {
      // Hold back an unfinished UTF-8 sequence until its next bytes arrive on the same stream,
      // so merging the two streams never splits a character.
      let pending: Buffer | undefined;
      stream.on('data', (data: Buffer) => {
        const chunk = pending ? Buffer.concat([pending, data]) : data;
        const cut = incompleteUtf8TailLength(chunk);
        pending = cut > 0 ? chunk.subarray(chunk.length - cut) : undefined;
        accept(cut > 0 ? chunk.subarray(0, chunk.length - cut) : chunk);
      });
      stream.once('close', () => {
        if (pending) accept(pending);
        pending = undefined;
        openStreams--;
        maybeFinish();
      });
    }

    child.once('error', (err) => {
      // spawn failures (missing shell) arrive here without an exit event
      if (!exited) finish({ kind: 'spawn-error', message: err.message });
    });
    child.once('exit', (code, sig) => {
      releaseLifeline(child);
      exited = { code, signal: stopped ? null : sig };
      emit(true);
      // A background process may still hold the pipes; stop waiting for it after a grace period.
      drainTimer = setTimeout(() => {
        for (const s of streams) s.destroy();
      }, TOOL_DEFAULTS.bashExitDrainMs);
      maybeFinish();
    });
    if (signal.aborted) stop('aborted');
  });
}
