// Which MCP servers a recipe's agents get. Servers are defined on the user's side only: the
// recipe's top-level `mcp_servers:`, a `.mcp.json` in the recipe's folder, `~/.orchestrate/.mcp.json`
// (ORCHESTRATE_HOME), and inline in an agent file's `mcpServers:`. The repositories agents work
// on are never read for servers: a batch over 50 foreign repositories starts none of theirs,
// unless a task opts in with `trust_repo_config: true` (per task, or for all in `defaults:`):
// then the `.mcp.json` in each instance's working folder counts like one next to the recipe,
// read where the agent runs (repoMcpPick says which of its servers an agent takes).
// An agent gets: the servers its `mcp_servers:` names; else those its mcp__<server>__ tools name;
// else, when its tools are not given at all, the recipe's and the recipe folder's servers.
import { orchestrateHome } from '../runtime/create-agent-session.js';
import {
  readMcpJson,
  resolveMcpServer,
  userMcpJsonPaths,
  type McpServerSpec,
  McpServerEntryLooseSchema,
} from '../tools/mcp/config.js';
import { serverOfToolName } from '../tools/mcp/names.js';
import type { AgentFile } from './agent-file.js';
import type { PendingProblem } from './problems.js';
import { readInputText } from '../util/input-files.js';
import { isRecord } from '../util/unknown-value.js';

type Obj = Record<string, unknown>;

export interface RecipeMcpServers {
  /** Every server an agent may name, by name (the recipe's win over .mcp.json files). */
  byName: Map<string, McpServerSpec>;
  /** Servers agents get when they name none: the recipe's and the recipe folder's .mcp.json. */
  defaults: string[];
  /** Problems of the .mcp.json files (unreadable, bad entries). */
  fileProblems: { file: string; line: number; col: number; message: string }[];
  /** Some task (or `defaults:`) has `trust_repo_config: true`: servers may come from the repositories. */
  repoTrusted: boolean;
}

/** Whether a recipe (raw YAML data) lets any task read its repositories' configuration. */
export function recipeTrustsRepoConfig(raw: unknown): boolean {
  if (!isRecord(raw)) return false;
  if (isRecord(raw.defaults) && raw.defaults.trust_repo_config === true) return true;
  return Array.isArray(raw.tasks) && raw.tasks.some((t) => isRecord(t) && t.trust_repo_config === true);
}

/** Line and column of `"name"` in a JSON text (1-based), for problems in .mcp.json files. */
function jsonKeyPosition(path: string, name: string): { line: number; col: number } {
  try {
    const text = readInputText(path);
    const at = text.indexOf(`"${name}"`);
    if (at < 0) return { line: 1, col: 1 };
    const before = text.slice(0, at).split('\n');
    return { line: before.length, col: (before.at(-1)?.length ?? 0) + 1 };
  } catch {
    return { line: 1, col: 1 };
  }
}

/** The servers a recipe (raw YAML data) can give its agents. */
export function recipeMcpServers(
  raw: unknown,
  dir: string,
  recipeFile: string,
  env: Readonly<Record<string, string | undefined>>,
): RecipeMcpServers {
  const byName = new Map<string, McpServerSpec>();
  const defaults: string[] = [];
  const fileProblems: RecipeMcpServers['fileProblems'] = [];
  const [homeFile, projectFile] = userMcpJsonPaths(orchestrateHome(env as Record<string, string | undefined>), dir);
  for (const file of [homeFile!, projectFile!]) {
    const read = readMcpJson(file);
    if (!read) continue;
    for (const p of read.problems) {
      fileProblems.push({
        file,
        ...(p.server !== undefined ? jsonKeyPosition(file, p.server) : { line: 1, col: 1 }),
        message: p.detail,
      });
    }
    for (const spec of read.specs) {
      byName.set(spec.name, spec);
      if (file === projectFile && !defaults.includes(spec.name)) defaults.push(spec.name);
    }
  }
  const own = isRecord(raw) && isRecord(raw.mcp_servers) ? raw.mcp_servers : {};
  for (const [name, entry] of Object.entries(own)) {
    const parsed = McpServerEntryLooseSchema.safeParse(entry);
    if (!parsed.success) continue; // the schema reports it
    byName.set(name, { name, entry: parsed.data, baseDir: dir, source: recipeFile });
    if (!defaults.includes(name)) defaults.push(name);
  }
  return { byName, defaults, fileProblems, repoTrusted: recipeTrustsRepoConfig(raw) };
}

/** The servers an agent gets, by name, and where each name came from (for problems). */
export function agentServerNames(
  a: Obj,
  file: AgentFile | undefined,
  servers: RecipeMcpServers,
): { names: string[]; explicit: boolean } {
  if (Array.isArray(a.mcp_servers))
    return { names: a.mcp_servers.filter((n): n is string => typeof n === 'string'), explicit: true };
  const named = new Set<string>();
  for (const s of file?.mcpServers ?? []) named.add(s.name);
  const tools: unknown[] = Array.isArray(a.tools) ? a.tools : a.tools === undefined && file?.tools ? file.tools : [];
  for (const t of tools) {
    const server = typeof t === 'string' ? serverOfToolName(t.trim()) : undefined;
    if (server) named.add(server);
  }
  if (named.size > 0)
    return {
      names: [...named].filter(
        (n) => servers.byName.has(n) || file?.mcpServers?.some((s) => s.name === n && s.entry !== undefined),
      ),
      explicit: true,
    };
  const toolsGiven = a.tools !== undefined || file?.tools !== undefined;
  return { names: toolsGiven ? [] : [...servers.defaults], explicit: false };
}

/**
 * Which servers of a trusted repository's .mcp.json an agent takes (read where it runs): the
 * names it asks for that the user's side does not define; every server when it names none and
 * gives no `tools:` (like the recipe folder's .mcp.json); undefined: none.
 */
export function repoMcpPick(
  a: Obj,
  file: AgentFile | undefined,
  servers: RecipeMcpServers,
): string[] | 'all' | undefined {
  if (!servers.repoTrusted) return undefined;
  const inline = new Set((file?.mcpServers ?? []).filter((s) => s.entry !== undefined).map((s) => s.name));
  const named = new Set<string>();
  if (Array.isArray(a.mcp_servers)) {
    for (const n of a.mcp_servers) if (typeof n === 'string') named.add(n);
  } else {
    for (const s of file?.mcpServers ?? []) named.add(s.name);
    const tools: unknown[] = Array.isArray(a.tools) ? a.tools : a.tools === undefined && file?.tools ? file.tools : [];
    for (const t of tools) {
      const server = typeof t === 'string' ? serverOfToolName(t.trim()) : undefined;
      if (server) named.add(server);
    }
  }
  if (named.size === 0) return a.tools !== undefined || file?.tools !== undefined ? undefined : 'all';
  const fromRepo = [...named].filter((n) => !servers.byName.has(n) && !inline.has(n));
  return fromRepo.length ? fromRepo : undefined;
}

/** The specs of an agent's servers: its file's inline ones first, then the recipe's. */
export function agentServerSpecs(
  a: Obj,
  file: AgentFile | undefined,
  fileDir: string,
  filePath: string,
  servers: RecipeMcpServers,
): McpServerSpec[] {
  const inline = new Map<string, McpServerSpec>();
  for (const s of file?.mcpServers ?? []) {
    if (s.entry === undefined) continue;
    const parsed = McpServerEntryLooseSchema.safeParse(s.entry);
    if (parsed.success) inline.set(s.name, { name: s.name, entry: parsed.data, baseDir: fileDir, source: filePath });
  }
  const out: McpServerSpec[] = [];
  for (const name of agentServerNames(a, file, servers).names) {
    const spec = inline.get(name) ?? servers.byName.get(name);
    if (spec && !out.some((o) => o.name === name)) out.push(spec);
  }
  return out;
}

/**
 * Problems of the MCP configuration of one agent: names of servers nobody defines (in
 * mcp_servers:, in mcp__ tools, in its file's mcpServers:), inline entries of its file that are
 * not server configurations, and (through checkMcpEntries) bad URLs and missing ${VAR}s.
 */
export function checkAgentMcp(
  name: string,
  a: Obj,
  file: { agent: AgentFile; shown: string } | undefined,
  servers: RecipeMcpServers,
  problem: (p: PendingProblem) => void,
): void {
  const base = ['agents', name];
  const known = new Set([
    ...servers.byName.keys(),
    ...(file?.agent.mcpServers ?? []).filter((s) => s.entry !== undefined).map((s) => s.name),
  ]);
  const hint = (server: string) =>
    known.size > 0
      ? `servers defined: ${[...known].join(', ')}; define "${server}" under mcp_servers: in the recipe or in a .mcp.json next to it`
      : `define it under mcp_servers: in the recipe ({command, args} or {type: http, url}) or in a .mcp.json next to it`;
  // With trust_repo_config a name the user's side lacks may come from a repository's .mcp.json:
  // only known where the agent runs, so a warning (an instance whose repository lacks it runs without).
  const fromRepo = (server: string): Pick<PendingProblem, 'severity' | 'hint'> & { note: string } =>
    servers.repoTrusted
      ? {
          severity: 'warning',
          note: ` on your side; it is taken from the .mcp.json of the repository each instance works in (trust_repo_config), and an instance whose repository does not define it runs without it`,
          hint: `define "${server}" under mcp_servers: to have it everywhere`,
        }
      : { note: '', hint: hint(server) };
  if (Array.isArray(a.mcp_servers)) {
    a.mcp_servers.forEach((s, i) => {
      if (typeof s === 'string' && !known.has(s)) {
        const { note, ...rest } = fromRepo(s);
        problem({
          code: 'unknown_mcp_server',
          path: [...base, 'mcp_servers', i],
          message: `agent "${name}" names MCP server "${s}", which is not defined${note}`,
          ...rest,
        });
      }
    });
  }
  if (Array.isArray(a.tools)) {
    a.tools.forEach((t, i) => {
      const server = typeof t === 'string' ? serverOfToolName(t.trim()) : undefined;
      if (server && !known.has(server)) {
        const { note, ...rest } = fromRepo(server);
        problem({
          code: 'unknown_mcp_server',
          path: [...base, 'tools', i],
          message: `agent "${name}" tool "${String(t)}" names MCP server "${server}", which is not defined${note}`,
          ...rest,
        });
      }
    });
  }
  if (!file) return;
  const at = (p: { line: number; col: number }) => ({ file: file.shown, line: p.line, col: p.col });
  // An agent file from elsewhere may name servers this recipe does not define: like the Claude
  // Code tools missing here, they are ignored with a warning, or errors with strict_tools.
  const strict = a.strict_tools === true || file.agent.strictTools === true;
  const missing = (p: { line: number; col: number }, what: string, server: string) => {
    const reason = `MCP server "${server}" is not defined`;
    if (servers.repoTrusted) {
      const { note, ...rest } = fromRepo(server);
      problem({
        code: 'unknown_mcp_server',
        path: base,
        at: at(p),
        message: `agent "${name}" uses ${what}: ${reason}${note}`,
        ...rest,
      });
    } else if (strict)
      problem({
        code: 'unknown_mcp_server',
        path: base,
        at: at(p),
        message: `agent "${name}" uses ${what}, which is not available here (${reason})`,
        hint: hint(server),
      });
    else
      problem({
        code: 'unknown_mcp_server',
        severity: 'warning',
        path: base,
        at: at(p),
        message: `agent "${name}" ${what} is not available here and is ignored (${reason})`,
        hint: hint(server),
      });
  };
  for (const s of file.agent.mcpServers ?? []) {
    if (s.entry !== undefined) {
      const parsed = McpServerEntryLooseSchema.safeParse(s.entry);
      if (!parsed.success)
        problem({
          code: 'agent_file',
          path: base,
          at: at(s),
          message: `mcpServers.${s.name}: ${parsed.error.issues[0]?.message ?? 'not a server configuration'}`,
        });
    } else if (!known.has(s.name)) missing(s, `MCP server "${s.name}"`, s.name);
  }
  if (a.tools === undefined) {
    for (const t of file.agent.toolPositions) {
      const server = serverOfToolName(t.name.trim());
      if (server && !known.has(server)) missing(t, `tool "${t.name}"`, server);
    }
  }
}

/** Problems of server entries once expanded against `env`: bad URLs, missing ${VAR}s. */
export function checkMcpEntries(
  servers: RecipeMcpServers,
  env: Readonly<Record<string, string | undefined>>,
  recipeFile: string,
  used: ReadonlySet<string>,
  problem: (p: PendingProblem) => void,
): void {
  for (const p of servers.fileProblems)
    problem({ code: 'bad_mcp_server', path: [], at: { file: p.file, line: p.line, col: p.col }, message: p.message });
  for (const [name, spec] of servers.byName) {
    // Servers of a home .mcp.json that no agent uses are not this recipe's concern.
    if (spec.source !== recipeFile && !used.has(name)) continue;
    for (const p of resolveMcpServer(spec, env).problems) {
      if (spec.source === recipeFile)
        problem({
          code: 'bad_mcp_server',
          path: ['mcp_servers', name, ...p.path],
          message: p.message,
          ...(p.hint ? { hint: p.hint } : {}),
        });
      else
        problem({
          code: 'bad_mcp_server',
          path: [],
          at: { file: spec.source, ...jsonKeyPosition(spec.source, name) },
          message: p.message,
          ...(p.hint ? { hint: p.hint } : {}),
        });
    }
  }
}
