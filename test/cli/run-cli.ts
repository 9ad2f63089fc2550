// Runs the CLI in-process with captured output, as a user would see it.
import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(
  argv: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    cwd: opts.cwd ?? process.cwd(),
    // A fixed environment: ORCHESTRATE_MODEL or keys on the test machine must not change results.
    env: opts.env ?? { PATH: process.env.PATH },
    isTTY: false,
  });
  return { code, stdout, stderr };
}

/** True when text looks like a JavaScript stack trace ("    at fn (file:1:2)"). */
export const hasStackTrace = (text: string) => /\n\s+at .+[:(]/.test(text);
