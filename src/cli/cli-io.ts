// Where the CLI writes and what it sees. Tests pass their own; the real entry uses the process.

/** Output sinks and environment of one CLI invocation. `stdout`/`stderr` receive whole text chunks, newlines included. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Folder relative paths resolve against (default: process.cwd()). */
  cwd?: string;
  /** Environment (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Whether stdout is a terminal (live progress), default: process.stdout.isTTY. */
  isTTY?: boolean;
}

/** The io with every default filled in, as commands receive it. */
export interface CliContext {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: Record<string, string | undefined>;
  isTTY: boolean;
  /** Names of the registered commands, for "did you mean" on a mistyped command. */
  commandNames: readonly string[];
}

export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  };
}

/**
 * A reader that goes away (`orchestrate ... | head`) makes stdout writes fail with EPIPE; like
 * any Unix filter, stop quietly then instead of dying with an unhandled 'error' stack trace.
 * Sessions and run logs are append-only, so stopping here loses nothing already written.
 */
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      process.exitCode = 1;
    });
  }
}

/** Bad flags or arguments: printed with a usage hint, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Exit codes (design section 5). */
export const EXIT = { ok: 0, taskFailed: 1, usage: 2, interrupted: 130 } as const;
