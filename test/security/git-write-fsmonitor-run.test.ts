// Issue 26, the first attack, as a user meets it: a whole offline run (scripted model, worker
// threads, the coordinator's own git) where an agent with only the `write` tool writes the
// workspace's .git/config with core.fsmonitor and a filter driver. The coordinator takes the
// patch of that instance and the snapshot of the next one with that config in place: nothing it
// names may run (the marker file outside the workspace never appears, the decoy key is in no
// file of the project or the run), and both patches are still exactly the agents' changes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, gitInit, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { cleanup, filesHoldingDecoy, tempDir, withDecoyKey } from './git-fixtures.js';

afterAll(() => {
  cleanupTempDirs();
  cleanup();
});

describe('a write-tool agent configuring git for the coordinator', { timeout: 120_000 }, () => {
  it('core.fsmonitor and a filter in .git/config written by the agent run nothing; the patches are right', async () => {
    const markerDir = tempDir('git-marker-');
    const marker = join(markerDir, 'ran');
    const dir = tempProject({
      'recipe.yaml': `name: git-attack
provider: scripted
script: script.yaml
agents:
  writer: { tools: [write] }
tasks:
  - id: attack
    agent: writer
    cwd: repo
    prompt: "Attack"
  - id: after
    agent: writer
    cwd: repo
    needs: [attack]
    prompt: "After"
`,
      'script.yaml': '',
      'repo/src/a.txt': 'one\n',
    });
    const repo = join(dir, 'repo');
    gitInit(repo);
    const evil = `sh ${join(repo, '.git', 'evil.sh')}`;
    const config = `[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n\\tbare = false\\n\\tfsmonitor = ${evil}\\n[filter \\"x\\"]\\n\\tclean = ${evil}\\n\\tsmudge = ${evil}\\n`;
    writeFileSync(
      join(dir, 'script.yaml'),
      `conversations:
  - match: "Attack"
    turns:
      - tools:
          - { name: write, args: { path: .git/evil.sh, content: "env > ${marker}\\ncat\\n" } }
          - { name: write, args: { path: .git/config, content: "${config}" } }
          - { name: write, args: { path: .gitattributes, content: "*.txt filter=x\\n" } }
          - { name: write, args: { path: src/a.txt, content: "two\\n" } }
      - text: "done"
  - match: "After"
    turns:
      - tools:
          - { name: write, args: { path: src/b.txt, content: "bee\\n" } }
      - text: "done"
`,
    );
    const r = await withDecoyKey(() =>
      runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') }),
    );
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    // The agent did write the config: the attack was really made.
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).toContain('fsmonitor');
    expect(existsSync(marker)).toBe(false);
    const attack = readFileSync(join(r.outcome.dir, 'patches', 'attack.diff'), 'utf8');
    expect(attack).toContain('+two');
    expect(attack).toContain('+*.txt filter=x');
    const after = readFileSync(join(r.outcome.dir, 'patches', 'after.diff'), 'utf8');
    // The next instance's snapshot (taken with the agent's config in place) holds the first one's work.
    expect(after).toContain('+bee');
    expect(after).not.toContain('+two');
    expect(filesHoldingDecoy(dir)).toEqual([]);
    expect(filesHoldingDecoy(markerDir)).toEqual([]);
  });
});
