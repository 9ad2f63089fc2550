// Extensions: a module whose default export receives an ExtensionAPI and registers tools (zod
// schemas), hooks (before/after tool call, before compaction, every event) and commands.
//
// Loading: modules are loaded with dynamic import(). `.js`/`.mjs` always work. `.ts`/`.mts` work
// when the process runs under tsx (`node --import tsx`, `npm run dev`, vitest); otherwise they are
// loaded through tsx's tsImport() if tsx is installed, and the error says how to fix it if not.
// Relative paths resolve against the session's cwd.
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AfterToolCallResult, AgentContext, AgentToolResult, AnyAgentTool } from '../agent/types.js';
import type { AssistantMessage, ToolCall } from '../ai/types.js';
import type { CompactionHookDecision } from '../session/compaction-job.js';
import type { CompactionPreparation } from '../session/prepare-compaction.js';
import { compileGlob } from '../tools/glob.js';
import type { AgentSessionEvent } from './session-events.js';

/** What a before_tool_call handler sees. */
export interface ToolCallEvent {
  toolName: string;
  toolCallId: string;
  /** Validated arguments. */
  args: Record<string, unknown>;
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  context: AgentContext;
  /** The session's working directory (relative tool paths resolve against it). */
  cwd: string;
}

export interface ToolResultEvent extends ToolCallEvent {
  result: AgentToolResult;
  isError: boolean;
}

export interface ExtensionHandlers {
  /** Return `{block: true, reason}` to refuse the call; the first block wins. A throw blocks too. */
  before_tool_call: (
    event: ToolCallEvent,
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
  ) => { block?: boolean; reason?: string } | void | Promise<{ block?: boolean; reason?: string } | void>;
  /** Return fields to replace in the result; handlers are chained in load order. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
  after_tool_call: (event: ToolResultEvent) => AfterToolCallResult | void | Promise<AfterToolCallResult | void>;
  /** Cancel the compaction, or supply its summary; the first cancel wins, else the last summary. */
  before_compact: (event: {
    preparation: CompactionPreparation;
    signal?: AbortSignal;
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (typed `void`) must fit; `undefined` would refuse it
  }) => CompactionHookDecision | void | Promise<CompactionHookDecision | void>;
  /** Every session event, in order; awaited before the next tool call and before prompt() returns. */
  event: (event: AgentSessionEvent) => void | Promise<void>;
}

export type ExtensionEventName = keyof ExtensionHandlers;

/** What a command handler gets: the live session (typed loosely here to keep this file below the session class). */
export interface ExtensionCommandContext {
  cwd: string;
  /** The AgentSession running the command. */
  session: unknown;
  /** Writes a line where the host shows notices (stderr for the CLI). */
  notify(message: string): void;
}

export interface ExtensionCommand {
  description?: string;
  handler(args: string, ctx: ExtensionCommandContext): void | Promise<void>;
}

/** The object an extension's default export receives. */
export interface ExtensionAPI {
  /** The session's working directory. */
  readonly cwd: string;
  /** Options given with the extension (SDK or recipe); empty for `--extension PATH`. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Where the extension was loaded from (or its name for an in-process factory). */
  readonly source: string;
  registerTool(tool: AnyAgentTool): void;
  /** A command the user runs by prompting `/name args`. */
  registerCommand(name: string, command: ExtensionCommand): void;
  on<E extends ExtensionEventName>(event: E, handler: ExtensionHandlers[E]): void;
  /** Glob test with the tools layer's matcher (`*`, `**`, `?`, `[...]`, `{a,b}`); paths use `/`. */
  matchesGlob(pattern: string, path: string): boolean;
}

export type ExtensionFactory = (api: ExtensionAPI) => void | Promise<void>;

/** A module path, a path with options, or an in-process factory. */
export type ExtensionSpec =
  | string
  | { path: string; options?: Record<string, unknown> }
  | { factory: ExtensionFactory; name?: string; options?: Record<string, unknown> };

export interface RegisteredHandler<E extends ExtensionEventName> {
  source: string;
  handler: ExtensionHandlers[E];
}

/** Everything the loaded extensions registered, in load order. */
export interface LoadedExtensions {
  sources: string[];
  tools: AnyAgentTool[];
  commands: Map<string, ExtensionCommand & { source: string }>;
  handlers: { [E in ExtensionEventName]: RegisteredHandler<E>[] };
}

/** An extension that cannot be loaded (missing file, no default export, factory threw). */
export class ExtensionLoadError extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(message);
    this.name = 'ExtensionLoadError';
  }
}

export function emptyExtensions(): LoadedExtensions {
  return {
    sources: [],
    tools: [],
    commands: new Map(),
    handlers: { before_tool_call: [], after_tool_call: [], before_compact: [], event: [] },
  };
}

const globCache = new Map<string, RegExp>();
function matchesGlob(pattern: string, path: string): boolean {
  let re = globCache.get(pattern);
  if (!re) {
    re = compileGlob(pattern);
    globCache.set(pattern, re);
  }
  return re.test(path.split('\\').join('/'));
}

function isTypeScript(path: string): boolean {
  return /\.(c|m)?tsx?$/.test(path);
}

async function importModule(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (!isTypeScript(path) || code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
  }
  // A .ts file outside tsx: load it through tsx's API when tsx is installed.
  let tsImport: (specifier: string, parent: string) => Promise<unknown>;
  try {
    // The specifier is a variable so TypeScript does not require tsx's types in builds without it.
    const api = 'tsx/esm/api';
    ({ tsImport } = (await import(api)) as { tsImport: typeof tsImport });
  } catch {
    throw new Error(
      'it is a TypeScript file and tsx is not installed. Compile the extension to .js, or run with tsx (`npm i -D tsx`, then `node --import tsx ...`).',
    );
  }
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Loads extensions in order. Throws ExtensionLoadError naming the failing one. */
export async function loadExtensions(specs: readonly ExtensionSpec[], cwd: string): Promise<LoadedExtensions> {
  const loaded = emptyExtensions();
  for (const spec of specs) {
    let factory: ExtensionFactory;
    let source: string;
    let options: Record<string, unknown> = {};
    if (typeof spec === 'string' || 'path' in spec) {
      const raw = typeof spec === 'string' ? spec : spec.path;
      options = typeof spec === 'string' ? {} : (spec.options ?? {});
      source = isAbsolute(raw) ? raw : resolve(cwd, raw);
      let mod: Record<string, unknown>;
      try {
        mod = await importModule(source);
      } catch (err) {
        // Only a missing extension file is "does not exist"; a package or file it imports that cannot
        // be found names itself in the message ("Cannot find package 'x' imported from <extension>").
        const code = (err as { code?: string }).code;
        const why = !existsSync(source)
          ? 'the file does not exist'
          : code === 'ERR_MODULE_NOT_FOUND'
            ? `${describeError(err)} (install it where the extension can resolve it, or fix the import)`
            : describeError(err);
        throw new ExtensionLoadError(source, `Cannot load extension ${source}: ${why}`);
      }
      const candidate = mod.default;
      if (typeof candidate !== 'function') {
        throw new ExtensionLoadError(
          source,
          `Extension ${source} has no default export function; write \`export default function (api) { ... }\`.`,
        );
      }
      factory = candidate as ExtensionFactory;
    } else {
      factory = spec.factory;
      source = spec.name ?? (factory.name || `extension #${loaded.sources.length + 1}`);
      options = spec.options ?? {};
    }
    const api: ExtensionAPI = {
      cwd,
      options,
      source,
      registerTool(tool) {
        if (!tool || typeof tool.name !== 'string' || typeof tool.execute !== 'function') {
          throw new Error('registerTool needs a tool with a name, a zod `parameters` schema and an execute function');
        }
        loaded.tools.push(tool);
      },
      registerCommand(name, command) {
        const clean = name.replace(/^\//, '');
        if (!/^[a-z0-9][a-z0-9:_-]*$/i.test(clean))
          throw new Error(`Invalid command name "${name}": use letters, digits, -, _ or :`);
        loaded.commands.set(clean, { ...command, source });
      },
      on(event, handler) {
        const list = loaded.handlers[event] as RegisteredHandler<typeof event>[] | undefined;
        if (!list)
          throw new Error(
            `Unknown extension event "${String(event)}". Known events: ${Object.keys(loaded.handlers).join(', ')}.`,
          );
        list.push({ source, handler });
      },
      matchesGlob,
    };
    try {
      await factory(api);
    } catch (err) {
      throw new ExtensionLoadError(source, `Extension ${source} failed while loading: ${describeError(err)}`);
    }
    loaded.sources.push(source);
  }
  return loaded;
}
