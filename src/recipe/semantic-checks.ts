// Checks that need the whole recipe: task ids and needs, cycles, agents, tools, files, providers,
// MCP servers; each task's own checks are in task-checks.ts, an agent file's in agent-file-checks.ts. They read the raw YAML data defensively, so they still run when
// the schema found problems elsewhere and the user sees every mistake in one pass.
import { isAbsolute, resolve } from 'node:path';
import { ScriptFileError, parseScript } from '../ai/scripted-script.js';
import { BUILTIN_PROVIDERS, findProvider } from '../ai/provider-config.js';
import { readAgentFile } from './agent-file.js';
import { type ReferenceContext, type TaskRefInfo, checkTemplate } from './expressions.js';
import { hasExpression } from './expression-parser.js';
import { checkImpossiblePaths } from './path-checks.js';
import type { PendingProblem } from './problems.js';
import { agentServerNames, checkAgentMcp, checkMcpEntries, recipeMcpServers } from './mcp-servers.js';
import { BUILTIN_TOOLS } from './schema.js';
import { describePath } from './schema-issues.js';
import type { SourcePosition } from './source-map.js';
import { suggestionHint } from './suggest.js';
import { findCycles } from './task-graph.js';
import { checkAgentFile } from './agent-file-checks.js';
import { checkAgentFileKeys } from './agent-file-keys.js';
import { checkRecipeHooks } from './hook-checks.js';
import { checkBoardSeeds } from './board-checks.js';
import { checkFallbacks } from './fallback.js';
import { modelKey } from './normalize.js';
import { checkTask, needsOf, templateFields, type TaskCheckContext, type TaskEntry } from './task-checks.js';
import { inputExists, readInputText } from '../util/input-files.js';
import { isRecord, stringOf } from '../util/unknown-value.js';

type Path = (string | number)[];
type Obj = Record<string, unknown>;

export interface SemanticContext {
  /** The recipe's folder: relative paths resolve against it. */
  dir: string;
  /** Line and column of a document path (for "first defined on line N" hints). */
  locate: (path: Path) => SourcePosition;
  /** How to show another file's path in problems (relative to the user's cwd). */
  displayPath: (absolute: string) => string;
  /** The recipe file (MCP servers defined in it are reported at their key). */
  file?: string;
  /** The environment MCP server entries expand against (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Finds strings with `${{` where nothing evaluates them (agent fields, output_schema, ...). */
function misplacedExpressions(
  value: unknown,
  path: Path,
  allowed: Set<string>,
  out: PendingProblem[],
  raw: unknown,
): void {
  if (typeof value === 'string') {
    if (hasExpression(value) && !allowed.has(JSON.stringify(path))) {
      out.push({
        code: 'expression_here',
        path,
        offset: value.indexOf('${{'),
        message: `${describePath(path, raw)}: expressions are not evaluated here`,
        hint: 'expressions work in prompt, run, cwd, key, for_each, writes, verify and env; write $${{ for a literal ${{',
      });
    }
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) misplacedExpressions(v, [...path, i], allowed, out, raw);
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) misplacedExpressions(v, [...path, k], allowed, out, raw);
  }
}

export function checkSemantics(raw: unknown, ctx: SemanticContext): PendingProblem[] {
  const out: PendingProblem[] = [];
  if (!isRecord(raw)) return out;
  const problem = (p: PendingProblem) => out.push(p);
  const fileExists = (p: string) => inputExists(isAbsolute(p) ? p : resolve(ctx.dir, p));

  const inputs = isRecord(raw.inputs) ? raw.inputs : {};
  const inputNames = Object.keys(inputs);
  const agents = isRecord(raw.agents) ? raw.agents : {};
  const agentNames = Object.keys(agents);
  const defaults = isRecord(raw.defaults) ? raw.defaults : {};
  const rawTasks = Array.isArray(raw.tasks) ? raw.tasks : [];
  out.push(...checkImpossiblePaths(raw)); // NUL bytes and overlong paths (path-checks.ts)
  out.push(...checkBoardSeeds(raw.board)); // the task board's seeds (board-checks.ts)
  // fallback: lists of agents and providers (fallback.ts)
  const declaredModels = new Set(Object.keys(isRecord(raw.models) ? raw.models : {}).map(modelKey));
  out.push(...checkFallbacks(raw, (id) => declaredModels.has(modelKey(id))));

  // ---- inputs ----
  for (const [name, def] of Object.entries(inputs)) {
    if (!isRecord(def)) continue;
    const type = stringOf(def.type);
    const dflt = def.default;
    if (type && dflt !== undefined) {
      const ok =
        type === 'list' ? Array.isArray(dflt) : type === 'string' ? typeof dflt === 'string' : typeof dflt === type;
      if (!ok)
        problem({
          code: 'input',
          path: ['inputs', name, 'default'],
          message: `input "${name}" is of type ${type} but its default is not`,
          hint: type === 'list' ? 'write the default as a list: [a, b]' : `give a ${type} default, or change type`,
        });
    }
    if (def.required === true && dflt !== undefined) {
      problem({
        code: 'conflict',
        path: ['inputs', name, 'required'],
        key: true,
        message: `input "${name}" is required but has a default`,
        hint: 'remove the default, or remove required: true',
      });
    }
  }

  // ---- providers: every provider named must be built in, a preset, or declared ----
  const declaredProviders = isRecord(raw.providers) ? Object.keys(raw.providers) : [];
  const checkProvider = (value: unknown, path: Path): void => {
    const p = stringOf(value);
    if (p === undefined || p === 'anthropic' || p === 'scripted' || declaredProviders.includes(p) || findProvider(p))
      return;
    const known = ['anthropic', 'scripted', ...BUILTIN_PROVIDERS.map((b) => b.name), ...declaredProviders];
    problem({
      code: 'unknown_provider',
      path,
      message: `unknown provider "${p}"`,
      hint: `use one of ${known.join(', ')}, or declare it under providers: {${p}: {type: openai-compatible, base_url: ...}}`,
    });
  };
  checkProvider(raw.provider, ['provider']);
  if (isRecord(raw.agents))
    for (const [n, a] of Object.entries(raw.agents))
      if (isRecord(a)) checkProvider(a.provider, ['agents', n, 'provider']);
  if (isRecord(raw.tasks))
    for (const [n, t] of Object.entries(raw.tasks))
      if (isRecord(t)) checkProvider(t.provider, ['tasks', n, 'provider']);

  // ---- run-level files and provider ----
  // Script files are parsed now so a broken offline script fails validation, not the run.
  const checkScript = (rel: string, path: Path) => {
    const abs = resolve(ctx.dir, rel);
    if (!inputExists(abs)) {
      problem({
        code: 'missing_file',
        path,
        message: `script file not found: ${rel}`,
        hint: `looked for ${ctx.displayPath(abs)}; paths are relative to the recipe folder`,
      });
      return;
    }
    try {
      parseScript(readInputText(abs), ctx.displayPath(abs));
    } catch (e) {
      const lines = e instanceof ScriptFileError ? e.problems : [(e as Error).message];
      for (const line of lines) {
        const m = /^(.*?):(\d+):(\d+): ([\s\S]*)$/.exec(line);
        const at = m ? { file: m[1]!, line: Number(m[2]), col: Number(m[3]) } : undefined;
        problem({
          code: 'bad_script',
          path,
          at,
          message: `script: ${m ? m[4] : line.replace(/^[^:]*: /, '')}`,
          hint: 'see the script format in src/ai/scripted-script.ts',
        });
      }
    }
  };
  const runScript = stringOf(raw.script);
  if (runScript !== undefined) checkScript(runScript, ['script']);
  // provider: scripted replays a script file; an agent without one (here or run-level) could not run.
  if (stringOf(raw.provider) === 'scripted' && runScript === undefined) {
    const withoutScript = agentNames.filter(
      (n) =>
        isRecord(agents[n]) &&
        stringOf((agents[n] as Obj).provider) === undefined &&
        stringOf((agents[n] as Obj).script) === undefined,
    );
    if (agentNames.length === 0 || withoutScript.length > 0) {
      problem({
        code: 'missing_key',
        path: ['provider'],
        message: 'provider: scripted needs a script file',
        hint: 'add script: script.yaml (a list of scripted model turns), here or on each agent',
      });
    }
  }

  // ---- agents ----
  for (const name of agentNames) {
    const a = agents[name];
    if (!isRecord(a)) continue;
    const base: Path = ['agents', name];
    const hasExtensions = Array.isArray(a.extensions) && a.extensions.length > 0;
    const checkTool = (tool: string, path: Path | undefined, at?: PendingProblem['at']) => {
      if (hasExtensions || (BUILTIN_TOOLS as readonly string[]).includes(tool) || tool.trim().startsWith('mcp__'))
        return;
      problem({
        code: 'unknown_tool',
        path: path ?? base,
        at,
        message: `agent "${name}" uses unknown tool "${tool}"`,
        hint: suggestionHint(tool, BUILTIN_TOOLS, 'tools'),
      });
    };
    if (a.system !== undefined && a.system_file !== undefined) {
      problem({
        code: 'conflict',
        path: [...base, 'system_file'],
        key: true,
        message: `agent "${name}" has both system and system_file`,
        hint: 'keep one: inline text (system) or a markdown file (system_file)',
      });
    }
    const systemFile = stringOf(a.system_file);
    if (systemFile !== undefined) {
      const abs = resolve(ctx.dir, systemFile);
      if (!inputExists(abs)) {
        problem({
          code: 'missing_file',
          path: [...base, 'system_file'],
          message: `agent file not found: ${systemFile}`,
          hint: `looked for ${ctx.displayPath(abs)}; paths are relative to the recipe folder`,
        });
      } else {
        const parsed = readAgentFile(abs, ctx.displayPath(abs));
        if (!parsed.ok)
          for (const p of parsed.problems)
            problem({
              code: p.code,
              path: base,
              message: p.message,
              hint: p.hint,
              at: { file: p.file, line: p.line, col: p.col },
            });
        else {
          checkAgentFile(name, a, parsed.agent, ctx.displayPath(abs), raw, checkTool, problem);
          checkAgentFileKeys(name, a, parsed.agent, ctx.displayPath(abs), problem); // maxTurns, hooks, skills ...
        }
      }
    }
    if (Array.isArray(a.tools))
      for (const [i, t] of a.tools.entries()) if (typeof t === 'string') checkTool(t, [...base, 'tools', i]);
    const agentScript = stringOf(a.script);
    if (agentScript !== undefined) checkScript(agentScript, [...base, 'script']);
    if (stringOf(a.provider) === 'scripted' && agentScript === undefined && runScript === undefined) {
      problem({
        code: 'missing_key',
        path: [...base, 'provider'],
        message: `agent "${name}" uses provider: scripted but has no script`,
        hint: 'add script: <file> to the agent or to the recipe',
      });
    }
    for (const listKey of ['skills', 'extensions'] as const) {
      const list = a[listKey];
      if (Array.isArray(list))
        for (const [i, p] of list.entries())
          if (typeof p === 'string' && !fileExists(p))
            problem({
              code: 'missing_file',
              path: [...base, listKey, i],
              message: `${listKey === 'skills' ? 'skill' : 'extension'} not found: ${p}`,
              hint: 'paths are relative to the recipe folder',
            });
    }
  }

  // ---- MCP servers: names agents use, entries that cannot start (bad URL, missing ${VAR}) ----
  const recipeEnv = isRecord(raw.env)
    ? Object.fromEntries(
        Object.entries(raw.env)
          .filter(([, v]) => typeof v !== 'object')
          .map(([k, v]) => [k, String(v)]),
      )
    : {};
  const mcpEnv = { ...(ctx.env ?? process.env), ...recipeEnv };
  const recipeFile = ctx.file ?? resolve(ctx.dir, 'recipe.yaml');
  const mcp = recipeMcpServers(raw, ctx.dir, recipeFile, mcpEnv);
  const usedServers = new Set<string>();
  for (const name of agentNames) {
    const a = agents[name];
    if (!isRecord(a)) continue;
    const systemFile = stringOf(a.system_file);
    const abs = systemFile !== undefined ? resolve(ctx.dir, systemFile) : undefined;
    const parsed = abs !== undefined && inputExists(abs) ? readAgentFile(abs, ctx.displayPath(abs)) : undefined;
    const file = parsed?.ok ? { agent: parsed.agent, shown: ctx.displayPath(abs!) } : undefined;
    checkAgentMcp(name, a, file, mcp, problem);
    for (const s of agentServerNames(a, file?.agent, mcp).names) usedServers.add(s);
  }
  if (agentNames.length === 0) for (const s of mcp.defaults) usedServers.add(s);
  checkMcpEntries(mcp, mcpEnv, recipeFile, usedServers, problem);

  // ---- command hooks: the recipe's, the agents', the user's settings files (hook-checks.ts) ----
  checkRecipeHooks(raw, { dir: ctx.dir, ...(ctx.env ? { env: ctx.env } : {}) }, problem);

  // ---- task ids ----
  const tasks: TaskEntry[] = [];
  const firstIndex = new Map<string, number>();
  rawTasks.forEach((t, index) => {
    if (!isRecord(t)) return;
    const id = stringOf(t.id);
    if (id === undefined) return;
    const prev = firstIndex.get(id);
    if (prev !== undefined) {
      const at = ctx.locate(['tasks', prev, 'id']);
      problem({
        code: 'duplicate_task',
        path: ['tasks', index, 'id'],
        message: `duplicate task id "${id}"`,
        hint: `the first "${id}" is on line ${at.line}; task ids must be unique`,
      });
      return;
    }
    firstIndex.set(id, index);
    tasks.push({ index, id, raw: t, needs: needsOf(t) });
  });
  const taskIds = tasks.map((t) => t.id);

  // ---- needs and cycles ----
  const graph = new Map<string, string[]>();
  for (const t of tasks) {
    const valid: string[] = [];
    for (const n of t.needs) {
      if (n.id === t.id) {
        problem({
          code: 'cycle',
          path: ['tasks', t.index, ...n.path],
          message: `task "${t.id}" needs itself`,
          hint: 'remove it from needs',
        });
      } else if (!firstIndex.has(n.id)) {
        problem({
          code: 'unknown_task',
          path: ['tasks', t.index, ...n.path],
          message: `task "${t.id}" needs unknown task "${n.id}"`,
          // A task never needs itself: it is no candidate.
          hint: suggestionHint(
            n.id,
            taskIds.filter((id) => id !== t.id),
            'task ids',
          ),
        });
      } else if (!valid.includes(n.id)) {
        valid.push(n.id);
      }
    }
    graph.set(t.id, valid);
  }
  for (const cycle of findCycles(graph)) {
    const from = tasks.find((t) => t.id === cycle[0])!;
    const edge = from.needs.find((n) => n.id === cycle[1]);
    problem({
      code: 'cycle',
      path: ['tasks', from.index, ...(edge?.path ?? ['needs'])],
      message: `needs form a cycle: ${cycle.join(' -> ')}`,
      hint: 'remove one of these needs so the tasks can run in order',
    });
  }

  // ---- per-task checks ----
  const refInfo = new Map<string, TaskRefInfo>();
  for (const t of tasks) {
    const output =
      stringOf(t.raw.output) === 'json' || (t.raw.output === undefined && isRecord(t.raw.output_schema))
        ? 'json'
        : 'text';
    refInfo.set(t.id, { output, fansOut: t.raw.for_each !== undefined });
  }
  const defaultAgent = stringOf(defaults.agent);
  if (defaultAgent !== undefined && !agentNames.includes(defaultAgent)) {
    problem({
      code: 'unknown_agent',
      path: ['defaults', 'agent'],
      message: `defaults name unknown agent "${defaultAgent}"`,
      hint: suggestionHint(defaultAgent, agentNames, 'agents'),
    });
  }
  const taskCtx: TaskCheckContext = { agentNames, defaultAgent, defaults, inputNames, refInfo, graph };
  for (const t of tasks) checkTask(t, taskCtx, problem);

  // ---- run-level and defaults templates (inputs and env only) ----
  const staticCtx: ReferenceContext = {
    inputs: inputNames,
    tasks: refInfo,
    reachable: new Set(),
    staticOnly: 'run-level env and defaults are set before any task runs',
  };
  const allowed = new Set<string>();
  const staticFields: Path[] = [];
  if (isRecord(raw.env)) for (const k of Object.keys(raw.env)) staticFields.push(['env', k]);
  if (typeof defaults.cwd === 'string') staticFields.push(['defaults', 'cwd']);
  if (isRecord(defaults.env)) for (const k of Object.keys(defaults.env)) staticFields.push(['defaults', 'env', k]);
  for (const f of templateFields(defaults)) if (f.path[0] === 'verify') staticFields.push(['defaults', ...f.path]);
  for (const path of staticFields) {
    allowed.add(JSON.stringify(path));
    const text = path.reduce<unknown>(
      (v, k) => (isRecord(v) || Array.isArray(v) ? (v as Record<string | number, unknown>)[k] : undefined),
      raw,
    );
    if (typeof text !== 'string') continue;
    for (const issue of checkTemplate(text, staticCtx))
      problem({
        code: issue.code,
        path,
        offset: issue.offset,
        message: `${path.join('.')}: ${issue.message}`,
        hint: issue.hint,
      });
  }
  for (const t of tasks)
    for (const f of templateFields(t.raw)) allowed.add(JSON.stringify(['tasks', t.index, ...f.path]));
  misplacedExpressions(raw, [], allowed, out, raw);

  // ---- secrets ----
  if (Array.isArray(raw.secrets) && isRecord(raw.env)) {
    raw.secrets.forEach((s) => {
      if (
        typeof s === 'string' &&
        isRecord(raw.env) &&
        raw.env[s] !== undefined &&
        !hasExpression(String(raw.env[s]))
      ) {
        problem({
          code: 'conflict',
          path: ['env', s],
          key: true,
          message: `secret ${s} has a value written in the recipe`,
          hint: 'secrets come from the environment at run time; remove it from env',
        });
      }
    });
  }
  return out;
}
