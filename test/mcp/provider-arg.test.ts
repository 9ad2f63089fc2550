// The MCP server's `provider` argument takes any provider the recipe can name (a preset, or a name
// under its providers:), validated by the recipe's load exactly like the CLI's --provider: an
// unknown name is the same error with the known names, and a value that would read as a flag of
// the `orchestrate run` it becomes is refused by the argument's schema.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dryRunTool } from '../../src/mcp/recipe-tools.js';
import type { ServerContext, ToolCall } from '../../src/mcp/tool-table.js';
import { overrideFlags } from '../../src/service/run-request.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const RECIPE = `name: any-provider
model: claude-haiku-4-5
providers:
  gpu:
    type: openai-compatible
    base_url: http://127.0.0.1:9/v1
models:
  qwen:
    price: { input: 0.1, output: 0.2 }
agents:
  worker: { tools: [] }
tasks:
  - id: work
    agent: worker
    prompt: "work"
`;

function context(cwd: string): ServerContext {
  return {
    cwd,
    env: {},
    progressMs: 1000,
    launcher: undefined as never, // dry_run starts nothing
    log: () => undefined,
    clientName: () => 'test',
  };
}
const call = {} as ToolCall;

describe('the MCP tools provider argument', () => {
  it('accepts a recipe-declared provider and a preset, like --provider', async () => {
    const dir = tempProject({ 'recipe.yaml': RECIPE });
    for (const provider of ['gpu', 'ollama', 'anthropic']) {
      const reply = await dryRunTool.handler({ recipe: 'recipe.yaml', provider, model: 'qwen' }, call, context(dir));
      expect(reply.data?.ok).toBe(true);
    }
    expect(overrideFlags({ provider: 'gpu' })).toEqual(['--provider', 'gpu']);
  });

  it('refuses an unknown name with the known ones, as the CLI does', async () => {
    const dir = tempProject({ 'recipe.yaml': RECIPE });
    await expect(
      dryRunTool.handler({ recipe: join(dir, 'recipe.yaml'), provider: 'gpux' }, call, context(dir)),
    ).rejects.toThrow(
      /--provider gpux: unknown provider[\s\S]*anthropic, scripted, openai, openrouter, ollama, lmstudio, vllm, llamacpp, gpu/,
    );
  });

  it('refuses a value that would read as a flag', async () => {
    const dir = tempProject({ 'recipe.yaml': RECIPE });
    await expect(async () =>
      dryRunTool.handler({ recipe: 'recipe.yaml', provider: '--insecure-no-secret' }, call, context(dir)),
    ).rejects.toThrow(/provider name/);
  });
});
