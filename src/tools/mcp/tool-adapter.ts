// An MCP tool as an agent tool, so its calls go through the same pipeline as the built-in ones
// (argument repair and validation, hooks, events, error results). The model sees the server's
// own JSON Schema; arguments are checked against it (zod's fromJSONSchema) before the call.
// Calls of one turn to tools not marked readOnlyHint run one at a time per server (serialGroup).
// Results: text blocks joined and truncated like a file read (the full text saved to a private
// temp file the note names), images passed on, audio and binary resources described, resource
// links listed, `structuredContent` kept in details (and shown when there is no text), and
// `isError` results, timeouts, crashes and exceptions become error results with the reason.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ImageContent, TextContent } from '../../ai/types.js';
import type { AgentToolResult, AnyAgentTool } from '../../agent/types.js';
import { TOOL_DEFAULTS } from '../defaults.js';
import type { PrivateTempDir } from '../private-temp.js';
import { formatSize, truncateHead } from '../truncate.js';
import type { McpConnection } from './connection.js';

export interface McpToolDetails {
  server: string;
  /** The tool's name on its server (the exposed name may be shortened). */
  tool: string;
  structuredContent?: Record<string, unknown>;
  truncated?: boolean;
  fullOutputPath?: string;
}

export interface McpToolOptions {
  maxLines?: number;
  maxBytes?: number;
  /** Where full outputs of truncated results are written. */
  temp: PrivateTempDir;
}

const schemaCache = new WeakMap<object, z.ZodType>();

/** The zod schema of an MCP input schema: validation from it, and the server's JSON Schema shown to the model as is. */
export function parametersFromJsonSchema(inputSchema: Tool['inputSchema']): z.ZodType {
  const cached = schemaCache.get(inputSchema);
  if (cached) return cached;
  const { $schema: _ignored, ...shown } = inputSchema as Record<string, unknown>;
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(shown as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read: the server validates the arguments itself.
    validator = z.looseObject({});
  }
  // toJSONSchema merges metadata over what it generates, so the model sees the server's schema.
  const schema = validator.meta(shown);
  schemaCache.set(inputSchema, schema);
  return schema;
}

function describeBlock(
  block: CallToolResult['content'][number],
  out: (TextContent | ImageContent)[],
  texts: string[],
): void {
  switch (block.type) {
    case 'text':
      texts.push(block.text);
      return;
    case 'image':
      out.push({ type: 'image', data: block.data, mimeType: block.mimeType });
      return;
    case 'audio':
      texts.push(
        `[audio (${block.mimeType}, ${formatSize(Math.floor((block.data.length * 3) / 4))}) not shown: this model takes no audio]`,
      );
      return;
    case 'resource': {
      const r = block.resource;
      if ('text' in r && typeof r.text === 'string')
        texts.push(`[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`);
      else
        texts.push(
          `[binary resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, ${formatSize(Math.floor(((r as { blob: string }).blob.length * 3) / 4))}, not shown]`,
        );
      return;
    }
    case 'resource_link':
      texts.push(
        `[resource link: ${block.name} ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? ` - ${block.description}` : ''}]`,
      );
      return;
    default:
      texts.push(`[content of type "${(block as { type: string }).type}" not shown]`);
  }
}

/** A CallToolResult as the model and the session see it. Throws (an error result) when isError. */
export function convertResult(
  server: string,
  tool: string,
  result: CallToolResult,
  options: McpToolOptions,
): AgentToolResult<McpToolDetails> {
  const images: (TextContent | ImageContent)[] = [];
  const texts: string[] = [];
  for (const block of result.content ?? []) describeBlock(block, images, texts);
  const details: McpToolDetails = { server, tool };
  if (result.structuredContent) {
    details.structuredContent = result.structuredContent;
    if (texts.length === 0) texts.push(JSON.stringify(result.structuredContent, null, 2));
  }
  let text = texts.join('\n');
  if (result.isError)
    throw new Error(text || `MCP tool "${tool}" of server "${server}" reported an error without text`);
  const maxLines = options.maxLines ?? TOOL_DEFAULTS.maxLines;
  const maxBytes = options.maxBytes ?? TOOL_DEFAULTS.maxBytes;
  const cut = truncateHead(text, { maxLines, maxBytes });
  if (cut.truncated) {
    const path = join(options.temp.path, `${server}-${tool}-${Date.now()}.txt`.replace(/[^A-Za-z0-9_.-]/g, '_'));
    let where: string;
    try {
      writeFileSync(path, text, { mode: 0o600 });
      details.fullOutputPath = path;
      where = `Full output: ${path} (read it in parts with read's offset/limit)`;
    } catch (err) {
      where = `Full output could not be saved: ${err instanceof Error ? err.message : String(err)}`;
    }
    details.truncated = true;
    text = `${cut.content}\n\n[Output truncated: ${cut.outputLines} of ${cut.totalLines} lines, ${formatSize(cut.outputBytes)} of ${formatSize(cut.totalBytes)}. ${where}]`;
  }
  const content: (TextContent | ImageContent)[] = [];
  if (text !== '' || images.length === 0) content.push({ type: 'text', text: text || '(no output)' });
  content.push(...images);
  return { content, details };
}

/** The agent tool `exposedName` for `tool` of the server behind `connection`. */
export function createMcpAgentTool(
  exposedName: string,
  tool: Tool,
  connection: McpConnection,
  options: McpToolOptions,
): AnyAgentTool {
  const server = connection.config.name;
  const description = [tool.description?.trim() || `Tool "${tool.name}"`, `(MCP server "${server}")`].join(' ');
  // Servers such as the reference memory server read, change and rewrite one file per call: two
  // writes at once lose one. Only tools the server calls read-only overlap (as in Claude Code),
  // unless the configuration's `parallel` says otherwise for the whole server. The connection
  // keeps that rule between agents too; the serial group keeps the model's order within a turn.
  const parallel = connection.runsInParallel(tool.name);
  return {
    name: exposedName,
    ...(parallel ? {} : { serialGroup: `mcp server ${server}` }),
    label: `${server}: ${tool.title ?? tool.annotations?.title ?? tool.name}`,
    description,
    parameters: parametersFromJsonSchema(tool.inputSchema),
    async execute(_id, params: Record<string, unknown>, signal, onUpdate) {
      const result = await connection.callTool(tool.name, params ?? {}, signal, (p) => {
        const figure = p.total !== undefined ? `${p.progress}/${p.total}` : `${p.progress}`;
        onUpdate({
          content: [{ type: 'text', text: `progress ${figure}${p.message ? `: ${p.message}` : ''}` }],
          details: { server, tool: tool.name },
        });
      });
      return convertResult(server, tool.name, result, options);
    },
  };
}
