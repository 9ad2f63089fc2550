// The tools of `orchestrate mcp serve` as one table: each tool is a name, a description, a zod
// input shape (the SDK derives the JSON Schema clients see from it) and a handler. Adding a tool
// (approve / reject of the approval gates, say) is one more entry in tools.ts. Handlers report a
// user's mistake by throwing ToolError; registerTools turns that, and any other throw, into an MCP
// tool error (isError) the calling agent can act on, so the server never crashes on a call.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { RunLauncher } from '../service/run-launcher.js';

/** What every tool may use: where the server runs and how it starts runs. */
export interface ServerContext {
  /** Folder relative paths (recipes, run_dir) resolve against: the server's working folder. */
  cwd: string;
  env: Record<string, string | undefined>;
  /** `mcp serve --run-dir`, resolved; tools default to `<cwd>/.orchestrate/runs` without it. */
  runsDir?: string;
  /** A waiting tool sends progress at least this often. */
  progressMs: number;
  launcher: RunLauncher;
  /** A line for the server's log (stderr: stdout carries the protocol). */
  log: (line: string) => void;
  /** The connected client's name as it introduced itself (e.g. claude-code), for the run log's `by`. */
  clientName: () => string | undefined;
}

/** One call of a tool: the SDK's request context (abort signal, progress token, notifications). */
export type ToolCall = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a handler returns: the text the calling model reads, and the same as data when it has a shape. */
export interface ToolReply {
  text: string;
  data?: Record<string, unknown>;
}

/** A mistake of the caller (unknown run, bad recipe): becomes an isError result with this text. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

export interface OrchestrateTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  annotations?: ToolAnnotations;
  handler: (args: unknown, call: ToolCall, ctx: ServerContext) => Promise<ToolReply>;
}

/** A table entry whose handler sees its arguments typed from its zod shape. */
export function defineTool<S extends z.ZodRawShape>(tool: {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations?: ToolAnnotations;
  handler: (args: z.infer<z.ZodObject<S>>, call: ToolCall, ctx: ServerContext) => Promise<ToolReply>;
}): OrchestrateTool {
  const input = z.object(tool.input).strict();
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    input,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    // The SDK has already validated the arguments against `input`; parse again for the types
    // (and so a handler called directly gets the same checks).
    handler: (args, call, ctx) => tool.handler(input.parse(args) as z.infer<z.ZodObject<S>>, call, ctx),
  };
}

/** A data reply: the JSON the model reads, and the same object as structured content. */
export function dataReply(data: Record<string, unknown>): ToolReply {
  return { text: JSON.stringify(data, null, 2), data };
}

function toResult(reply: ToolReply): CallToolResult {
  return { content: [{ type: 'text', text: reply.text }], ...(reply.data ? { structuredContent: reply.data } : {}) };
}

/**
 * A message of the layers below in the words of this server's tools: they speak to the command
 * line (`--set name=...`, `--run-dir`, "the current folder", `export VAR=...`), and a calling agent
 * has arguments (`inputs`, `run_dir`) and a server whose working folder and environment are not its own.
 */
export function inToolTerms(text: string, cwd: string): string {
  return text
    .replace(/--set ([\w-]+)=<(\w+)>/g, 'inputs: {"$1": <$2>}')
    .replace(/--set ([\w-]+)(=\S*)?:/g, 'inputs.$1:')
    .replace(/without --provider scripted/g, 'with a provider other than "scripted"')
    .replace(/--provider scripted/g, 'provider: "scripted"')
    .replace(/--provider ([\w.:-]+):/g, 'provider "$1":')
    .replace(/--retry KEY runs one again/g, 'retry: [KEY] runs one again')
    .replace(/^( *)--retry: /gm, '$1retry: ')
    .replace(/`?orchestrate resume ([^\s`]+) --retry ([^\s`)]+)`?/g, 'the resume tool (run: "$1", retry: ["$2"])')
    .replace(/`?orchestrate resume ([^\s`]+)`?/g, 'the resume tool (run: "$1")')
    .replace(/`orchestrate watch ([^\s`]+)`/g, 'run_status (run: "$1")')
    .replace(/pass --run-dir DIR\b/g, 'pass run_dir')
    .replace(/pass --run-dir with\b/g, 'pass run_dir with')
    .replace(
      /\bexport (\w+)=\.\.\./g,
      "set $1 in this MCP server's environment (the env of its entry in your client's MCP config)",
    )
    .replace(/relative to the current folder/g, `relative to this MCP server's working folder, ${cwd}`);
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Registers every tool of the table on the server. */
export function registerTools(server: McpServer, tools: readonly OrchestrateTool[], ctx: ServerContext): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        ...(tool.annotations ? { annotations: tool.annotations } : {}),
      },
      async (args: unknown, call: ToolCall) => {
        try {
          return toResult(await tool.handler(args, call, ctx));
        } catch (e) {
          if (e instanceof ToolError) return errorResult(inToolTerms(e.message, ctx.cwd));
          if (e instanceof z.ZodError) return errorResult(`invalid arguments for ${tool.name}: ${z.prettifyError(e)}`);
          // A bug: the caller gets a short text, the server's log the stack.
          ctx.log(`internal error in ${tool.name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
          return errorResult(
            `internal error in ${tool.name}: ${e instanceof Error ? e.message : String(e)} (the server's stderr has the details; please report it)`,
          );
        }
      },
    );
  }
}
