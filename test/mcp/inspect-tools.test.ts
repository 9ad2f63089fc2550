// run_events of the MCP server: an empty `types` list is refused, where it used to return no
// events while moving next_cursor past all of them (each event is returned once, so they were lost).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runEventsTool } from '../../src/mcp/inspect-tools.js';
import type { ServerContext, ToolCall } from '../../src/mcp/tool-table.js';
import { RunStore } from '../../src/run/run-store.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function context(cwd: string): ServerContext {
  return {
    cwd,
    env: {},
    progressMs: 1000,
    launcher: undefined as never, // run_events starts nothing
    log: () => undefined,
    clientName: () => 'test',
  };
}

describe('run_events', () => {
  it('refuses an empty types list; without types it returns the events', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'orch-events-'));
    made.push(runsDir);
    const store = RunStore.create(runsDir, 'r-events');
    store.append({ type: 'run_start', recipe: 'recipe.yaml', name: 'events', recipeHash: 'h', inputs: {}, plan: [] });
    store.flush();
    const ctx = context(runsDir);
    await expect(async () => runEventsTool.handler({ run: store.dir, types: [] }, {} as ToolCall, ctx)).rejects.toThrow(
      /name at least one event type, or leave types out/,
    );
    const all = await runEventsTool.handler({ run: store.dir }, {} as ToolCall, ctx);
    expect(all.data).toBeDefined();
    const events = all.data!.events as { type: string }[];
    expect(events.map((e) => e.type)).toEqual(['run_start']);
  });
});
