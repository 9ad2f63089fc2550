// Where a run's control socket lives, shared by the coordinator's server and the client. The
// socket is `<runDir>/control.sock`; a unix socket path is limited to about 104-108 bytes
// (sun_path), so when that path is too long the server listens in a private temp folder instead
// and writes the socket's path into `<runDir>/control.path`, which the client reads first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROL_SOCKET_NAME } from './run-control.js';

/** The file naming the socket when it could not live in the run folder. */
export const CONTROL_PATH_NAME = 'control.path';

/** Longest socket path we bind (macOS allows 103 bytes plus the NUL; Linux 107). */
export const MAX_SOCKET_PATH_BYTES = 103;

/** The longest one request or reply line may be (a steering message is text, not a file). */
export const MAX_CONTROL_LINE_BYTES = 256 * 1024;

export function socketPathFits(path: string): boolean {
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES;
}

/** The socket a client should connect to: the one control.path names, else `<runDir>/control.sock`. */
export function controlSocketPath(runDir: string): string {
  try {
    const named = readFileSync(join(runDir, CONTROL_PATH_NAME), 'utf8').trim();
    if (named) return named;
  } catch {
    // no fallback path: the socket is in the run folder
  }
  return join(runDir, CONTROL_SOCKET_NAME);
}
