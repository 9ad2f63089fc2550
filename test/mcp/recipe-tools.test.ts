// The MCP server's dry_run tool (orchestrate mcp serve) names each agent's MCP servers, and with
// list_mcp starts them to list the tools each agent would get (as `--dry-run --list-mcp`).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dryRunTool } from '../../src/mcp/recipe-tools.js';
import type { ServerContext, ToolCall } from '../../src/mcp/tool-table.js';
import { until } from '../tools/mcp/helpers.js';
import { CALLS, env, processesWith, removeDirs, setup } from '../tools/mcp/run-setup.js';

afterEach(removeDirs);

function context(cwd: string): ServerContext {
  return {
    cwd,
    env: env(cwd),
    progressMs: 1000,
    launcher: undefined as never, // dry_run starts no run
    log: () => undefined,
    clientName: () => 'test',
  };
}

describe('the dry_run tool and MCP', () => {
  it('names the servers without starting them, and lists the tools with list_mcp', async () => {
    const s = setup(CALLS);
    const plain = await dryRunTool.handler({ recipe: join(s.dir, 'recipe.yaml') }, {} as ToolCall, context(s.dir));
    expect(plain.text).toContain('MCP: agent helper gets alpha (recipe.yaml), plain (helper.md)');
    expect(plain.text).toContain('were not started');
    const listed = await dryRunTool.handler(
      { recipe: join(s.dir, 'recipe.yaml'), list_mcp: true },
      {} as ToolCall,
      context(s.dir),
    );
    expect(listed.text).toMatch(/^ {4}alpha: mcp__alpha__echo, mcp__alpha__env, mcp__alpha__slow$/m);
    await until(() => processesWith(s.marker).length === 0, 'listed servers to end');
  }, 60_000);
});
