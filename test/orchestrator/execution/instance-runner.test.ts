// How instances run and fail, end to end with worker threads and the scripted model: timeouts,
// stalls, fail-fast, on_failure/max_failed, JSON output fixes, worktrees, shell steps and a
// dynamic fan-out over a step's output.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, gitInit, ofType, sessionLines, tempProject } from '../helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

async function run(files: Record<string, string>, before?: (dir: string) => void) {
  const dir = tempProject(files);
  before?.(dir);
  const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, out: r.outcome, log: events(r.outcome.dir) };
}

const statuses = (out: { tasks: { instances: { id: string; status: string }[] }[] }) =>
  Object.fromEntries(out.tasks.flatMap((t) => t.instances.map((i) => [i.id, i.status])));

describe('instance failures and policies', () => {
  it('a timeout aborts the instance (class timeout), is retried per policy, then fails for good', async () => {
    // The reply would take an hour: the run ends only because each attempt's timeout aborts it.
    const { out, log } = await run({
      'recipe.yaml': `name: slow
provider: scripted
script: script.yaml
tasks:
  - id: slow
    prompt: "Take your time"
    timeout: 300ms
    retries: { count: 1, on: [timeout], backoff: { initial: 10ms } }
`,
      'script.yaml': `turns:
  - { text: "too late", delay_ms: 3600000 }
`,
    });
    expect(out.status).toBe('failed');
    expect(ofType(log, 'instance_retry').map((e) => e.failure)).toEqual(['timeout']);
    expect(ofType(log, 'instance_failed').map((e) => [e.failure, e.final])).toEqual([['timeout', true]]);
  });

  it('an agent idle past idle_timeout is asked to wrap up, then stopped as stalled with its session intact', async () => {
    const { out, log } = await run({
      'recipe.yaml': `name: idle
provider: scripted
script: script.yaml
agents:
  sleeper: { tools: [bash] }
tasks:
  - id: nap
    agent: sleeper
    prompt: "Wait for the build"
    idle_timeout: 300ms
`,
      'script.yaml': `turns:
  - tools: [{ name: bash, args: { command: "sleep 20" } }]
  - text: "built"
`,
    });
    expect(out.status).toBe('failed');
    const kinds = log
      .filter((e) => e.type === 'agent_event' || e.type === 'instance_failed')
      .map((e) => (e.type === 'agent_event' ? e.event.type : e.type));
    expect(kinds.indexOf('wrap_up_requested')).toBeGreaterThan(-1);
    expect(kinds.indexOf('wrap_up_requested')).toBeLessThan(kinds.indexOf('instance_failed'));
    expect(ofType(log, 'instance_failed')[0]).toMatchObject({ failure: 'stalled', final: true });
    expect(sessionLines(join(out.dir, 'sessions', 'nap.jsonl')).length).toBeGreaterThan(1);
  });

  it('fail-fast: a failed task stops new work and skips its dependents; running instances finish', async () => {
    const { out, log } = await run({
      'recipe.yaml': `name: failfast
provider: scripted
script: script.yaml
concurrency: 2
tasks:
  - id: broken
    prompt: "Break"
  - id: busy
    prompt: "Be busy"
  - id: later
    prompt: "Start later"
  - id: after
    needs: [broken]
    prompt: "After broken"
`,
      'script.yaml': `conversations:
  - match: "Break"
    turns:
      - error: "400 invalid_request_error: this request cannot work"
  - match: "Be busy"
    turns:
      - { text: "busy done", delay_ms: 400 }
  - match: "."
    turns:
      - text: "ran"
`,
    });
    expect(out.status).toBe('failed');
    expect(statuses(out)).toEqual({ broken: 'failed', busy: 'done', later: 'skipped', after: 'skipped' });
    const skipped = Object.fromEntries(ofType(log, 'instance_skipped').map((e) => [e.key, e.reason]));
    expect(skipped.later).toMatch(/not started.*broken failed/);
    expect(skipped.after).toMatch(/not started|broken/);
    expect(ofType(log, 'instance_failed')[0]).toMatchObject({ key: 'broken', failure: 'error' });
  });

  it('on_failure continue with max_failed: the fan-out is cancelled past the limit, dependents still run', async () => {
    const { out, log } = await run({
      'recipe.yaml': `name: tolerant
provider: scripted
script: script.yaml
tasks:
  - id: each
    for_each: [one, two, three, four]
    prompt: "Item \${{ item }}"
    max_parallel: 1
    max_failed: 1
    on_failure: continue
  - id: after
    needs: [each]
    prompt: "Summarize \${{ length(tasks.each.output) }} results"
`,
      'script.yaml': `conversations:
  - match: "Item (one|two)"
    turns:
      - error: "400 invalid_request_error: item {{match.1}} is broken"
  - match: "Summarize (\\\\d+) results"
    turns:
      - text: "summarized {{match.1}}"
  - match: "."
    turns:
      - text: "fine"
`,
    });
    expect(out.status).toBe('failed');
    expect(statuses(out)).toEqual({
      'each.one': 'failed',
      'each.two': 'failed',
      'each.three': 'skipped',
      'each.four': 'skipped',
      after: 'done',
    });
    expect(ofType(log, 'instance_skipped').find((e) => e.key === 'each.three')!.reason).toMatch(/max_failed 1/);
    expect(ofType(log, 'instance_done').find((e) => e.key === 'after')!.output).toBe('summarized 0');
  });

  it('invalid JSON output is sent back once; a second bad answer fails as output_invalid', async () => {
    const { out, log } = await run({
      'recipe.yaml': `name: json
provider: scripted
script: script.yaml
tasks:
  - id: fixed
    prompt: "Count A"
    output: json
    output_schema: { type: object, required: [n], properties: { n: { type: number } } }
  - id: hopeless
    prompt: "Count B"
    output: json
    output_schema: { type: object, required: [n], properties: { n: { type: number } } }
`,
      'script.yaml': `conversations:
  - match: "Count A"
    turns:
      - text: "There are three."
      - text: "\`\`\`json\\n{\\"n\\": 3}\\n\`\`\`"
  - match: "Count B"
    turns:
      - text: '{"count": 3}'
      - text: '{"still": "wrong"}'
`,
    });
    expect(statuses(out)).toEqual({ fixed: 'done', hopeless: 'failed' });
    expect(ofType(log, 'instance_done')[0]!.output).toEqual({ n: 3 });
    const failed = ofType(log, 'instance_failed')[0]!;
    expect(failed.failure).toBe('output_invalid');
    expect(failed.error).toMatch(/output_schema: n/);
    expect(JSON.stringify(sessionLines(join(out.dir, 'sessions', 'fixed.jsonl')))).toContain('could not be used');
  });

  it('isolation: worktree runs the agent in its own worktree; the patch holds the change and the checkout stays clean', async () => {
    const { dir, out } = await run(
      {
        'recipe.yaml': `name: isolated
provider: scripted
script: script.yaml
agents:
  editor: { tools: [edit] }
tasks:
  - id: change
    agent: editor
    cwd: repo
    isolation: worktree
    prompt: "Change the greeting"
`,
        'script.yaml': `turns:
  - tools: [{ name: edit, args: { path: hello.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
  - text: "changed"
`,
        'repo/hello.txt': 'hello\n',
      },
      (d) => gitInit(join(d, 'repo')),
    );
    expect(out.status).toBe('succeeded');
    expect(readFileSync(join(dir, 'repo', 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: join(dir, 'repo') }).toString()).toBe('');
    const patch = readFileSync(join(out.dir, 'patches', 'change.diff'), 'utf8');
    expect(patch).toContain('-hello');
    expect(patch).toContain('+goodbye');
    expect(readFileSync(join(out.dir, 'worktrees', 'change', 'hello.txt'), 'utf8')).toBe('goodbye\n');
    const plan = readFileSync(out.planFile, 'utf8');
    expect(plan).toContain('repo/hello.txt — change');
  });

  it('a shell step feeds a dynamic fan-out through its JSON output', async () => {
    const { dir, out, log } = await run({
      'recipe.yaml': `name: dynamic
provider: scripted
script: script.yaml
tasks:
  - id: list
    run: "echo '{\\"items\\": [\\"red\\", \\"green\\"]}'"
    output: json
  - id: paint
    needs: [list]
    for_each: \${{ tasks.list.output.items }}
    prompt: "Paint it \${{ item }}"
  - id: touch
    run: "touch touched.txt && echo ok"
`,
      'script.yaml': `conversations:
  - match: "Paint it (\\\\w+)"
    turns:
      - text: "painted {{match.1}}"
`,
    });
    expect(out.status).toBe('succeeded');
    expect(ofType(log, 'task_expanded').find((e) => e.task === 'paint')!.keys).toEqual(['paint.red', 'paint.green']);
    expect(ofType(log, 'instance_done').map((e) => [e.key, e.output])).toEqual(
      expect.arrayContaining([
        ['list', { items: ['red', 'green'] }],
        ['paint.red', 'painted red'],
        ['paint.green', 'painted green'],
        ['touch', 'ok'],
      ]),
    );
    expect(existsSync(join(dir, 'touched.txt'))).toBe(true);
  });
});
