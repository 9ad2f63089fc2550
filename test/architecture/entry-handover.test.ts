// cli/ and mcp/ are sibling entry points (rank 9): neither imports the other. `orchestrate mcp
// serve` still has to start the MCP server in the same process, so cli/commands/mcp-serve.ts loads
// src/mcp/serve by a path held in MCP_ENTRY, which the layer checker (it reads import statements)
// does not see. This test keeps that hand-over honest: it is the only place cli/ names mcp/, it
// names the real module with the signature the command expects, and mcp/ imports nothing of cli/.
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MCP_ENTRY, type McpEntry } from '../../src/cli/commands/mcp-serve.js';
import * as mcpServe from '../../src/mcp/serve.js';
import { namesOf, SRC, sourceFiles } from '../helpers/source-names.js';

describe('the cli -> mcp hand-over', () => {
  it('mcp/ names nothing of cli/ (no import, static or dynamic)', () => {
    const named = [...sourceFiles(join(SRC, 'mcp'))].flatMap((f) => namesOf(f, 'cli'));
    expect(named).toEqual([]);
  });

  it('cli/ names mcp/ in one place only: MCP_ENTRY of commands/mcp-serve.ts', () => {
    const named = [...sourceFiles(join(SRC, 'cli'))].flatMap((f) => namesOf(f, 'mcp'));
    expect(named).toEqual([`cli/commands/mcp-serve.ts: ${MCP_ENTRY}`]);
  });

  it('MCP_ENTRY is src/mcp/serve, with the serveMcp the command calls', async () => {
    const target = resolve(SRC, 'cli/commands', MCP_ENTRY).replace(/\.js$/, '.ts');
    expect(relative(SRC, target)).toBe('mcp/serve.ts');
    // Type-checked (tsc): the real module satisfies what the command casts it to.
    const entry: McpEntry = mcpServe;
    expect(typeof entry.serveMcp).toBe('function');
    const loaded = (await import(target)) as McpEntry;
    expect(loaded.serveMcp).toBe(mcpServe.serveMcp);
  });
});
