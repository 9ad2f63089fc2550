// Agent definition files: markdown with a YAML frontmatter (name, description, tools, model),
// the convention of Claude Code and pi agent files. The body is the system prompt. Keys other
// tools add (color, ...) are ignored so the same file works everywhere. Tool names are kept as
// written here; agent-tools.ts says what each means.
import { readFileSync } from 'node:fs';
import { LineCounter, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { yamlQuoteHint } from '../tools/frontmatter.js';
import { type RecipeProblem } from './problems.js';

export interface AgentFile {
  name?: string;
  description?: string;
  /** As written; undefined when the file has no `tools:` (or an empty one). */
  tools?: string[];
  /** As written (`inherit`, an alias such as `sonnet`, or a model id). */
  model?: string;
  /** The markdown body: the system prompt. */
  body: string;
  /** Line and column of each tool name in the file, for tool problems. */
  toolPositions: { name: string; line: number; col: number }[];
  /** Line and column of the model value, for model problems. */
  modelPosition?: { line: number; col: number };
  /** `strict_tools: true`: tools that are not available here are errors, not warnings. */
  strictTools?: boolean;
  /**
   * `mcpServers:` (Claude Code): servers by name (defined in the recipe or a .mcp.json), and
   * servers defined inline, each with its position.
   */
  mcpServers?: { name: string; entry?: unknown; line: number; col: number }[];
}

export type AgentFileResult = { ok: true; agent: AgentFile } | { ok: false; problems: RecipeProblem[] };

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Parses an agent file's text; `file` is used in problem positions. */
export function parseAgentFile(text: string, file: string): AgentFileResult {
  const source = text.replace(/^\uFEFF/, '');
  const m = FRONTMATTER.exec(source);
  if (!m) return { ok: true, agent: { body: source.trim(), toolPositions: [] } };
  const yamlText = m[1] ?? '';
  const yamlStart = source.indexOf(yamlText);
  const lc = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  // Frontmatter starts on line 2 of the file (line 1 is the opening ---).
  const pos = (offset: number) => {
    const p = lc.linePos(offset);
    return { line: p.line + source.slice(0, yamlStart).split('\n').length - 1, col: p.col };
  };
  const problems: RecipeProblem[] = [];
  const problem = (offset: number, message: string, hint?: string) =>
    problems.push({ code: 'agent_file', file, ...pos(offset), message, hint });
  // One problem per line: YAML often reports a bad line twice.
  const badLines = new Set<number>();
  for (const err of doc.errors) {
    const line = lc.linePos(err.pos[0]).line;
    if (badLines.has(line)) continue;
    badLines.add(line);
    const hint = err.code === 'TAB_AS_INDENT' ? 'indent with spaces, not tabs' : yamlQuoteHint(yamlText, line);
    problem(
      err.pos[0],
      `frontmatter: invalid YAML: ${(err.message.split('\n')[0] ?? err.code).replace(/ at line \d+, column \d+:?$/, '')}`,
      hint,
    );
  }
  if (problems.length) return { ok: false, problems };

  const body = source.slice(m[0].length).trim();
  if (doc.contents === null) return { ok: true, agent: { body, toolPositions: [] } };
  if (!isMap(doc.contents)) {
    problem(0, 'frontmatter must be a map of keys (name, description, tools, model)');
    return { ok: false, problems };
  }
  const agent: AgentFile = { body, toolPositions: [] };
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const value = pair.value;
    const offset =
      (value as { range?: number[] } | null)?.range?.[0] ?? (pair.key as { range?: number[] }).range?.[0] ?? 0;
    if (key === 'name' || key === 'description' || key === 'model') {
      if (isScalar(value) && value.value === null) continue; // "model:" with nothing after it
      if (!isScalar(value) || typeof value.value !== 'string')
        problem(
          offset,
          `frontmatter "${key}" must be text`,
          key === 'model' ? 'write a model id or alias (sonnet, opus, haiku), or inherit' : undefined,
        );
      else agent[key] = value.value;
      if (key === 'model') agent.modelPosition = pos(offset);
    } else if (key === 'mcpServers' || key === 'mcp_servers') {
      // A list of names and/or {name: config} maps, or one map of name to config.
      const servers: NonNullable<AgentFile['mcpServers']> = [];
      const inline = (name: string, node: unknown, at: number) =>
        servers.push({ name, entry: (node as { toJSON?: () => unknown })?.toJSON?.() ?? node, ...pos(at) });
      const rangeOf = (node: unknown) => (node as { range?: number[] } | null)?.range?.[0] ?? offset;
      if (isSeq(value)) {
        for (const item of value.items) {
          if (isScalar(item) && typeof item.value === 'string')
            servers.push({ name: item.value, ...pos(rangeOf(item)) });
          else if (isMap(item))
            for (const p of item.items) inline(isScalar(p.key) ? String(p.key.value) : '', p.value, rangeOf(p.key));
          else
            problem(
              rangeOf(item),
              'frontmatter "mcpServers" entries must be server names or {name: {command, args} | {type, url}}',
            );
        }
      } else if (isMap(value)) {
        for (const p of value.items) inline(isScalar(p.key) ? String(p.key.value) : '', p.value, rangeOf(p.key));
      } else if (!(isScalar(value) && value.value === null)) {
        problem(
          offset,
          'frontmatter "mcpServers" must be a list of server names or a map of server name to its configuration',
        );
      }
      agent.mcpServers = servers;
    } else if (key === 'strict_tools') {
      if (!isScalar(value) || typeof value.value !== 'boolean')
        problem(offset, 'frontmatter "strict_tools" must be true or false');
      else agent.strictTools = value.value;
    } else if (key === 'tools') {
      if (value === null || (isScalar(value) && (value.value === null || value.value === ''))) continue; // no tools given
      // "read, grep" (Claude Code / pi) or a YAML list.
      const items: { name: string; offset: number }[] = [];
      if (isScalar(value) && typeof value.value === 'string') {
        let at = 0;
        for (const part of value.value.split(',')) {
          const name = part.trim();
          const inRaw = yamlText.indexOf(name, (value.range?.[0] ?? 0) + at);
          if (name) items.push({ name, offset: inRaw >= 0 ? inRaw : offset });
          at += part.length + 1;
        }
      } else if (isSeq(value)) {
        for (const item of value.items) {
          if (isScalar(item) && typeof item.value === 'string')
            items.push({ name: item.value, offset: item.range?.[0] ?? offset });
          else
            problem(
              (item as { range?: number[] }).range?.[0] ?? offset,
              'frontmatter "tools" entries must be tool names',
            );
        }
      } else {
        problem(offset, 'frontmatter "tools" must be a comma-separated list or a YAML list');
      }
      agent.tools = items.map((i) => i.name);
      agent.toolPositions = items.map((i) => ({ name: i.name, ...pos(i.offset) }));
    }
  }
  return problems.length ? { ok: false, problems } : { ok: true, agent };
}

/** Reads and parses an agent file from disk. */
export function readAgentFile(path: string, displayFile: string = path): AgentFileResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return {
      ok: false,
      problems: [
        {
          code: 'missing_file',
          file: displayFile,
          line: 1,
          col: 1,
          message: `cannot read agent file: ${(e as Error).message}`,
        },
      ],
    };
  }
  return parseAgentFile(text, displayFile);
}
