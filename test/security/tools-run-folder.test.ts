// Attack: the runs folder lies inside the workspace (`.orchestrate/runs`, the default) and the file
// tools read another agent's conversation or forge a run.jsonl there. The sandbox hides it from
// bash; the file tools get the same folders (coding-tools passes the sandbox's hide list on) and
// must refuse them with a clear message, also through a symlink, also while walking (grep/find).
// The rest of the workspace stays fully usable.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyAgentTool } from '../../src/agent/types.js';
import { createCodingTools } from '../../src/tools/coding-tools.js';
import { errorOf, runTool, tempDir, textOf } from '../tools/harness.js';

const RUN_LOG = '{"type":"run_start","id":"r1"}\n';
const REFUSED = /out of reach of every tool/;

function setUp(): { ws: string; runs: string; tools: Record<string, AnyAgentTool> } {
  const ws = tempDir('runfolder-');
  const runs = join(ws, '.orchestrate', 'runs');
  mkdirSync(join(runs, 'r1', 'sessions'), { recursive: true });
  writeFileSync(join(runs, 'r1', 'run.jsonl'), RUN_LOG);
  writeFileSync(join(runs, 'r1', 'sessions', 'a.jsonl'), 'conversation of agent a: needle\n');
  writeFileSync(join(ws, 'src.txt'), 'needle in the workspace\n');
  const list = createCodingTools({ cwd: ws, bash: { sandbox: { hide: [runs] } } }, [
    'read',
    'write',
    'edit',
    'ls',
    'grep',
    'find',
  ]);
  return { ws, runs, tools: Object.fromEntries(list.map((t) => [t.name, t])) };
}

describe('the runs folder through the file tools', () => {
  it('refuses read, write, edit, ls, grep and find inside it, and a forged run.jsonl is not written', async () => {
    const { runs, tools } = setUp();
    const log = '.orchestrate/runs/r1/run.jsonl';
    expect(await errorOf(tools.read!, { path: log })).toMatch(REFUSED);
    expect(await errorOf(tools.read!, { path: '.orchestrate/runs/r1/sessions/a.jsonl' })).toMatch(REFUSED);
    expect(await errorOf(tools.write!, { path: log, content: '{"type":"run_end","status":"succeeded"}\n' })).toMatch(
      REFUSED,
    );
    expect(await errorOf(tools.write!, { path: '.orchestrate/runs/r2/run.jsonl', content: 'forged\n' })).toMatch(
      REFUSED,
    );
    expect(await errorOf(tools.edit!, { path: log, edits: [{ oldText: 'run_start', newText: 'run_end' }] })).toMatch(
      REFUSED,
    );
    expect(await errorOf(tools.ls!, { path: '.orchestrate/runs' })).toMatch(REFUSED);
    expect(await errorOf(tools.grep!, { pattern: 'needle', path: '.orchestrate/runs' })).toMatch(REFUSED);
    expect(await errorOf(tools.find!, { pattern: '*.jsonl', path: '.orchestrate/runs/r1' })).toMatch(REFUSED);
    expect(readFileSync(join(runs, 'r1', 'run.jsonl'), 'utf8')).toBe(RUN_LOG);
  });

  it('refuses it through a symlink inside the workspace', async () => {
    const { ws, runs, tools } = setUp();
    symlinkSync('.orchestrate/runs/r1/run.jsonl', join(ws, 'log-link'));
    symlinkSync('.orchestrate/runs', join(ws, 'runs-link'));
    expect(await errorOf(tools.read!, { path: 'log-link' })).toMatch(REFUSED);
    expect(await errorOf(tools.write!, { path: 'log-link', content: 'forged\n' })).toMatch(REFUSED);
    expect(await errorOf(tools.write!, { path: 'runs-link/r1/run.jsonl', content: 'forged\n' })).toMatch(REFUSED);
    expect(readFileSync(join(runs, 'r1', 'run.jsonl'), 'utf8')).toBe(RUN_LOG);
  });

  it('leaves it out of searches of the whole workspace, which keep working', async () => {
    const { tools } = setUp();
    const grep = textOf(await runTool(tools.grep!, { pattern: 'needle' }));
    expect(grep).toContain('src.txt:1: needle in the workspace');
    expect(grep).not.toContain('conversation');
    const find = textOf(await runTool(tools.find!, { pattern: '**/*.jsonl' }));
    expect(find).toBe('No files found matching pattern');
    await runTool(tools.edit!, { path: 'src.txt', edits: [{ oldText: 'needle', newText: 'pin' }] });
    expect(textOf(await runTool(tools.read!, { path: 'src.txt' }))).toBe('pin in the workspace');
  });
});
