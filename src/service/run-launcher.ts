// Starts runs as processes of their own (the MCP server's run_recipe / resume tools; the web view
// later): `orchestrate run` / `orchestrate resume`, detached, so a run outlives the server (a client closes its MCP servers whenever its
// session ends) exactly as a run started in a terminal does, and is driven by the same control
// socket `orchestrate cancel` / `steer` use. A launch returns once the process holds its run
// folder's lease (its pid is in the lease file), which is how the run id is learned without
// racing other runs starting in the same folder. The process's own output goes to
// `<run>/mcp-launch.log`; when it fails before taking a run folder, that output is the error.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readRunLease } from '../run/run-lease.js';
import { MCP_SERVER_DEFAULTS } from './mcp-server-defaults.js';
import { killProcessGroup } from '../util/kill-process-group.js';
import { runLogSize } from './run-events-page.js';

/** The name of the launched process's output inside its run folder. */
export const LAUNCH_LOG = 'mcp-launch.log';

export interface LaunchedRun {
  runDir: string;
  runId: string;
  pid: number;
  /** Resolves with the exit code (null: killed by a signal) when the process ends. */
  exited: Promise<number | null>;
  /** Whether the process has ended (read `exitCode` then). */
  hasExited: () => boolean;
  exitCode: () => number | null | undefined;
}

export type LaunchResult = { ok: true; run: LaunchedRun } | { ok: false; message: string };

export interface LaunchSpec {
  /** CLI arguments after `orchestrate` (e.g. ['run', '/abs/recipe.yaml', '--run-dir', ...]). */
  args: readonly string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** A new run: the runs folder it will appear in. */
  runsDir?: string;
  /** A resume: the run folder it works on. */
  runDir?: string;
  signal?: AbortSignal;
  /** Called while waiting for the process to take its run folder (progress for the client). */
  onWait?: (elapsedMs: number) => void;
}

/**
 * The node command line that runs the `orchestrate` program (src/cli/main): the built main.js, or
 * main.ts under tsx from a checkout. A started run is its own process, as a user would start it;
 * this names a program to execute, not a module this server imports.
 */
export function cliCommand(): { node: string; args: string[] } {
  const self = fileURLToPath(import.meta.url);
  const ext = extname(self);
  const main = join(self, '..', '..', 'cli', `main${ext}`);
  if (ext !== '.ts') return { node: process.execPath, args: [...process.execArgv, main] };
  // From the sources (a checkout, the tests): tsx loads the TypeScript, named by absolute URL
  // since `--import tsx` would resolve from the working folder, which is the user's project here.
  return { node: process.execPath, args: ['--import', import.meta.resolve('tsx'), main] };
}

/** The run folder under `runsDir`, not among `before`, whose lease names `pid`. */
function newRunFolderOf(runsDir: string, before: ReadonlySet<string>, pid: number): string | undefined {
  let names: string[];
  try {
    names = readdirSync(runsDir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (before.has(name) || name.startsWith('.')) continue;
    const dir = join(runsDir, name);
    if (readRunLease(dir)?.holder.pid === pid) return dir;
  }
  return undefined;
}

function tail(text: string, chars: number): string {
  const t = text.trim();
  return t.length > chars ? `...${t.slice(-chars)}` : t;
}

export class RunLauncher {
  private seq = 0;
  /** Processes this server started that are still running (for the server's own bookkeeping). */
  private readonly running = new Map<string, LaunchedRun>();

  /** The run this server launched into `runDir`, while its process runs. */
  launchedInto(runDir: string): LaunchedRun | undefined {
    const run = this.running.get(runDir);
    return run && !run.hasExited() ? run : undefined;
  }

  async launch(spec: LaunchSpec): Promise<LaunchResult> {
    const { node, args } = cliCommand();
    const target = spec.runDir ?? spec.runsDir;
    if (!target) throw new Error('launch needs runsDir or runDir');
    mkdirSync(target, { recursive: true });
    // A new run's output waits beside the run folders until the run folder exists.
    const logFile = spec.runDir
      ? join(spec.runDir, LAUNCH_LOG)
      : join(target, `.mcp-launch-${process.pid}-${++this.seq}.log`);
    const before = new Set(spec.runDir ? [] : readdirSync(target));
    const sizeBefore = spec.runDir ? runLogSize(spec.runDir) : 0;
    // A resume's log already holds the output of the run's earlier launches: this one's starts here.
    const logFrom = sizeOf(logFile);
    const out = openSync(logFile, 'a');
    let child: ChildProcess;
    try {
      // detached: its own process group, so a Ctrl-C or hang-up of the client's terminal does
      // not reach it; stdin closed, output to the file (a pipe would break when the server exits).
      child = spawn(node, [...args, ...spec.args], {
        cwd: spec.cwd,
        env: { ...spec.env, NO_COLOR: '1' },
        detached: true,
        stdio: ['ignore', out, out],
      });
    } finally {
      closeSync(out);
    }
    let exitCode: number | null | undefined;
    const exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code) => {
        exitCode = code;
        resolve(code);
      });
      child.once('error', () => {
        exitCode = null;
        resolve(null);
      });
    });
    child.unref();
    const pid = child.pid;
    if (pid === undefined) {
      await exited;
      return { ok: false, message: `could not start ${node} ${args.join(' ')}: ${readLog(logFile, logFrom)}` };
    }
    const start = Date.now();
    const found = (): string | undefined => {
      // A resume has its folder once it holds the lease and has written to the log (run_resume):
      // a resume refused after taking the lease (nothing left to do) writes nothing.
      if (spec.runDir)
        return readRunLease(spec.runDir)?.holder.pid === pid && runLogSize(spec.runDir) > sizeBefore
          ? spec.runDir
          : undefined;
      return newRunFolderOf(target, before, pid);
    };
    for (;;) {
      const runDir = found();
      if (runDir) {
        if (!spec.runDir) moveLog(logFile, join(runDir, LAUNCH_LOG));
        const run: LaunchedRun = {
          runDir,
          runId: basename(runDir),
          pid,
          exited,
          hasExited: () => exitCode !== undefined,
          exitCode: () => exitCode,
        };
        this.running.set(runDir, run);
        void exited.then(() => this.running.get(runDir) === run && this.running.delete(runDir));
        return { ok: true, run };
      }
      if (exitCode !== undefined) {
        // One more look: the run may have taken its folder and ended between two polls.
        const late = found();
        if (late) continue;
        const output = readLog(logFile, logFrom);
        if (!spec.runDir) rmSync(logFile, { force: true });
        return {
          ok: false,
          message: output || `the run process exited with code ${String(exitCode)} and printed nothing`,
        };
      }
      if (spec.signal?.aborted || Date.now() - start > MCP_SERVER_DEFAULTS.startTimeoutMs) {
        const why = spec.signal?.aborted
          ? 'the request was cancelled'
          : `it did not take a run folder within ${MCP_SERVER_DEFAULTS.startTimeoutMs / 1000}s`;
        // Nothing was started that anyone could find: do not leave it running.
        killProcessGroup(pid, 'SIGTERM');
        return {
          ok: false,
          message: `the run process (pid ${pid}) was stopped: ${why}. Its output so far: ${readLog(logFile, logFrom) || '(none)'}`,
        };
      }
      spec.onWait?.(Date.now() - start);
      await new Promise((r) => setTimeout(r, MCP_SERVER_DEFAULTS.pollMs));
    }
  }
}

/** What the launched process wrote to `file` (from byte `from`), its last part. */
function readLog(file: string, from: number): string {
  try {
    return tail(readFileSync(file).subarray(from).toString('utf8'), MCP_SERVER_DEFAULTS.launchLogChars);
  } catch {
    return '';
  }
}

/** The size of `file`, 0 when it is not there. */
function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Moves the launch log into the run folder (a rename: the process keeps writing to it). */
function moveLog(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch {
    // Another filesystem or a vanished file: the log stays where it is, nothing depends on it.
  }
}
