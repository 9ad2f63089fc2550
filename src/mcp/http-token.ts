// The bearer token of `orchestrate mcp serve --http`. Every local process (other users' too) can
// reach 127.0.0.1, and run_recipe runs any recipe, `sandbox: none` included: the HTTP server
// never answers without a token. ORCHESTRATE_MCP_TOKEN wins; without it the server uses the one
// kept in the user's orchestrate home (ORCHESTRATE_HOME, default ~/.orchestrate; agents' sandboxes
// hide that folder), made once from crypto random bytes and written mode 0600, so clients
// configured with it keep working across restarts. A new token: delete the file.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The env variable whose value HTTP clients must send as `Authorization: Bearer <token>`. */
export const TOKEN_ENV = 'ORCHESTRATE_MCP_TOKEN';
/** The token file's name inside the orchestrate home. */
export const TOKEN_FILE_NAME = 'mcp-token';

type Env = Readonly<Record<string, string | undefined>>;

export interface HttpToken {
  token: string;
  /** Where it came from: the environment, a token file that existed, or one made now. */
  origin: 'env' | 'file' | 'new';
  /** The token file (origin file or new). */
  file?: string;
}

/** The token file of this user: `<ORCHESTRATE_HOME or ~/.orchestrate>/mcp-token`. */
export function tokenFilePath(env: Env): string {
  const home = env.ORCHESTRATE_HOME || join(env.HOME || homedir(), '.orchestrate');
  return join(home, TOKEN_FILE_NAME);
}

/** A token worth keeping: long enough, printable, one line (a hand-edited file may hold anything). */
const usable = (t: string): boolean => /^[\x21-\x7e]{16,}$/.test(t);

/**
 * The server's token: ORCHESTRATE_MCP_TOKEN, else the token file (made now if missing or unusable).
 * A token file others may read is made private (0600) first. Throws with the file named when it
 * cannot be read or written.
 */
export function serverToken(env: Env): HttpToken {
  const fromEnv = env[TOKEN_ENV];
  if (fromEnv) return { token: fromEnv, origin: 'env' };
  const file = tokenFilePath(env);
  let kept: string | undefined;
  try {
    kept = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`cannot read the MCP token file ${file}: ${(err as Error).message}`);
  }
  if (kept !== undefined && usable(kept)) {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return { token: kept, origin: 'file', file };
  }
  const token = randomBytes(32).toString('base64url');
  try {
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    // writeFileSync keeps the mode of a file that was there (an unusable one): make it private.
    chmodSync(file, 0o600);
  } catch (err) {
    throw new Error(
      `cannot write the MCP token file ${file}: ${(err as Error).message}; set ${TOKEN_ENV} instead, or make the folder writable`,
    );
  }
  return { token, origin: 'new', file };
}
