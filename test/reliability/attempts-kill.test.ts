// Best-of-N attempts under kill -9 of the coordinator (the real CLI process): attempt 1 has failed
// its verify and attempt 2 has passed when the process is killed, attempt 3 still waiting on a gate
// file. The resume runs neither finished attempt again (the failed one included), attempt 3 goes
// on, the pick is made once (attempt 2, the only one or the smaller change) and lands once.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFolderName } from '../helpers/run-folder.js';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { exited, spawnCli, until } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

function project(): string {
  const dir = tempProject({ 'repo/value.txt': 'value=base\n' });
  gitInit(join(dir, 'repo'));
  const gate = join(dir, 'gate');
  const edits = [
    "printf 'bad\\\\n' > value.txt",
    "printf 'good\\\\n' > value.txt",
    `while [ ! -e ${gate} ]; do sleep 0.05; done; printf 'good\\\\nlonger\\\\n' > value.txt`,
  ];
  writeFileSync(
    join(dir, 'recipe.yaml'),
    `name: attempts-kill
provider: scripted
script: script.yaml
concurrency: 3
agents:
  editor: { tools: [bash] }
tasks:
  - id: fix
    agent: editor
    cwd: repo
    attempts: 3
    merge: apply
    verify: "grep -q good value.txt"
    prompt: "Attempt \${{ attempt }}: fix value.txt"
`,
  );
  writeFileSync(
    join(dir, 'script.yaml'),
    `conversations:\n${edits
      .map(
        (cmd, i) =>
          `  - match: "^Attempt ${i + 1}:"\n    turns:\n      - tools: [{ name: bash, args: { command: "${cmd}" } }]\n      - text: "attempt ${i + 1} done"\n`,
      )
      .join('')}`,
  );
  return dir;
}

describe('attempts under kill -9', () => {
  it('a resume re-runs no finished attempt and picks and lands once', async () => {
    const dir = project();
    const runs = join(dir, 'runs');
    const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], {});
    const done = exited(child);
    let ended = false;
    void done.then(() => (ended = true));
    const log = () => {
      const name = runFolderName(runs);
      return name && existsSync(join(runs, name, 'run.jsonl')) ? events(join(runs, name)) : [];
    };
    // Attempt 1 failed and attempt 2 done: attempt 3 waits on the gate, so nothing is picked yet.
    await until(
      () =>
        ended ||
        (ofType(log(), 'instance_failed').some((e) => e.key === 'fix.attempt-1') &&
          ofType(log(), 'instance_done').some((e) => e.key === 'fix.attempt-2')),
      'attempts 1 and 2 to end',
      120_000,
    );
    expect(ended).toBe(false);
    expect(ofType(log(), 'attempt_pick')).toEqual([]);
    child.kill('SIGKILL');
    await done;
    const runDir = join(runs, runFolderName(runs)!);
    const before = events(runDir).length;
    writeFileSync(join(dir, 'gate'), '');

    const resumed = await exited(spawnCli(['resume', runDir], {}));
    expect(resumed.code, resumed.stderr).toBe(0);
    const all = events(runDir);
    const after = all.slice(before);
    expect(
      ofType(after, 'instance_start')
        .map((e) => e.key)
        .filter((k) => k !== 'fix.attempt-3'),
    ).toEqual([]);
    const picks = ofType(all, 'attempt_pick');
    expect(picks.map((p) => p.picked)).toEqual(['fix.attempt-2']);
    expect(ofType(all, 'attempt_landed').map((e) => [e.key, e.ok])).toEqual([['fix.attempt-2', true]]);
    expect(readFileSync(join(dir, 'repo', 'value.txt'), 'utf8')).toBe('good\n');
  }, 300_000);
});
