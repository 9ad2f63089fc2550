// The MCP server's approve / reject tools (issue 29), their handlers called in-process against a
// real run on the scripted model: approve over the run's control socket (logged via mcp, naming
// the client), a refused answer as a tool error with the reason. The stdio transport itself is
// covered by test/cli/commands/mcp-serve.test.ts.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { approveTool, rejectTool } from '../../src/mcp/control-tools.js';
import type { ServerContext, ToolCall } from '../../src/mcp/tool-table.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, logOf, ofType, tempProject, until } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('approve / reject MCP tools', () => {
  it('approve reaches the live run (via mcp, naming the client); a wrong task is a tool error with the reason', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: gates
provider: scripted
script: script.yaml
tasks:
  - id: gated
    prompt: "GATED task"
    approve: { prompt: "Ship it?" }
`,
      'script.yaml': `conversations:
  - match: "GATED"
    turns: [{ text: "gated done" }]
`,
    });
    const runsDir = join(dir, 'runs');
    const runDir = join(runsDir, 'mcp-gate');
    const done = runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir, runId: 'mcp-gate' });
    await until('the gate request', () => ofType(logOf(runDir), 'approval_requested').length > 0);
    const ctx = {
      cwd: dir,
      env: process.env,
      runsDir,
      progressMs: 1_000,
      launcher: undefined as never,
      log: () => undefined,
      clientName: () => 'test-client',
    } satisfies ServerContext;
    const call = {} as ToolCall;
    await expect(rejectTool.handler({ run: 'mcp-gate', task: 'gatd' }, call, ctx)).rejects.toThrow(
      'run mcp-gate has no task "gatd"; did you mean "gated"?',
    );
    const reply = await approveTool.handler({ run: 'mcp-gate', task: 'gated', note: 'from the agent' }, call, ctx);
    expect(reply).toEqual({ text: 'approved gated: queued now' });
    const r = await done;
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    expect(ofType(logOf(runDir), 'approval_given')).toEqual([
      expect.objectContaining({
        decision: 'approved',
        via: 'mcp',
        note: 'from the agent',
        by: expect.stringMatching(/^mcp test-client \(pid \d+/),
      }),
    ]);
  }, 120_000);
});
