// The secret a local HTTP server of orchestrate asks every request for, made the way `mcp serve
// --http` makes its own: an environment variable wins; without it the token kept in the user's
// orchestrate home (ORCHESTRATE_HOME, default ~/.orchestrate; agents' sandboxes hide that folder),
// made once from 32 crypto-random bytes and written mode 0600, so a bookmarked URL or a configured
// client keeps working across restarts. A new token: delete the file. Each server names its own
// variable and file (the web view's token must not open the MCP server, which runs any recipe).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

export interface TokenPlace {
  /** The environment variable that sets the token (e.g. ORCHESTRATE_WEB_TOKEN). */
  envVar: string;
  /** The file's name inside the orchestrate home (e.g. web-token). */
  fileName: string;
  /** What the token opens, for messages ("web view"). */
  what: string;
}

export interface ServerToken {
  token: string;
  /** Where it came from: the environment, a token file that existed, or one made now. */
  origin: 'env' | 'file' | 'new';
  /** The token file (origin file or new). */
  file?: string;
}

export type ServerTokenResult = { ok: true; token: ServerToken } | { ok: false; code: 'token_file'; message: string };

/** The token file of this user: `<ORCHESTRATE_HOME or ~/.orchestrate>/<fileName>`. */
export function serverTokenFile(env: Env, place: TokenPlace): string {
  const home = env.ORCHESTRATE_HOME || join(env.HOME || homedir(), '.orchestrate');
  return join(home, place.fileName);
}

/** A token worth keeping: long enough, printable, one line (a hand-edited file may hold anything). */
const usable = (t: string): boolean => /^[\x21-\x7e]{16,}$/.test(t);

/** The server's token, or why the token file could not be read or written (with the fix). */
export function serverToken(env: Env, place: TokenPlace): ServerTokenResult {
  const fromEnv = env[place.envVar];
  if (fromEnv) {
    if (!usable(fromEnv))
      return {
        ok: false,
        code: 'token_file',
        message: `${place.envVar} must be at least 16 printable characters with no spaces: set a longer one, or unset it to use a token made for you`,
      };
    return { ok: true, token: { token: fromEnv, origin: 'env' } };
  }
  const file = serverTokenFile(env, place);
  let kept: string | undefined;
  try {
    kept = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      return {
        ok: false,
        code: 'token_file',
        message: `cannot read the ${place.what} token file ${file}: ${(err as Error).message}; set ${place.envVar} instead, or fix the file's permissions`,
      };
  }
  if (kept !== undefined && usable(kept)) {
    // A token file others may read is made private first.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return { ok: true, token: { token: kept, origin: 'file', file } };
  }
  const token = randomBytes(32).toString('base64url');
  try {
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    // writeFileSync keeps the mode of a file that was there (an unusable one): make it private.
    chmodSync(file, 0o600);
  } catch (err) {
    return {
      ok: false,
      code: 'token_file',
      message: `cannot write the ${place.what} token file ${file}: ${(err as Error).message}; set ${place.envVar} instead, or make the folder writable`,
    };
  }
  return { ok: true, token: { token, origin: 'new', file } };
}
