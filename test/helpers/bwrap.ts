// Sandbox tests run for real wherever bubblewrap is installed (CI installs it). They are skipped
// ONLY when the bwrap binary is missing, and then say so loudly; a bwrap that is installed but
// cannot create namespaces makes them fail, as it should.
import { spawnSync } from 'node:child_process';

export const BWRAP_INSTALLED = !spawnSync('bwrap', ['--version']).error;

/** Prints the loud skip line once per test file when bwrap is missing; returns whether to skip. */
export function skipWithoutBwrap(what: string): boolean {
  if (BWRAP_INSTALLED) return false;
  process.stderr.write(
    `\n!!!!! SKIPPED: ${what}: bubblewrap (bwrap) is not installed here; install it (apt-get install -y bubblewrap) to run the sandbox tests !!!!!\n\n`,
  );
  return true;
}
