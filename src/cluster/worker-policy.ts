// What an `orchestrate worker` agrees to run. A job comes from a coordinator that holds the
// cluster secret, but the worker's operator decides what runs on this machine with this machine's
// API key: by default a worker refuses a job that would send the key to another base URL, run
// commands unconfined (`sandbox: none`) or with network, or load extension code into the worker
// process. Each is allowed by a flag of the worker (--allow-base-url, --allow-unsandboxed,
// --allow-network, --allow-extensions), and a refusal names the flag.
//
// MCP servers are programs and connections the job asks this worker to start, so they follow
// the same rules: a stdio server is a command (unconfined needs --allow-unsandboxed, network
// --allow-network); an HTTP/SSE server is a connection from this machine to a URL the job chose,
// with headers expanded from this worker's environment (--allow-network); servers a job would
// read from its repository's .mcp.json (trust_repo_config) cannot be checked before they start
// (--allow-repo-config). A ${VAR} naming a provider key is never expanded into a job's server:
// this worker's model key is for the model only.
//
// Shipped files (skills, extensions, scripts) are written under the job's own `files` folder only:
// a path that is absolute, has a `..` part or resolves (through symlinks too) outside it is refused.
import { closeSync, mkdirSync, openSync, realpathSync, writeSync, constants } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { PROVIDER_KEY_NAMES } from '../tools/sandbox.js';

export interface WorkerPolicy {
  /** The job may name the model API's base URL (the worker's API key goes there). */
  allowBaseUrl: boolean;
  /** The job may run bash, verify and run: commands unconfined (`sandbox: none`). */
  allowUnsandboxed: boolean;
  /** The job's sandboxed commands may reach the network (`network: true`). */
  allowNetwork: boolean;
  /** The job may ship extension modules, which run inside the worker's agent thread. */
  allowExtensions: boolean;
  /** The job may start MCP servers its repository's .mcp.json defines (trust_repo_config). */
  allowRepoConfig?: boolean;
}

export const STRICT_POLICY: WorkerPolicy = {
  allowBaseUrl: false,
  allowUnsandboxed: false,
  allowNetwork: false,
  allowExtensions: false,
};

/** The part of a task the policy looks at. */
export interface PolicyTask {
  baseUrl?: unknown;
  sandbox?: { mode?: unknown; network?: unknown } | undefined;
  agent?:
    | {
        extensions?: unknown;
        mcpServers?: unknown;
        mcpRepoPick?: unknown;
        providerConfig?: { baseUrl?: unknown; apiKeyEnv?: unknown };
      }
    | undefined;
  trustRepoConfig?: unknown;
}

/**
 * Why this worker refuses the task (a sentence naming the flag that would allow it), or undefined.
 * `ownBaseUrl`: the worker's own ANTHROPIC_BASE_URL, which wins over the job's (no refusal then).
 */
export function policyRefusal(
  task: PolicyTask,
  policy: WorkerPolicy,
  ownBaseUrl: string | undefined,
): string | undefined {
  if (typeof task.baseUrl === 'string' && task.baseUrl !== '' && !ownBaseUrl && !policy.allowBaseUrl) {
    return `the job asks for the model API at ${originOf(task.baseUrl)}, and this worker sends its API key only to its own endpoint; start the worker with --allow-base-url to accept base URLs from the coordinator (or set ANTHROPIC_BASE_URL on the worker)`;
  }
  // A recipe's providers: entry names an endpoint and the variable whose value is sent to it as the
  // key: from a coordinator, that could send any of this worker's variables anywhere.
  const endpoint = task.agent?.providerConfig;
  if (endpoint && typeof endpoint.baseUrl === 'string' && endpoint.baseUrl !== '' && !policy.allowBaseUrl) {
    const key = typeof endpoint.apiKeyEnv === 'string' ? ` with this worker's ${endpoint.apiKeyEnv}` : '';
    return `the job's provider sends its requests${key} to ${originOf(endpoint.baseUrl)}; start the worker with --allow-base-url to accept provider endpoints from the coordinator`;
  }
  const sandbox = task.sandbox;
  if (sandbox?.mode !== 'workspace') {
    if (!policy.allowUnsandboxed)
      return `the job runs its commands unconfined (sandbox: ${String(sandbox?.mode ?? 'none')}); start the worker with --allow-unsandboxed to allow that`;
  } else if (sandbox.network === true && !policy.allowNetwork) {
    return 'the job lets its commands reach the network (network: true); start the worker with --allow-network to allow that';
  }
  const extensions = task.agent?.extensions;
  if (Array.isArray(extensions) && extensions.length > 0 && !policy.allowExtensions) {
    return `the job loads ${extensions.length} extension module(s), which would run inside this worker; start the worker with --allow-extensions to allow that`;
  }
  return mcpRefusal(task, policy);
}

/** Why this worker refuses the job's MCP servers, or undefined. */
function mcpRefusal(task: PolicyTask, policy: WorkerPolicy): string | undefined {
  const servers = Array.isArray(task.agent?.mcpServers) ? (task.agent.mcpServers as unknown[]) : [];
  for (const raw of servers) {
    const s = raw as { name?: unknown; entry?: Record<string, unknown> };
    const name = String(s.name);
    const entry = s.entry ?? {};
    const key = /\$\{([A-Za-z_][A-Za-z0-9_]*)/g;
    for (const m of JSON.stringify(entry).matchAll(key)) {
      if (PROVIDER_KEY_NAMES.includes(m[1]!))
        return `the job's MCP server "${name}" asks for this worker's ${m[1]} (\${${m[1]}}), and a worker gives its provider keys to the model only; give the server its own token under another name`;
    }
    if (typeof entry.url === 'string') {
      if (!policy.allowNetwork)
        return `the job connects this worker to the MCP server "${name}" at ${originOf(entry.url)}; start the worker with --allow-network to allow that`;
    } else if (entry.sandbox === 'none') {
      if (!policy.allowUnsandboxed)
        return `the job starts the MCP server "${name}" unconfined (sandbox: none); start the worker with --allow-unsandboxed to allow that`;
    } else if (entry.network === true && !policy.allowNetwork) {
      return `the job lets the MCP server "${name}" reach the network (network: true); start the worker with --allow-network to allow that`;
    }
  }
  if (task.trustRepoConfig === true && task.agent?.mcpRepoPick !== undefined && !policy.allowRepoConfig)
    return "the job would start the MCP servers of its repository's .mcp.json (trust_repo_config), which this worker cannot check first; start the worker with --allow-repo-config to allow that";
  return undefined;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(an unparsable URL)';
  }
}

/** Why a shipped file's path is refused, or undefined when it is a plain relative path. */
export function shippedPathProblem(p: string): string | undefined {
  if (p === '' || p.includes('\0')) return 'it is empty or has a NUL byte';
  if (isAbsolute(p) || p.startsWith('\\') || /^[a-z]:/i.test(p)) return 'it is absolute';
  if (p.split(/[\\/]/).some((part) => part === '..')) return 'it has a ".." part';
  return undefined;
}

/**
 * Writes one shipped file under `root` (which the caller created): the path checked as above,
 * its folder resolved through symlinks and required to be inside `root`, and the file created
 * exclusively without following a symlink at its name. Throws with the reason otherwise.
 */
export function writeShippedFile(root: string, rel: string, data: Buffer): string {
  const problem = shippedPathProblem(rel);
  if (problem) throw new Error(`refused the shipped file "${rel}": ${problem}`);
  const realRoot = realpathSync(root);
  const target = join(realRoot, rel);
  const parts = rel.split(/[\\/]/).filter((s) => s !== '' && s !== '.');
  const folder = join(realRoot, ...parts.slice(0, -1));
  mkdirSync(folder, { recursive: true });
  const realFolder = realpathSync(folder);
  if (realFolder !== realRoot && !realFolder.startsWith(realRoot + sep))
    throw new Error(`refused the shipped file "${rel}": it resolves outside the worker's folder for this job`);
  const fd = openSync(
    join(realFolder, parts[parts.length - 1] ?? ''),
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
  return target;
}
