// The bearer token of `orchestrate mcp serve --http`. Every local process (other users' too) can
// reach 127.0.0.1, and run_recipe runs any recipe, `sandbox: none` included: the HTTP server
// never answers without a token. How a server token is chosen, kept and made private is the
// service's (service/server-token.ts, shared with `orchestrate serve`); this file names the MCP
// server's own variable and file, so the web view's token never opens this server.
import {
  serverToken as sharedServerToken,
  serverTokenFile,
  type ServerToken,
  type TokenPlace,
} from '../service/server-token.js';

/** The env variable whose value HTTP clients must send as `Authorization: Bearer <token>`. */
export const TOKEN_ENV = 'ORCHESTRATE_MCP_TOKEN';
/** The token file's name inside the orchestrate home. */
export const TOKEN_FILE_NAME = 'mcp-token';

const MCP_TOKEN: TokenPlace = { envVar: TOKEN_ENV, fileName: TOKEN_FILE_NAME, what: 'MCP' };

type Env = Readonly<Record<string, string | undefined>>;

export type HttpToken = ServerToken;

/** The token file of this user: `<ORCHESTRATE_HOME or ~/.orchestrate>/mcp-token`. */
export function tokenFilePath(env: Env): string {
  return serverTokenFile(env, MCP_TOKEN);
}

/**
 * The server's token: ORCHESTRATE_MCP_TOKEN, else the token file (made now if missing or unusable,
 * made private if others may read it). Throws with the file named when it cannot be read or written.
 */
export function serverToken(env: Env): HttpToken {
  // ORCHESTRATE_MCP_TOKEN has always been taken as given: clients configured with a shorter one
  // keep working (the service's length check is for tokens it is asked to trust from now on).
  const fromEnv = env[TOKEN_ENV];
  if (fromEnv) return { token: fromEnv, origin: 'env' };
  const chosen = sharedServerToken(env, MCP_TOKEN);
  if (!chosen.ok) throw new Error(chosen.message);
  return chosen.token;
}
