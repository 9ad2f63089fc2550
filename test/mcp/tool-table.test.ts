// What a calling agent reads when it gets something wrong: the layers below word their messages
// for the command line (`--set name=<string>`, `pass --run-dir DIR`, "relative to the current
// folder", `export VAR=...`), which an agent driving `orchestrate mcp serve` cannot act on: it
// has the arguments `inputs` and `run_dir`, and the server's working folder and environment are
// not its own. Driven by the real MCP SDK client over stdio against the built CLI.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inToolTerms } from '../../src/mcp/tool-table.js';
import { call, McpProject, textOf } from '../cli/mcp-serve-fixture.js';

const project = new McpProject();
afterAll(() => project.cleanup());

describe("the MCP server's mistakes are worded in its tools' arguments", () => {
  it('a missing input, a missing recipe and an empty runs folder name inputs, run_dir and the server folder', async () => {
    project.write(
      'needs-input.yaml',
      'name: needs-input\nprovider: scripted\nscript: script.yaml\ninputs:\n  feature: { type: string, required: true, description: what to build }\ntasks:\n  - id: a\n    prompt: "${{ inputs.feature }}"\n',
    );
    const s = await project.serve();

    const missing = await call(s, 'run_recipe', { recipe: 'needs-input.yaml' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('hint: pass inputs: {"feature": <string>} (what to build)');
    const unknown = await call(s, 'dry_run', { recipe: 'needs-input.yaml', inputs: { featur: 'x' } });
    expect(textOf(unknown)).toMatch(/inputs\.featur: the recipe has no input "featur"/);

    const absent = await call(s, 'validate_recipe', { recipe: 'nope.yaml' });
    expect(textOf(absent)).toContain(
      `hint: check the path; it is relative to this MCP server's working folder, ${project.dir}`,
    );

    project.write(
      'needs-token.yaml',
      'name: needs-token\nprovider: scripted\nscript: script.yaml\nmcp_servers:\n  gh:\n    type: http\n    url: https://example.invalid/mcp\n    headers: { Authorization: "Bearer ${TOOL_TABLE_UNSET_TOKEN}" }\ntasks:\n  - id: a\n    prompt: "x"\n',
    );
    const token = await call(s, 'run_recipe', { recipe: 'needs-token.yaml' });
    expect(token.isError).toBe(true);
    expect(textOf(token)).toContain(
      "hint: set TOOL_TABLE_UNSET_TOKEN in this MCP server's environment (the env of its entry in your client's MCP config), or write ${TOOL_TABLE_UNSET_TOKEN:-default}",
    );

    const noRuns = await call(s, 'run_status', { run: 'x' });
    expect(noRuns.isError).toBe(true);
    expect(textOf(noRuns)).toContain('there are no runs there yet; pass run_dir to look elsewhere');
    for (const r of [missing, unknown, absent, token, noRuns])
      expect(textOf(r)).not.toMatch(/--set|--run-dir|current folder|export /);
  }, 180_000);

  it('a run just started is found by its id at once, and cancelling it says the resume tool continues it (it said `orchestrate resume <id>`)', async () => {
    const s = await project.serve();
    const started = await call(s, 'run_recipe', { recipe: 'hold.yaml' });
    expect(started.isError, textOf(started)).toBeFalsy();
    const { runId, runDir, pid } = started.structuredContent as { runId: string; runDir: string; pid: number };
    project.pids.push(pid);
    // The id it returns finds the run at once: its log is there (it came a moment after the lease).
    expect(existsSync(join(runDir, 'run.jsonl'))).toBe(true);
    const cancelled = await call(s, 'cancel', { run: runId });
    expect(cancelled.isError, textOf(cancelled)).toBeFalsy();
    expect(textOf(cancelled)).toBe(
      `interrupting run ${runId}: agents stop with their sessions kept; continue it with: the resume tool (run: "${runId}")`,
    );
  }, 180_000);

  it('rewrites the command-line words of the provider flag and of other commands too', () => {
    expect(
      inToolTerms(
        'failed instances run again with: orchestrate resume r1 (a cancelled one: orchestrate resume r1 --retry a.b)',
        '/p',
      ),
    ).toBe(
      'failed instances run again with: the resume tool (run: "r1") (a cancelled one: the resume tool (run: "r1", retry: ["a.b"]))',
    );
    expect(inToolTerms('answer once `orchestrate watch r1` shows it waiting', '/p')).toBe(
      'answer once run_status (run: "r1") shows it waiting',
    );
    expect(inToolTerms('--provider gpux: unknown provider', '/p')).toBe('provider "gpux": unknown provider');
    expect(
      inToolTerms('add script: <file> to the recipe or to the agent, or run without --provider scripted', '/p'),
    ).toBe('add script: <file> to the recipe or to the agent, or run with a provider other than "scripted"');
    expect(inToolTerms('(or use --provider scripted to run offline)', '/p')).toBe(
      '(or use provider: "scripted" to run offline)',
    );
  });
});
