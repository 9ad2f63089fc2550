// MCP client: agents use the tools of the user's MCP servers (stdio, Streamable HTTP, HTTP+SSE).
export * from './config.js';
export { McpConnection, type McpConnectionContext, type McpConnectionStatus } from './connection.js';
export { MCP_TOOL_PREFIX, matchesAny, mcpToolName, normalizePattern, serverOfToolName } from './names.js';
export { ServerStdioTransport, type StdioServerLaunch } from './stdio-transport.js';
export { convertResult, createMcpAgentTool, parametersFromJsonSchema, type McpToolDetails } from './tool-adapter.js';
export {
  closeSharedMcpServers,
  McpToolSource,
  sharedMcpServerCount,
  type McpToolOrigin,
  type McpToolSourceOptions,
} from './tool-source.js';
