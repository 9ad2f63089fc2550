// Attack: a run's trusted inputs (recipe.yaml, an agent file, .mcp.json) lie in the workspace of
// its agents, which rewrite them so the next session runs unconfined. The orchestrator passes
// them as the sandbox's read-only files; write and edit refuse them (also through a symlink), bash
// in the sandbox cannot change them, and reading them and writing the rest of the workspace work.
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyAgentTool } from '../../src/agent/types.js';
import { createCodingTools } from '../../src/tools/coding-tools.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { errorOf, runTool, tempDir, textOf } from '../tools/harness.js';

const RECIPE = 'name: trusted\nsandbox: workspace\ntasks: []\n';
const AGENT = '---\nname: worker\n---\nBe careful.\n';
const REFUSED = /a file this run trusts as its configuration.*read-only to every tool/s;

function setUp(): { ws: string; tools: Record<string, AnyAgentTool> } {
  const ws = tempDir('trusted-inputs-');
  writeFileSync(join(ws, 'recipe.yaml'), RECIPE);
  writeFileSync(join(ws, 'worker.md'), AGENT);
  writeFileSync(join(ws, 'notes.txt'), 'free to change\n');
  const readOnly = [join(ws, 'recipe.yaml'), join(ws, 'worker.md')];
  const list = createCodingTools({ cwd: ws, bash: { sandbox: { readOnly } } }, ['read', 'write', 'edit', 'bash']);
  return { ws, tools: Object.fromEntries(list.map((t) => [t.name, t])) };
}

describe('trusted inputs inside the workspace', () => {
  it('write and edit refuse them, directly and through a symlink; read and the rest of the workspace work', async () => {
    const { ws, tools } = setUp();
    expect(await errorOf(tools.write!, { path: 'recipe.yaml', content: 'sandbox: none\n' })).toMatch(REFUSED);
    expect(
      await errorOf(tools.edit!, { path: 'recipe.yaml', edits: [{ oldText: 'workspace', newText: 'none' }] }),
    ).toMatch(REFUSED);
    expect(
      await errorOf(tools.edit!, { path: './sub/../worker.md', edits: [{ oldText: 'careful', newText: 'reckless' }] }),
    ).toMatch(REFUSED);
    symlinkSync('recipe.yaml', join(ws, 'link.yaml'));
    expect(await errorOf(tools.write!, { path: 'link.yaml', content: 'sandbox: none\n' })).toMatch(REFUSED);
    expect(readFileSync(join(ws, 'recipe.yaml'), 'utf8')).toBe(RECIPE);
    expect(readFileSync(join(ws, 'worker.md'), 'utf8')).toBe(AGENT);

    expect(textOf(await runTool(tools.read!, { path: 'recipe.yaml' }))).toContain('sandbox: workspace');
    await runTool(tools.edit!, { path: 'notes.txt', edits: [{ oldText: 'free', newText: 'still free' }] });
    await runTool(tools.write!, { path: 'recipe.draft.yaml', content: 'a copy may be written\n' });
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('still free to change\n');
  });

  it.skipIf(skipWithoutBwrap('trusted inputs in the sandbox'))(
    'bash in the sandbox cannot overwrite, append to, move or delete them, and writes the rest',
    async () => {
      const { ws, tools } = setUp();
      const out = textOf(
        await runTool(tools.bash!, {
          command:
            "echo 'sandbox: none' >> recipe.yaml; printf x > worker.md; mv recipe.yaml gone.yaml; rm -f worker.md; sed -i s/careful/reckless/ worker.md; echo changed >> notes.txt; true",
        }),
      );
      expect(out).toMatch(/Read-only file system|Device or resource busy/);
      expect(readFileSync(join(ws, 'recipe.yaml'), 'utf8')).toBe(RECIPE);
      expect(readFileSync(join(ws, 'worker.md'), 'utf8')).toBe(AGENT);
      expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('free to change\nchanged\n');
    },
  );
});
