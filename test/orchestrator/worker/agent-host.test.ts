// The agent's host in its worker thread (agent-host.ts), end to end with the scripted model: what a
// failed verify says when the check printed nothing (the error, the plain log), so a user is not
// left with a message that ends in a colon.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PlainLog } from '../../../src/display/plain-log.js';
import { runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('verify', () => {
  it('a failing check that printed nothing says so, in the error and in the plain log', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: silent-check
provider: scripted
script: script.yaml
agents:
  a: { tools: [] }
tasks:
  - id: quiet
    agent: a
    prompt: "Do it"
    verify: "test -f never.txt"
    on_failure: continue
  - id: loud
    agent: a
    prompt: "Do it loudly"
    verify: "echo first; echo 'missing never.txt' >&2; exit 3"
    on_failure: continue
`,
      'script.yaml': `conversations:
  - match: "^Do it loudly"
    turns:
      - text: "done"
  - match: "^Do it"
    turns:
      - text: "done"
`,
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    const log = events(r.outcome.dir);
    const errors = Object.fromEntries(ofType(log, 'instance_failed').map((e) => [e.key, e.error]));
    expect(errors.quiet).toBe('verify `test -f never.txt` exited with 1 after 1 check and printed nothing');
    expect(errors.loud).toMatch(/exited with 3 after 1 check: first \| missing never\.txt$/);

    const lines: string[] = [];
    const plain = new PlainLog({ write: (t: string) => lines.push(t) > 0 });
    for (const e of log) plain.handle(e);
    const text = lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, '')).join('');
    expect(text).toContain('quiet: verify `test -f never.txt` failed (it printed nothing)\n');
    expect(text).not.toMatch(/: \n/);
  });
});
