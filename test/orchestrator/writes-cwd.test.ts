// `writes:` globs are relative to the task's cwd: the README's own shape (`cwd: ${{ item.repo }}`,
// `writes: ["src/**"]`) lets each agent write inside its repository's src/ and nowhere else.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

interface ToolEnd {
  toolName: string;
  isError: boolean;
  result: { content: { text: string }[] };
}

describe('writes: relative to the task cwd', { timeout: 120_000 }, () => {
  it('cwd: ${{ item.repo }} with writes: ["src/**"]: a write in the repo\'s src/ succeeds, one outside it is refused', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: rename
provider: scripted
script: script.yaml
concurrency: 2
agents:
  worker: { tools: [read, write, edit] }
tasks:
  - id: apply
    for_each: [{ repo: repos/a }, { repo: repos/b }]
    agent: worker
    cwd: \${{ item.repo }}
    writes: ["src/**"]
    prompt: "Rename log() in \${{ item.repo }}"
`,
      'script.yaml': `conversations:
  - match: "Rename log\\\\(\\\\) in repos/(\\\\w)"
    turns:
      - tools:
          - { name: edit, args: { path: src/app.js, edits: [{ oldText: "log(", newText: "logger.info(" }] } }
          - { name: write, args: { path: src/new.js, content: "new {{match.1}}" } }
          - { name: write, args: { path: README.md, content: "hacked" } }
          - { name: write, args: { path: ../../outside.txt, content: "hacked" } }
      - text: "Renamed in {{match.1}}."
`,
      'repos/a/src/app.js': 'log("a");\n',
      'repos/a/README.md': 'readme a\n',
      'repos/b/src/app.js': 'log("b");\n',
      'repos/b/README.md': 'readme b\n',
    });
    gitInit(join(dir, 'repos/a'));
    gitInit(join(dir, 'repos/b'));
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    for (const repo of ['a', 'b']) {
      expect(readFileSync(join(dir, 'repos', repo, 'src/app.js'), 'utf8')).toBe(`logger.info("${repo}");\n`);
      expect(readFileSync(join(dir, 'repos', repo, 'src/new.js'), 'utf8')).toBe(`new ${repo}`);
      expect(readFileSync(join(dir, 'repos', repo, 'README.md'), 'utf8')).toBe(`readme ${repo}\n`);
    }
    expect(existsSync(join(dir, 'outside.txt'))).toBe(false);
    const log = events(r.outcome.dir);
    for (const key of ['apply.repos-a', 'apply.repos-b']) {
      const ends = log.flatMap((e) =>
        e.type === 'agent_event' && e.key === key && e.event.type === 'tool_execution_end'
          ? [e.event as unknown as ToolEnd]
          : [],
      );
      expect(ends.map((e) => e.isError)).toEqual([false, false, true, true]);
      // The refusal names the glob as written in the recipe, so the model (and the user) can tell why.
      expect(ends[2]!.result.content[0]!.text).toMatch(/outside this agent's write scope.*"src\/\*\*"/s);
    }
    expect(ofType(log, 'instance_done')).toHaveLength(2);
  });
});
