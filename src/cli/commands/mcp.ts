// `orchestrate mcp <subcommand>`: MCP both ways. `mcp serve` offers orchestrate to other agents
// (Claude Code, Codex, Cursor) as an MCP server. Each subcommand is a CliCommand of its own file,
// listed here; main.ts registers them under `mcp`.
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { mcpListCommand } from './mcp-list.js';
import { mcpServeCommand } from './mcp-serve.js';

export const mcpCommand: CliCommand = {
  command: 'mcp',
  describe:
    'MCP: serve orchestrate to other agents as an MCP server (mcp serve); list the MCP servers agents get (mcp list)',
  builder: (y) =>
    y.example([
      [
        'orchestrate mcp serve',
        'an MCP server on stdin/stdout: add it to Claude Code, Codex or Cursor (see README, MCP)',
      ],
    ]),
  subcommands: [mcpServeCommand, mcpListCommand],
  // Not reached: yargs runs the named subcommand, and refuses `orchestrate mcp` alone.
  run: async () => EXIT.usage,
};
