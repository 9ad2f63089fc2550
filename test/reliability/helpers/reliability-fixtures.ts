// Shared helpers of the reliability suites: the real CLI as a child process, polling, JSONL
// integrity checks (every line parses; a torn last line is the only exception) and the
// one-line numeric summary each suite prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CLI_ENTRY, CLI_NODE_ARGS } from '../../helpers/cli-entry.js';

export const ROOT = resolve(import.meta.dirname, '../../..');
/** The CLI's entry file (dist/cli/main.js when built from the current sources; see cli-entry.ts). */
export const CLI = CLI_ENTRY;

export interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Spawns the CLI (`node [--import tsx] <entry> ...args`) with `env` added to a clean environment. */
export function spawnCli(args: string[], env: Record<string, string>, cwd = ROOT): ChildProcess {
  return spawn(process.execPath, [...CLI_NODE_ARGS, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects output and resolves when the child exits. Call right after spawning. */
export function exited(child: ChildProcess): Promise<Exited> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((r) => child.on('exit', (code, signal) => r({ code, signal, stdout, stderr })));
}

export async function until(check: () => boolean, what: string, timeoutMs = 45_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

export interface JsonlCheck {
  /** Complete lines (each ends with a newline and parses). */
  lines: string[];
  /** A last line without its newline (a write torn by a kill), if any. */
  torn?: string;
  /** Lines that did not parse although complete: must always be empty. */
  bad: { line: number; text: string }[];
}

/** Reads a JSONL file and sorts its lines into complete, torn (last, unterminated) and bad. */
export function checkJsonl(file: string): JsonlCheck {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const parts = text.split('\n');
  const last = parts.pop() ?? '';
  const out: JsonlCheck = { lines: [], bad: [] };
  parts.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      JSON.parse(line);
      out.lines.push(line);
    } catch {
      out.bad.push({ line: i + 1, text: line.slice(0, 200) });
    }
  });
  if (last !== '') out.torn = last;
  return out;
}

/** Every file under `dir`, recursively (absolute paths). */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/** The one-line numeric summary a suite prints (picked up in CI logs). */
export function printSummary(suite: string, numbers: Record<string, number | string>): void {
  console.log(
    `[reliability] ${suite}: ${Object.entries(numbers)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
}
