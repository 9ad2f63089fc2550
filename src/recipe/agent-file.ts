// Agent definition files: markdown with a YAML frontmatter (name, description, tools, model),
// the convention of Claude Code and pi agent files. The body is the system prompt. Tool names are
// kept as written here; agent-tools.ts says what each means. Claude Code's further keys are
// honoured where this runtime has the same thing (maxTurns, disallowedTools, hooks, isolation:
// worktree, mcpServers) and otherwise noted one by one (`notes`: warnings saying what is not
// done and what to use instead); display-only keys (color) are ignored so a file works everywhere.
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { HooksConfigError, parseHooksConfig, type HooksConfig } from '../runtime/command-hooks.js';
import { yamlQuoteHint } from '../tools/frontmatter.js';
import type { RecipeProblem } from './problems.js';
import { readInputText } from '../util/input-files.js';

/** A position in the agent file with what to say there (a warning). */
export interface AgentFileNote {
  line: number;
  col: number;
  message: string;
  hint?: string;
}

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
  /** `maxTurns:` (Claude Code): the agent's cap on model turns per attempt. */
  maxTurns?: number;
  /** `disallowedTools:` as written (Claude Code names), with positions. */
  disallowedTools?: { name: string; line: number; col: number }[];
  /** `hooks:` in Claude Code's format, checked; each hook's source is the file. */
  hooks?: HooksConfig;
  /** `isolation: worktree`: the tasks it runs work in a git worktree per instance unless they say otherwise. */
  isolation?: 'worktree';
  /** Keys with no counterpart here, and the hooks it skips: warnings at their positions. */
  notes: AgentFileNote[];
}

/** Claude Code keys this runtime has no counterpart for, and what to tell the user about each. */
const UNSUPPORTED_KEYS: Record<string, { message: string; hint?: string }> = {
  skills: {
    message: 'skills: names Claude Code skills to preload; they are not loaded from an agent file here',
    hint: "give the skill folders under the agent's skills: in the recipe (paths relative to the recipe folder)",
  },
  permissionMode: {
    message:
      'permissionMode: has no effect here: agents run unattended and never ask; every tool they have runs inside the command sandbox',
    hint: "limit what the agent may do with its tools:, disallowed_tools:, bash: { allow, deny } and the task's writes:",
  },
  memory: {
    message:
      'memory: persistent agent memory is not kept here; each instance starts from its prompt and the summaries of the tasks it needs',
    hint: 'pass what later tasks need through context: summaries or the task board',
  },
  background: {
    message:
      'background: has no effect here: every instance of a run already runs on its own, in parallel where the task graph allows',
  },
  effort: {
    message: 'effort: is not read from an agent file here',
    hint: "set the agent's thinking: in the recipe (off, minimal, low, medium, high, xhigh)",
  },
  initialPrompt: {
    message: 'initialPrompt: is not used here: each task gives the agent its prompt',
    hint: "put the text into the task's prompt:",
  },
};

/** Keys that only change how Claude Code shows the agent: ignored without a word. */
const DISPLAY_KEYS = new Set(['color']);

export type AgentFileResult = { ok: true; agent: AgentFile } | { ok: false; problems: RecipeProblem[] };

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Parses an agent file's text; `file` is used in problem positions. */
export function parseAgentFile(text: string, file: string): AgentFileResult {
  const source = text.replace(/^\uFEFF/, '');
  const m = FRONTMATTER.exec(source);
  if (!m) return { ok: true, agent: { body: source.trim(), toolPositions: [], notes: [] } };
  let yamlText = m[1] ?? '';
  const yamlStart = source.indexOf(yamlText);
  let lc = new LineCounter();
  let doc = parseDocument(yamlText, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  // Claude Code reads `description: Use when: ...` (one line, ": " inside) as text; strict YAML
  // does not. Such lines are read as quoted text, with a warning each (quotedLines).
  const repaired = doc.errors.length > 0 ? quoteColonValues(yamlText) : undefined;
  if (repaired) {
    const rlc = new LineCounter();
    const rdoc = parseDocument(repaired.text, { lineCounter: rlc, prettyErrors: true, uniqueKeys: true });
    if (rdoc.errors.length === 0) {
      yamlText = repaired.text;
      lc = rlc;
      doc = rdoc;
    }
  }
  const quotedLines = doc.errors.length === 0 && repaired && yamlText === repaired.text ? repaired.lines : [];
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
  if (doc.contents === null) return { ok: true, agent: { body, toolPositions: [], notes: [] } };
  if (!isMap(doc.contents)) {
    problem(0, 'frontmatter must be a map of keys (name, description, tools, model)');
    return { ok: false, problems };
  }
  const agent: AgentFile = { body, toolPositions: [], notes: [] };
  const fmLine = source.slice(0, yamlStart).split('\n').length;
  for (const q of quotedLines)
    agent.notes.push({
      line: fmLine + q.index,
      col: q.key.length + 3,
      message: `frontmatter "${q.key}": its value holds ": ", which YAML reads as a nested key; it is read as one line of text, as Claude Code does`,
      hint: `quote the value: ${q.key}: '...' (double any ' inside)`,
    });
  /** "read, grep" (Claude Code / pi) or a YAML list; undefined when empty. */
  const nameList = (key: string, value: unknown, offset: number): { name: string; offset: number }[] | undefined => {
    if (value === null || (isScalar(value) && (value.value === null || value.value === ''))) return undefined;
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
            `frontmatter "${key}" entries must be tool names`,
          );
      }
    } else {
      problem(offset, `frontmatter "${key}" must be a comma-separated list or a YAML list`);
    }
    return items;
  };
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
    } else if (key === 'maxTurns' || key === 'max_turns') {
      if (isScalar(value) && value.value === null) continue;
      if (!isScalar(value) || typeof value.value !== 'number' || !Number.isInteger(value.value) || value.value < 0)
        problem(offset, `frontmatter "${key}" must be a whole number of model turns (0: no cap)`);
      else agent.maxTurns = value.value;
    } else if (key === 'disallowedTools' || key === 'disallowed_tools') {
      const items = nameList(key, value, offset);
      if (items) agent.disallowedTools = items.map((i) => ({ name: i.name, ...pos(i.offset) }));
    } else if (key === 'hooks') {
      if (isScalar(value) && value.value === null) continue;
      // The parser hands each warning's key and bare problem as data; the note is worded from them.
      const notes: { message: string; key?: string }[] = [];
      try {
        const hooks = parseHooksConfig(
          (value as { toJSON?: () => unknown } | null)?.toJSON?.() ?? value,
          file,
          (message, hookKey, place) =>
            notes.push({
              message: hookKey && place ? `frontmatter ${hookKey}: ${place.problem}` : message,
              ...(hookKey ? { key: hookKey } : {}),
            }),
        );
        agent.hooks = hooks;
      } catch (err) {
        if (!(err instanceof HooksConfigError)) throw err;
        const at = err.key ? nodeOffset(value, err.key, offset) : offset;
        problem(at, `frontmatter ${err.key ?? 'hooks'}: ${err.problem ?? err.message}`);
      }
      for (const n of notes)
        agent.notes.push({
          ...pos(n.key ? nodeOffset(value, n.key, offset) : offset),
          message: n.message,
        });
    } else if (key === 'isolation') {
      if (isScalar(value) && value.value === 'worktree') agent.isolation = 'worktree';
      else if (!(isScalar(value) && (value.value === null || value.value === 'none')))
        problem(offset, 'frontmatter "isolation" must be worktree (or none)');
    } else if (UNSUPPORTED_KEYS[key] !== undefined) {
      if (isScalar(value) && (value.value === null || value.value === false || value.value === '')) continue;
      agent.notes.push({ ...pos(keyOffset(pair.key, offset)), ...UNSUPPORTED_KEYS[key]! });
    } else if (DISPLAY_KEYS.has(key)) {
    } else if (key === 'strict_tools') {
      if (!isScalar(value) || typeof value.value !== 'boolean')
        problem(offset, 'frontmatter "strict_tools" must be true or false');
      else agent.strictTools = value.value;
    } else if (key === 'tools') {
      const items = nameList(key, value, offset);
      if (!items) continue; // no tools given
      agent.tools = items.map((i) => i.name);
      agent.toolPositions = items.map((i) => ({ name: i.name, ...pos(i.offset) }));
    }
  }
  return problems.length ? { ok: false, problems } : { ok: true, agent };
}

/**
 * The frontmatter with every top-level one-line plain value that holds ": " quoted (the lines
 * Claude Code reads as text but strict YAML rejects); undefined when there is no such line. A
 * value continued on indented lines is left alone (Claude Code fails on those too).
 */
function quoteColonValues(yamlText: string): { text: string; lines: { index: number; key: string }[] } | undefined {
  const lines = yamlText.split('\n');
  const quoted: { index: number; key: string }[] = [];
  lines.forEach((line, i) => {
    const m = /^([A-Za-z_][\w-]*):[ \t]+(.*?)(\r?)$/.exec(line);
    if (!m) return;
    const value = m[2]!.trim();
    if (!value.includes(': ') || /^['"|>[{&*!%@`#]/.test(value)) return;
    if (/^[ \t]+\S/.test(lines[i + 1] ?? '')) return;
    lines[i] = `${m[1]}: ${JSON.stringify(value)}${m[3]}`;
    quoted.push({ index: i, key: m[1]! });
  });
  return quoted.length > 0 ? { text: lines.join('\n'), lines: quoted } : undefined;
}

function keyOffset(key: unknown, fallback: number): number {
  return (key as { range?: number[] } | null)?.range?.[0] ?? fallback;
}

/**
 * Where a hooks key path ("hooks.PreToolUse[0].hooks[1].timeout") points inside the `hooks:`
 * node: the value, or the key itself when the problem is the key (an unknown event or key).
 */
function nodeOffset(hooksNode: unknown, keyPath: string, fallback: number): number {
  const steps = keyPath
    .replace(/^hooks\.?/, '')
    .split(/\.|\[(\d+)\]/)
    .filter((s) => s !== undefined && s !== '');
  let node: unknown = hooksNode;
  let at = fallback;
  for (const step of steps) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === step);
      if (!pair) break;
      at = keyOffset(pair.key, at);
      node = pair.value;
      if (step === steps[steps.length - 1] && pair.value && !isMap(pair.value) && !isSeq(pair.value))
        at = (pair.value as Node).range?.[0] ?? at;
    } else if (isSeq(node)) {
      const item = node.items[Number(step)];
      if (item === undefined) break;
      at = (item as Node).range?.[0] ?? at;
      node = item;
    } else break;
  }
  return at;
}

/** Reads and parses an agent file from disk. */
export function readAgentFile(path: string, displayFile: string = path): AgentFileResult {
  let text: string;
  try {
    text = readInputText(path);
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
