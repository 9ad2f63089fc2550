// A bad entry of a .mcp.json beside the recipe is reported at the entry's own line: the problem
// carries the server's name as data (issue 43), so a name holding a ':' is not cut short.
import { afterEach, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../src/recipe/load.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

let temp: TempRecipe | undefined;
afterEach(() => temp?.cleanup());

describe('problems of a .mcp.json', () => {
  it('point at the bad entry, found by its full name', () => {
    const mcpJson = [
      '{',
      '  "mcpServers": {',
      '    "web": { "command": "node" },',
      '    "web:staging": { "command": 5 }',
      '  }',
      '}',
    ].join('\n');
    temp = tempRecipe('name: r\ntasks:\n  - id: a\n    prompt: p\n', { '.mcp.json': mcpJson });
    const r = loadRecipe(temp.file, { cwd: temp.dir, env: { ORCHESTRATE_HOME: `${temp.dir}/home` } });
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems.filter((p) => p.code === 'bad_mcp_server');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 4, col: 5 });
    expect(problems[0]!.file.endsWith('.mcp.json')).toBe(true);
    expect(problems[0]!.message.startsWith('mcpServers.web:staging: ')).toBe(true);
  });
});
