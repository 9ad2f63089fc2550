// Tool names of MCP tools: `mcp__<server>__<tool>`, the names Claude Code agent files already
// use. Providers accept at most 64 characters of [A-Za-z0-9_-], so other characters become `_`
// and a longer name is cut and ends in a short hash of the real server and tool names; the
// table a tool source keeps maps every exposed name back to its server and tool. Patterns
// (`mcp__github__*`, `mcp__github__create_issue`) select tools for allow and deny lists.
import { createHash } from 'node:crypto';
import { MCP_DEFAULTS } from './config.js';

export const MCP_TOOL_PREFIX = 'mcp__';

function clean(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, '_');
}

function hashOf(text: string, salt: number): string {
  return createHash('sha256').update(`${salt}\0${text}`).digest('hex').slice(0, 8);
}

/**
 * The provider-safe name of `tool` on `server`, unique among `taken` (which it is added to).
 * A name that fits and is free is used as is; otherwise it is cut to leave room for `_<hash>`.
 */
export function mcpToolName(
  server: string,
  tool: string,
  taken: Set<string>,
  max: number = MCP_DEFAULTS.maxToolNameLength,
): string {
  const full = `${MCP_TOOL_PREFIX}${clean(server)}__${clean(tool)}`;
  let name = full;
  for (let salt = 0; name.length > max || taken.has(name); salt++) {
    const suffix = `_${hashOf(`${server}\0${tool}`, salt)}`;
    name = full.slice(0, Math.min(full.length, max - suffix.length)) + suffix;
  }
  taken.add(name);
  return name;
}

/** The server a written `mcp__<server>__...` name or pattern refers to (undefined for other names). */
export function serverOfToolName(name: string): string | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const end = rest.indexOf('__');
  const server = end === -1 ? rest : rest.slice(0, end);
  return server === '' || server.includes('*') ? undefined : server;
}

function patternRegex(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

/** Whether a tool (by its exposed or its unshortened name) matches any of the patterns. */
export function matchesAny(patterns: readonly string[], names: readonly string[]): boolean {
  return patterns.some((p) => {
    const re = patternRegex(p);
    return names.some((n) => re.test(n));
  });
}

/** `mcp__github` alone (Claude Code's way of naming every tool of a server) means `mcp__github__*`. */
export function normalizePattern(pattern: string): string {
  const t = pattern.trim();
  const rest = t.slice(MCP_TOOL_PREFIX.length);
  return t.startsWith(MCP_TOOL_PREFIX) && rest !== '' && !rest.includes('__') && !rest.includes('*') ? `${t}__*` : t;
}
