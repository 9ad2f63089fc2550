// The task board in a distributed run: agents on two `orchestrate worker` processes reach the
// coordinator's one board through Redis (board calls travel like every port message), so of two
// agents on different machines racing for one task exactly one takes it, and a task created on one
// worker is seen and completed from the other. Command hooks travel with the instance and run
// on the worker like its other commands.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runOnCluster } from './helpers/run-on-cluster.js';
import { foldEvents } from '../../src/run/run-fold.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { SECRET_ENV, useCluster, type WorkerProcess } from './helpers/cluster-fixture.js';

const cluster = useCluster('distributed task board');
const skip = cluster.skip;
const workers: WorkerProcess[] = [];
afterAll(() => cleanupTempDirs());

/** Starts a worker of one agent at a time; the run is over when the file ends, so it need not drain long. */
async function startWorker(name: string): Promise<void> {
  workers.push(await cluster.startWorker(name, { concurrency: 1, drainLimitMs: 2_000 }));
}

describe.skipIf(skip)('task board over Redis', () => {
  it('agents on two workers share one board: one claim wins, the other is told who owns the task', async () => {
    await Promise.all([startWorker('east'), startWorker('west')]);
    const dir = tempProject({
      'recipe.yaml': `name: board-cluster
provider: scripted
script: script.yaml
concurrency: 2
board: [Fix the login bug]
agents:
  dev: { tools: [read] }
tasks:
  - id: dev
    agent: dev
    for_each: [a, b]
    prompt: "You are developer \${{ item }}"
`,
      'script.yaml': `conversations:
  - match: "You are developer (\\\\w+)"
    turns:
      - tools: [{ name: task_update, args: { id: "1", status: in_progress } }]
      - tools: [{ name: task_create, args: { subject: "Follow-up from {{match.1}}" } }]
      - tools: [{ name: task_list, args: {} }]
      - text: done
`,
    });
    const outcome = await runOnCluster(cluster.redis.url, SECRET_ENV, dir);
    expect(outcome.status).toBe('succeeded');
    const log = events(outcome.dir);
    // The two agents ran on different workers.
    const workers = new Set(ofType(log, 'instance_start').map((e) => e.worker));
    expect(workers).toEqual(new Set(['east', 'west']));
    const claims = ofType(log, 'board_task').filter((e) => e.change === 'claimed');
    expect(claims).toHaveLength(1);
    const winner = claims[0]!.by;
    const updates = ofType(log, 'agent_event').filter(
      (e) => e.event.type === 'tool_execution_end' && e.event.toolName === 'task_update',
    );
    expect(updates).toHaveLength(2);
    const lost = updates.find((e) => (e.event as { isError?: boolean }).isError === true)!;
    expect(lost.key).not.toBe(winner);
    expect(JSON.stringify(lost.event)).toContain(`task #1 is owned by ${winner}`);
    // Each agent created a task, and each saw the other's in its list: one board for both machines.
    const board = foldEvents(log).board;
    expect([...board.values()].map((i) => i.subject).sort()).toEqual([
      'Fix the login bug',
      'Follow-up from a',
      'Follow-up from b',
    ]);
    const lists = ofType(log, 'agent_event').filter(
      (e) => e.event.type === 'tool_execution_end' && e.event.toolName === 'task_list',
    );
    expect(lists).toHaveLength(2);
    // The later of the two lists shows both follow-ups.
    expect(lists.some((e) => /Follow-up from a[\s\S]*Follow-up from b/.test(JSON.stringify(e.event)))).toBe(true);
  }, 180_000);
  it('hooks reach agents on a worker: a recipe PreToolUse hook blocks rm -rf there and its run is in the log', async () => {
    // Workers from the test above are reused when it ran; started here when this test runs alone.
    if (!workers.some((w) => w.child.exitCode === null)) await startWorker('solo');
    const dir = tempProject({
      'recipe.yaml': `name: hooks-cluster
provider: scripted
script: script.yaml
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "grep -q 'rm -rf' && { echo 'rm -rf is not allowed on this cluster' >&2; exit 2; }; exit 0"
agents:
  cleaner: { tools: [bash] }
tasks:
  - id: clean
    agent: cleaner
    prompt: Clean up the project
`,
      'keep/file.txt': 'keep me\n',
      'script.yaml': `conversations:
  - match: Clean up
    turns:
      - tools: [{ name: bash, args: { command: "rm -rf keep" } }]
      - text: I was not allowed to remove keep/.
`,
    });
    const outcome = await runOnCluster(cluster.redis.url, SECRET_ENV, dir);
    expect(outcome.status).toBe('succeeded');
    const log = events(outcome.dir);
    expect(ofType(log, 'instance_start')[0]?.worker).toBeTruthy();
    // The file survived (the landed patch deletes nothing) and the model read the hook's reason.
    expect(readFileSync(join(dir, 'keep/file.txt'), 'utf8')).toBe('keep me\n');
    const bash = ofType(log, 'agent_event').filter(
      (e) => e.event.type === 'tool_execution_end' && e.event.toolName === 'bash',
    );
    expect(bash).toHaveLength(1);
    expect(JSON.stringify(bash[0]!.event)).toContain('rm -rf is not allowed on this cluster');
    const runs = ofType(log, 'agent_event').filter((e) => e.event.type === 'hook_run');
    expect(runs.map((e) => (e.event as { hookEvent?: string }).hookEvent)).toContain('PreToolUse');
  }, 180_000);
});
