// kill -9 of the coordinator (the real CLI process) while agents work on the task board, then
// `orchestrate resume`: the board comes back from run.jsonl as it was (items, owners, notes),
// the live board of the resumed run is that board (the agent that owned a task before the kill
// can still complete it, nobody else can), and `show --json` reports it.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { foldEvents } from '../../src/run/run-fold.js';
import { runFolderName } from '../helpers/run-folder.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { exited, spawnCli, until } from './helpers/reliability-fixtures.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { runJson } from '../../src/display/run-json.js';
import { formatRunDetails } from '../../src/display/run-details-text.js';

afterAll(() => cleanupTempDirs());

describe('task board across kill -9 and resume', { timeout: 120_000 }, () => {
  it('keeps every item, owner and note; the owner completes its task after the resume', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: board-crash
provider: scripted
script: script.yaml
sandbox: none
board:
  - { id: spec, subject: Write the spec }
agents:
  planner: { tools: [read] }
  builder: { tools: [read, bash] }
tasks:
  - id: plan
    agent: planner
    prompt: Put the build steps on the board.
  - id: build
    agent: builder
    needs: [plan]
    prompt: Build step 1 from the board.
`,
      'script.yaml': `conversations:
  - match: "Put the build steps"
    turns:
      - tools:
          - { name: task_create, args: { subject: Build the parser, blocked_by: [spec] } }
          - { name: task_create, args: { subject: Build the printer } }
          - { name: task_update, args: { id: spec, status: completed, notes: spec.md written } }
      - text: Two build steps are on the board.
  - match: "Build step 1"
    turns:
      - tools: [{ name: task_update, args: { id: "1", status: in_progress, notes: starting } }]
      # Waits for the test's go file (the kill comes while this runs); bounded so it never hangs.
      - tools: [{ name: bash, args: { command: "for i in $(seq 1 1200); do [ -f go ] && break; sleep 0.05; done; echo built" } }]
      - tools: [{ name: task_update, args: { id: "1", status: completed, notes: parser built } }]
      - text: The parser is built.
`,
    });
    const runsDir = join(dir, 'runs');
    const env = { ANTHROPIC_API_KEY: '' };
    const runDir = () => {
      const name = runFolderName(runsDir);
      return name ? join(runsDir, name) : undefined;
    };
    const log = () => {
      const d = runDir();
      return d && existsSync(join(d, 'run.jsonl')) ? events(d) : [];
    };
    const waitingInBash = () =>
      ofType(log(), 'agent_event').some(
        (e) => e.key === 'build' && e.event.type === 'tool_execution_start' && e.event.toolName === 'bash',
      );

    const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runsDir], env);
    const done = exited(child);
    await until(() => waitingInBash() || child.exitCode !== null, 'the builder waiting in bash', 60_000);
    if (child.exitCode !== null) expect.fail(`the run ended before the kill: ${(await done).stderr}`);
    child.kill('SIGKILL');
    await done;

    const before = foldEvents(log()).board;
    expect([...before.values()].map((i) => [i.id, i.status, i.owner ?? '-', i.createdBy])).toEqual([
      ['spec', 'completed', 'plan', 'recipe'],
      ['1', 'in_progress', 'build', 'plan'],
      ['2', 'pending', '-', 'plan'],
    ]);
    expect(before.get('1')!.notes.map((n) => n.text)).toEqual(['starting']);

    writeFileSync(join(dir, 'go'), '');
    const resumed = await exited(spawnCli(['resume', runDir()!], env));
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);

    const after = foldEvents(log());
    expect(after.status).toBe('succeeded');
    // The seed is not planted again and the planner (done before the kill) created nothing more.
    expect(ofType(log(), 'board_task').filter((e) => e.change === 'created')).toHaveLength(3);
    expect([...after.board.values()].map((i) => [i.id, i.status, i.owner ?? '-'])).toEqual([
      ['spec', 'completed', 'plan'],
      ['1', 'completed', 'build'],
      ['2', 'pending', '-'],
    ]);
    expect(after.board.get('1')!.notes.map((n) => n.text)).toEqual(['starting', 'parser built']);

    // What `show --json` and `show` print (the same functions, in this process).
    const folder = loadRunFolder(runDir()!);
    const json = runJson(folder) as { board: { id: string; status: string }[] };
    expect(json.board.map((i) => `${i.id}:${i.status}`)).toEqual(['spec:completed', '1:completed', '2:pending']);
    const text = formatRunDetails(folder);
    expect(text).toMatch(/Board \(2\/3 completed\)/);
    expect(text).toMatch(/#1\s+completed\s+build\s+Build the parser/);
  });
});
