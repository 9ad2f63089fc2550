// Command hooks in Claude Code's settings format: the `hooks` object of a settings.json
// ({hooks: {PreToolUse: [{matcher: "Bash|Edit", hooks: [{type: "command", command, timeout}]}]}}),
// checked key by key (an invalid file is an error naming the file and the key), merged from
// several sources, and matched against our tool names. Users bring hooks written for Claude Code,
// so its tool names (Bash, Edit, Read, Glob ...) match our tools too, and our own names keep
// matching; what a hook receives is in Claude Code's shapes (claude-tool-shapes.ts). Running one
// hook is hook-runner.ts; what each event does in a session is hook-session.ts.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { CLAUDE_CODE_NAMES } from './claude-tool-shapes.js';
import { settingsKeyPosition } from './settings-key-position.js';
import { inputExists, readInputText } from '../util/input-files.js';
import { isRecord } from '../util/unknown-value.js';

/** The events a session runs hooks for (SubagentStop is accepted here; orchestrated runs fire it). */
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
  'SessionStart',
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** Claude Code events this runtime does not fire: accepted in a settings file, with a warning. */
const IGNORED_EVENTS = [
  'Notification',
  'PreCompact',
  'PostCompact',
  'SessionEnd',
  'PermissionRequest',
  'PermissionDenied',
  'PostToolUseFailure',
  'StopFailure',
  'SubagentStart',
  'TeammateIdle',
  'TaskCreated',
  'TaskCompleted',
  'ConfigChange',
  'InstructionsLoaded',
  'CwdChanged',
  'FileChanged',
  'WorktreeCreate',
  'WorktreeRemove',
  'Elicitation',
  'ElicitationResult',
];

/** Only these events filter by tool name; Claude Code ignores `matcher` elsewhere, so do we. */
const TOOL_EVENTS: readonly HookEventName[] = ['PreToolUse', 'PostToolUse'];

export const DEFAULT_HOOK_TIMEOUT_SEC = 60;

export interface CommandHook {
  type: 'command';
  command: string;
  /** Seconds before the hook's process group is killed (default 60). */
  timeout?: number;
  /** The file (or recipe) it came from, for messages and events. */
  source?: string;
}

export interface HookMatcherGroup {
  /** Regex on the tool name, matched whole; "" or "*" or absent: every tool. */
  matcher?: string;
  hooks: CommandHook[];
}

export type HooksConfig = Partial<Record<HookEventName, HookMatcherGroup[]>>;

/** A hooks object that cannot be used; `message` names the file and the key. */
export class HooksConfigError extends Error {
  constructor(
    message: string,
    /** The key path inside the hooks object (hooks.PreToolUse[0].matcher), when the problem is in it. */
    readonly key?: string,
    /** The problem without its place, for callers that give the place themselves (file:line:col). */
    readonly problem?: string,
  ) {
    super(message);
    this.name = 'HooksConfigError';
  }
}

/** Where a warning of a settings file points: the file and the line of its key. */
export interface HookWarningPlace {
  /** The warning without its place ("this event is not fired by orchestrate; ..."). */
  problem: string;
  file?: string;
  line?: number;
  col?: number;
}

/**
 * Told about what a hooks object holds that is skipped (an event or hook type not run here);
 * `key` is its path, `place` the bare problem and, for a settings file, its file:line:col.
 */
export type HooksWarn = (message: string, key?: string, place?: HookWarningPlace) => void;

/**
 * Checks a parsed `hooks` object (the value of a settings file's `hooks` key, a recipe's or an
 * agent file's `hooks:`). `where` names its origin in errors ("~/.claude/settings.json").
 * Unsupported Claude Code events are dropped with a warning through `warn`.
 */
export function parseHooksConfig(value: unknown, where: string, warn: HooksWarn = () => {}): HooksConfig {
  const fail = (key: string, problem: string): never => {
    throw new HooksConfigError(`${where}: ${key}: ${problem}`, key, problem);
  };
  if (!isRecord(value)) fail('hooks', `must be an object of events (${HOOK_EVENTS.join(', ')}), got ${kind(value)}`);
  const out: HooksConfig = {};
  for (const [event, groups] of Object.entries(value as Record<string, unknown>)) {
    const key = `hooks.${event}`;
    if (IGNORED_EVENTS.includes(event)) {
      const problem = `this event is not fired by orchestrate; its hooks are ignored (supported: ${HOOK_EVENTS.join(', ')}).`;
      warn(`warning: ${where}: ${key}: ${problem}`, key, { problem });
      continue;
    }
    if (!(HOOK_EVENTS as readonly string[]).includes(event))
      fail(key, `unknown hook event; use one of ${HOOK_EVENTS.join(', ')}`);
    if (!Array.isArray(groups)) fail(key, `must be a list of {matcher, hooks} entries, got ${kind(groups)}`);
    const parsed: HookMatcherGroup[] = [];
    (groups as unknown[]).forEach((group, i) => {
      const gkey = `${key}[${i}]`;
      if (!isRecord(group)) fail(gkey, `must be an object {matcher, hooks: [...]}, got ${kind(group)}`);
      const g = group as Record<string, unknown>;
      for (const k of Object.keys(g))
        if (k !== 'matcher' && k !== 'hooks') fail(`${gkey}.${k}`, 'unknown key; an entry has "matcher" and "hooks"');
      let matcher: string | undefined;
      if (g.matcher !== undefined) {
        if (typeof g.matcher !== 'string')
          fail(`${gkey}.matcher`, `must be a string (a regex on tool names), got ${kind(g.matcher)}`);
        matcher = g.matcher as string;
        const problem = matcherProblem(matcher);
        if (problem) fail(`${gkey}.matcher`, `is not a valid regular expression: ${problem}`);
      }
      if (!Array.isArray(g.hooks))
        fail(`${gkey}.hooks`, `must be a list of {type: "command", command, timeout}, got ${kind(g.hooks)}`);
      const hooks: CommandHook[] = [];
      (g.hooks as unknown[]).forEach((h, j) => {
        const hook = parseCommandHook(h, `${gkey}.hooks[${j}]`, where, fail, warn);
        if (hook) hooks.push(hook);
      });
      parsed.push({ ...(matcher !== undefined ? { matcher } : {}), hooks });
    });
    out[event as HookEventName] = parsed;
  }
  return out;
}

/** Claude Code hook types orchestrate does not run: skipped with a warning, so a real settings file still loads. */
const OTHER_HOOK_TYPES = ['prompt', 'agent', 'http', 'mcp_tool'];
/** Keys of newer Claude Code command hooks that have no effect here: ignored with a warning. */
const IGNORED_HOOK_KEYS = ['async', 'statusMessage', 'once', 'shell'];

function parseCommandHook(
  value: unknown,
  key: string,
  where: string,
  fail: (key: string, problem: string) => never,
  warn: HooksWarn,
): CommandHook | undefined {
  if (!isRecord(value)) fail(key, `must be an object {type: "command", command}, got ${kind(value)}`);
  const h = value as Record<string, unknown>;
  if (typeof h.type === 'string' && OTHER_HOOK_TYPES.includes(h.type)) {
    const problem = `hooks of type "${h.type}" are not run by orchestrate (only "command"); skipped.`;
    warn(`warning: ${where}: ${key}: ${problem}`, key, { problem });
    return undefined;
  }
  if (h.type !== 'command')
    fail(`${key}.type`, `must be "command" (the only hook type orchestrate runs), got ${JSON.stringify(h.type)}`);
  for (const k of Object.keys(h)) {
    if (IGNORED_HOOK_KEYS.includes(k))
      warn(`warning: ${where}: ${key}.${k}: not supported by orchestrate; ignored.`, `${key}.${k}`, {
        problem: 'not supported by orchestrate; ignored.',
      });
    else if (!['type', 'command', 'timeout'].includes(k))
      fail(`${key}.${k}`, 'unknown key; a hook has "type", "command" and "timeout"');
  }
  if (typeof h.command !== 'string' || h.command.trim() === '')
    fail(`${key}.command`, 'must be a non-empty shell command');
  if (h.timeout !== undefined && (typeof h.timeout !== 'number' || !Number.isFinite(h.timeout) || h.timeout <= 0)) {
    fail(`${key}.timeout`, `must be a positive number of seconds, got ${JSON.stringify(h.timeout)}`);
  }
  return {
    type: 'command',
    command: h.command as string,
    ...(h.timeout !== undefined ? { timeout: h.timeout as number } : {}),
    source: where,
  };
}

/** All sources' hooks together, in source order (every matching hook runs). */
export function mergeHooksConfigs(configs: readonly HooksConfig[]): HooksConfig {
  const out: HooksConfig = {};
  for (const c of configs) {
    for (const event of HOOK_EVENTS) {
      const groups = c[event];
      if (groups && groups.length > 0) out[event] = [...(out[event] ?? []), ...groups];
    }
  }
  return out;
}

/** True when the config holds at least one hook. */
export function hasHooks(config: HooksConfig | undefined): boolean {
  return config !== undefined && HOOK_EVENTS.some((e) => (config[e] ?? []).some((g) => g.hooks.length > 0));
}

/** Why a matcher is not a usable regex ("" and "*" mean every tool), or undefined. */
function matcherProblem(matcher: string): string | undefined {
  if (matcher === '' || matcher === '*') return undefined;
  try {
    matcherRegex(matcher);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

function matcherRegex(matcher: string): RegExp {
  return new RegExp(`^(?:${matcher})$`);
}

/** Whether a group's matcher selects `toolName` (our name, or the Claude Code name of the same tool). */
export function matcherMatches(matcher: string | undefined, toolName: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  const re = matcherRegex(matcher);
  return re.test(toolName) || (CLAUDE_CODE_NAMES[toolName] ?? []).some((alias) => re.test(alias));
}

/** The hooks of `event` to run, in order; for tool events only those whose matcher selects `toolName`. */
export function hooksFor(config: HooksConfig, event: HookEventName, toolName?: string): CommandHook[] {
  const out: CommandHook[] = [];
  for (const group of config[event] ?? []) {
    if (TOOL_EVENTS.includes(event) && !matcherMatches(group.matcher, toolName ?? '')) continue;
    out.push(...group.hooks);
  }
  return out;
}

/**
 * Reads a settings file (Claude Code's settings.json shape, or a file holding only
 * {hooks: ...}); undefined when it does not exist or has no `hooks` key. Bad JSON or a bad hooks
 * object is a HooksConfigError naming the file.
 */
export function loadHooksFile(path: string, warn?: HooksWarn): HooksConfig | undefined {
  if (!inputExists(path)) return undefined;
  let data: unknown;
  let text = '';
  try {
    text = readInputText(path);
    data = JSON.parse(text);
  } catch (err) {
    throw new HooksConfigError(`${path}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isRecord(data))
    throw new HooksConfigError(
      `${path}: must hold a JSON object (a settings file with a "hooks" key), got ${kind(data)}`,
    );
  const hooks = (data as Record<string, unknown>).hooks;
  if (hooks === undefined) return undefined;
  // A warning names the line of its key (file:line:col), as the problems of a recipe do.
  const located: HooksWarn = (message, key, place) => {
    const at = key ? settingsKeyPosition(text, key) : undefined;
    if (!at || !place) return warn?.(message, key, place ? { ...place, file: path } : undefined);
    warn?.(`${path}:${at.line}:${at.col}: warning: ${key}: ${place.problem}`, key, { ...place, file: path, ...at });
  };
  return parseHooksConfig(hooks, path, located);
}

export interface HookSourceOptions {
  /** The project folder (the single agent's cwd): its .orchestrate/ and .claude/ settings are read. */
  cwd: string;
  /** orchestrate's home (~/.orchestrate or ORCHESTRATE_HOME). */
  home: string;
  /** Claude Code's user folder (default ~/.claude). */
  claudeHome?: string;
  /** Further files (--hooks FILE), read after the settings files. */
  files?: string[];
  warn?: (message: string) => void;
}

/** The settings files hooks are read from, in order: the user's side, then the project's. */
export function hookSettingsFiles(o: Pick<HookSourceOptions, 'cwd' | 'home' | 'claudeHome'>): string[] {
  const claudeHome = o.claudeHome ?? join(homedir(), '.claude');
  const cwd = resolve(o.cwd);
  return [
    join(o.home, 'settings.json'),
    join(claudeHome, 'settings.json'),
    join(cwd, '.orchestrate', 'settings.json'),
    join(cwd, '.claude', 'settings.json'),
    join(cwd, '.claude', 'settings.local.json'),
  ];
}

/** The hooks of `orchestrate agent`: every settings file that exists, then the --hooks files. */
export function loadHookSources(o: HookSourceOptions): HooksConfig {
  const configs: HooksConfig[] = [];
  const seen = new Set<string>();
  for (const file of hookSettingsFiles(o)) {
    if (seen.has(file)) continue; // the home folder as the project: read once
    seen.add(file);
    const c = loadHooksFile(file, o.warn);
    if (c) configs.push(c);
  }
  for (const f of o.files ?? []) {
    const file = resolve(o.cwd, f);
    if (!existsSync(file)) throw new HooksConfigError(`--hooks ${f}: the file ${file} does not exist.`);
    const c = loadHooksFile(file, o.warn);
    if (!c)
      throw new HooksConfigError(
        `${file}: has no "hooks" key; write {"hooks": {"PreToolUse": [...]}} as in Claude Code's settings.json.`,
      );
    configs.push(c);
  }
  return mergeHooksConfigs(configs);
}

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}
