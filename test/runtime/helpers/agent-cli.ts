// Runs the real CLI (`node <entry> agent ...`, see cli-entry.ts) as a child process, for the
// end-to-end tests of the delivery forms. ORCHESTRATE_HOME always points at a temp folder so
// no test writes into the user's ~/.orchestrate.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { CLI_NODE_ARGS } from '../../helpers/cli-entry.js';

export const REPO = resolve(import.meta.dirname, '../../..');
export const FIXTURES = resolve(REPO, 'test/fixtures/agent');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (stdin is always closed so nothing waits on it). */
  input?: string;
  timeoutMs?: number;
}

function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete env[k];
  return env;
}

function spawnAgent(args: string[], options: CliOptions) {
  return spawn(process.execPath, [...CLI_NODE_ARGS, 'agent', ...args], {
    cwd: REPO,
    env: childEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs `orchestrate agent <args>` to completion. */
export function runAgentCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawnAgent(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(options.input ?? '');
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`orchestrate agent ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000); // only turns a hang into a failure; a loaded CI box starts tsx slowly
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

export type JsonLine = Record<string, unknown>;

/** A live `--mode rpc` process with a tiny client: send a command, wait for lines. */
export function startAgentRpc(args: string[], options: CliOptions = {}) {
  const child = spawnAgent(['--mode', 'rpc', ...args], options);
  const lines: JsonLine[] = [];
  let stderr = '';
  let buffer = '';
  const waiters: {
    test: (l: JsonLine) => boolean;
    resolve: (l: JsonLine) => void;
    reject: (e: Error) => void;
  }[] = [];
  const seen = (): string => lines.map((l) => JSON.stringify(l).slice(0, 200)).join('\n');
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!text) continue;
      const line = JSON.parse(text) as JsonLine;
      lines.push(line);
      for (const w of waiters.splice(0)) {
        if (w.test(line)) w.resolve(line);
        else waiters.push(w);
      }
    }
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) =>
    child.on('close', (code) => {
      exitCode = code;
      // No line can come any more: every waiter fails now, with what the process said.
      for (const w of waiters.splice(0))
        w.reject(
          new Error(`the RPC process exited (${code}) before a matching line; got:\n${seen()}\nstderr: ${stderr}`),
        );
      r(code);
    }),
  );
  // The bound only turns a hang into a failure: a loaded machine starts tsx slowly (the default
  // was 10 s and failed under load although nothing was wrong); a dead process fails at once above.
  const waitFor = (test: (l: JsonLine) => boolean, timeoutMs = 90_000): Promise<JsonLine> => {
    const found = lines.find(test);
    if (found) return Promise.resolve(found);
    if (exitCode !== undefined)
      return Promise.reject(new Error(`the RPC process exited (${exitCode}); got:\n${seen()}\nstderr: ${stderr}`));
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching RPC line within ${timeoutMs} ms; got:\n${seen()}\nstderr: ${stderr}`)),
        timeoutMs,
      );
      waiters.push({
        test,
        resolve: (l) => {
          clearTimeout(timer);
          resolvePromise(l);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  };
  return {
    lines,
    stderr: () => stderr,
    /** Writes a raw line (malformed input tests). */
    write: (raw: string): void => void child.stdin.write(`${raw}\n`),
    /** Sends a command and resolves with its first response. */
    send(command: JsonLine): Promise<JsonLine> {
      const since = lines.length;
      child.stdin.write(`${JSON.stringify(command)}\n`);
      return waitFor((l) => l.type === 'response' && l.id === command.id && lines.indexOf(l) >= since);
    },
    waitFor,
    /** Closes stdin and resolves with the exit code. */
    close(): Promise<number | null> {
      child.stdin.end();
      return exited;
    },
  };
}
