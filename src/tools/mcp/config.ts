// MCP server configuration as users already write it: the `mcpServers` map of a project's
// `.mcp.json` (Claude Code, Cursor), the recipe's top-level `mcp_servers:` (same shape plus our
// keys) and `mcpServers` in Claude Code agent files. One zod schema checks every source;
// `resolveMcpServer` turns a raw entry into the plain-data McpServerConfig a connection starts
// from, expanding `${VAR}` / `${VAR:-default}` against an environment and saying exactly which
// variable is missing. Raw entries travel to worker threads and workers unexpanded, so a
// distributed worker expands them with its own environment and secrets never sit in run state.
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { inputExists, readInputText } from '../../util/input-files.js';

export type McpTransportKind = 'stdio' | 'http' | 'sse';

/** Defaults of the keys we add to the common shape. */
export const MCP_DEFAULTS = {
  startup: 'lazy' as 'lazy' | 'eager',
  scope: 'agent' as 'agent' | 'run',
  /** Connect and list tools within this (MCP_TIMEOUT in Claude Code is 30 s too). */
  startupTimeoutMs: 30_000,
  /**
   * A started server must answer `initialize` within this: a server that runs but never speaks
   * MCP (a wrong command that waits for input) is reported as such instead of at startup_timeout.
   */
  initializeTimeoutMs: 10_000,
  /** One tool call without a result or a progress notification for this long fails. */
  toolTimeoutMs: 120_000,
  /** The 64-character [A-Za-z0-9_-] limit of the providers' tool names. */
  maxToolNameLength: 64,
  /** A crashed stdio server is started again this many times, then reported. */
  restarts: 1,
};

const duration = z
  .union([
    z.number().positive(),
    z.string().regex(/^\d+(?:\.\d+)?(?:ms|s|m)?$/, 'a duration such as 30s, 500ms, 2m or a number of seconds'),
  ])
  .describe('A number of seconds, or 30s, 500ms, 2m');

/** Keys orchestrate adds to every server entry. */
const ourKeys = {
  startup: z
    .enum(['lazy', 'eager'])
    .optional()
    .describe("lazy (default): started at the agent's first model call; eager: when the agent starts"),
  startup_timeout: duration.optional().describe('Connecting and listing tools must finish within this (default 30s)'),
  tool_timeout: duration
    .optional()
    .describe(
      'A tool call fails after this long without a result; each progress notification restarts the clock (default 120s)',
    ),
  scope: z
    .enum(['agent', 'run'])
    .optional()
    .describe(
      'agent (default): one server per agent; run: one per run, shared by its agents (per worker on distributed runs)',
    ),
  network: z.boolean().optional().describe('stdio servers: may reach the network inside the sandbox (default false)'),
  sandbox: z
    .enum(['workspace', 'none'])
    .optional()
    .describe('stdio servers: workspace (default) runs the server in the command sandbox; none runs it unconfined'),
  initialize_timeout: duration
    .optional()
    .describe('The server must answer the MCP initialize request within this after it starts (default 10s)'),
  parallel: z
    .boolean()
    .optional()
    .describe(
      "Calls of one model turn to this server: true runs them all at once; false one at a time; unset (default): at once only for tools the server marks readOnlyHint, the others one at a time in the model's order",
    ),
  optional: z
    .boolean()
    .optional()
    .describe(
      'true: an agent runs without this server when it cannot start or dies (a warning, and the model is told); false (default): the agent fails with mcp_unavailable',
    ),
};

const stringMap = z.record(z.string(), z.string());

function serverShapes(strict: boolean) {
  const obj = strict ? z.strictObject : z.looseObject;
  const stdio = obj({
    type: z.literal('stdio').optional(),
    command: z.string().min(1).describe('The program that speaks MCP on stdin/stdout'),
    args: z.array(z.string()).optional(),
    env: stringMap
      .optional()
      .describe('Environment of the server (besides the sandbox allowlist); values may use ${VAR}'),
    cwd: z.string().optional().describe("Working directory (default: the agent's)"),
    ...ourKeys,
  });
  const remote = obj({
    type: z
      .enum(['http', 'sse', 'streamable-http'])
      .describe('http: Streamable HTTP; sse: the older HTTP+SSE transport'),
    url: z.string().describe("The server's endpoint; may use ${VAR}"),
    headers: stringMap.optional().describe('Request headers, e.g. Authorization: Bearer ${TOKEN}'),
    ...ourKeys,
  });
  return z.union([stdio, remote], {
    error: 'an MCP server is {command, args, env, cwd} (stdio) or {type: http | sse, url, headers}',
  });
}

/** One server entry as a recipe writes it (unknown keys are errors). */
export const McpServerEntrySchema = serverShapes(true).describe(
  'An MCP server: {command, args, env, cwd} or {type: http | sse, url, headers}, plus startup, startup_timeout, initialize_timeout, tool_timeout, scope, network, sandbox, parallel, optional',
);
/** One server entry in a .mcp.json or an agent file (keys other tools add are ignored). */
export const McpServerEntryLooseSchema = serverShapes(false);
export type McpServerEntry = z.output<typeof McpServerEntryLooseSchema>;

/** A server ready to start: everything expanded, durations in ms. Plain data. */
export interface McpServerConfig {
  name: string;
  transport: McpTransportKind;
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  startup: 'lazy' | 'eager';
  scope: 'agent' | 'run';
  startupTimeoutMs: number;
  toolTimeoutMs: number;
  network: boolean;
  sandbox: 'workspace' | 'none';
  /** Default MCP_DEFAULTS.initializeTimeoutMs. */
  initializeTimeoutMs?: number;
  /** true: every call at once; false: one at a time; undefined: at once only for readOnlyHint tools. */
  parallel?: boolean;
  /** The agent goes on without the server when it cannot start or dies (else it fails: mcp_unavailable). */
  optional?: boolean;
}

/** A server as configuration names it, before expansion (what recipes hand to the runtime). */
export interface McpServerSpec {
  name: string;
  entry: McpServerEntry;
  /** Folder relative paths (cwd) are resolved against. */
  baseDir: string;
  /** Where it was defined (a file), for messages. */
  source: string;
}

export interface McpConfigProblem {
  /** Path inside the server entry, e.g. ['headers', 'Authorization']. */
  path: (string | number)[];
  message: string;
  hint?: string;
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Expands ${VAR} and ${VAR:-default}; names missing variables (without a default). */
export function expandVars(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): { value: string; missing: string[]; used: string[] } {
  const missing: string[] = [];
  const used: string[] = [];
  const value = text.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (v !== undefined && v !== '') {
      used.push(name);
      return v;
    }
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return '';
  });
  return { value, missing, used };
}

/** A duration as written (seconds, or 30s / 500ms / 2m) in ms. */
export function durationMs(value: number | string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') return value * 1000;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!m) return fallback;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

export interface ResolvedMcpServer {
  config?: McpServerConfig;
  problems: McpConfigProblem[];
  /** Values that came from the environment (tokens in headers, env values): keep them out of logs. */
  secrets: { name: string; value: string }[];
}

/** Expands one entry against `env`; problems say which key and variable is wrong. */
export function resolveMcpServer(
  spec: McpServerSpec,
  env: Readonly<Record<string, string | undefined>>,
): ResolvedMcpServer {
  const problems: McpConfigProblem[] = [];
  const secrets: { name: string; value: string }[] = [];
  const e = spec.entry;
  const expand = (text: string, path: (string | number)[]): string => {
    const r = expandVars(text, env);
    for (const name of r.missing) {
      problems.push({
        path,
        message: `MCP server "${spec.name}": environment variable ${name} is not set`,
        hint: `export ${name}=..., or write \${${name}:-default}`,
      });
    }
    for (const name of r.used) {
      const value = env[name];
      if (value && value.length >= 4) secrets.push({ name, value });
    }
    return r.value;
  };
  const expandMap = (map: Record<string, string> | undefined, key: string): Record<string, string> =>
    Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, expand(v, [key, k])]));
  const base = {
    name: spec.name,
    startup: e.startup ?? MCP_DEFAULTS.startup,
    scope: e.scope ?? MCP_DEFAULTS.scope,
    startupTimeoutMs: durationMs(e.startup_timeout, MCP_DEFAULTS.startupTimeoutMs),
    toolTimeoutMs: durationMs(e.tool_timeout, MCP_DEFAULTS.toolTimeoutMs),
    network: e.network ?? false,
    sandbox: e.sandbox ?? 'workspace',
    initializeTimeoutMs: durationMs(e.initialize_timeout, MCP_DEFAULTS.initializeTimeoutMs),
    ...(e.parallel !== undefined ? { parallel: e.parallel } : {}),
    ...(e.optional !== undefined ? { optional: e.optional } : {}),
  } as const;
  let config: McpServerConfig;
  if ('command' in e && typeof e.command === 'string') {
    config = {
      ...base,
      transport: 'stdio',
      command: expand(e.command, ['command']),
      args: (e.args ?? []).map((a, i) => expand(a, ['args', i])),
      env: expandMap(e.env, 'env'),
      headers: {},
    };
    if (e.cwd !== undefined) config.cwd = resolve(spec.baseDir, expand(e.cwd, ['cwd']));
  } else {
    const remote = e as Extract<McpServerEntry, { url: string }>;
    const url = expand(remote.url, ['url']);
    if (!problems.some((p) => p.path[0] === 'url')) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
        problems.push({
          path: ['url'],
          message: `MCP server "${spec.name}": "${remote.url}" is not an http(s) URL`,
          hint: 'write the full endpoint, e.g. https://example.com/mcp',
        });
      }
    }
    config = {
      ...base,
      transport: remote.type === 'sse' ? 'sse' : 'http',
      url,
      args: [],
      env: {},
      headers: expandMap(remote.headers, 'headers'),
    };
  }
  return problems.length ? { problems, secrets } : { config, problems, secrets };
}

/**
 * A problem of a .mcp.json file: `message` names the file; `detail` is the same text without it,
 * and `server` the entry it is about, so callers that point at the entry need not parse the text.
 */
export interface McpJsonProblem {
  message: string;
  detail: string;
  server?: string;
}

/** The `mcpServers` of a .mcp.json file, or undefined when there is no such file. */
export function readMcpJson(path: string): { specs: McpServerSpec[]; problems: McpJsonProblem[] } | undefined {
  if (!inputExists(path)) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(readInputText(path));
  } catch (err) {
    return {
      specs: [],
      problems: [mcpJsonProblem(path, `not valid JSON: ${err instanceof Error ? err.message : String(err)}`)],
    };
  }
  const servers = (doc as { mcpServers?: unknown } | null)?.mcpServers;
  if (servers === undefined) return { specs: [], problems: [] };
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    return {
      specs: [],
      problems: [
        mcpJsonProblem(
          path,
          '"mcpServers" must be a map of server name to {command, args, env} or {type, url, headers}',
        ),
      ],
    };
  }
  const specs: McpServerSpec[] = [];
  const problems: McpJsonProblem[] = [];
  const dir = resolve(path, '..');
  for (const [name, raw] of Object.entries(servers)) {
    const parsed = McpServerEntryLooseSchema.safeParse(raw);
    if (!parsed.success)
      problems.push(
        mcpJsonProblem(path, `mcpServers.${name}: ${parsed.error.issues[0]?.message ?? 'invalid server entry'}`, name),
      );
    else specs.push({ name, entry: parsed.data, baseDir: dir, source: path });
  }
  return { specs, problems };
}

function mcpJsonProblem(path: string, detail: string, server?: string): McpJsonProblem {
  return { message: `${path}: ${detail}`, detail, ...(server !== undefined ? { server } : {}) };
}

/** Where user-side .mcp.json files are looked for: ~/.orchestrate/.mcp.json, then the recipe's folder. */
export function userMcpJsonPaths(orchestrateHome: string, recipeDir: string): string[] {
  return [join(orchestrateHome, '.mcp.json'), join(recipeDir, '.mcp.json')];
}
