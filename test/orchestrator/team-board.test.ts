// The run-wide task board end to end, offline (scripted model) on real worker threads: agents
// racing for one task never both get it, and a team of three agents from Claude Code style team
// files (a lead that plans and reviews, two workers) coordinates through the board and
// send_message until every task is completed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { buildHtmlReport } from '../../src/display/html-report.js';
import { frameHeader } from '../../src/display/live-frame.js';
import { PlainLog } from '../../src/display/plain-log.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import { makePainter } from '../../src/display/terminal-text.js';
import { foldEvents } from '../../src/run/run-fold.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { cleanupTempDirs, events, ofType, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

async function run(dir: string) {
  const r = await runRecipeFile(
    join(dir, 'recipe.yaml'),
    { cwd: dir, env: { ...process.env, ANTHROPIC_API_KEY: '' } },
    { runsDir: join(dir, 'runs') },
  );
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { out: r.outcome, log: events(r.outcome.dir) };
}

/** The results of one tool's calls, as the agents' tool_execution_end events carry them. */
function toolResults(log: RunEvent[], tool: string): { key: string; isError: boolean; text: string }[] {
  return ofType(log, 'agent_event')
    .filter((e) => e.event.type === 'tool_execution_end' && e.event.toolName === tool)
    .map((e) => {
      const ev = e.event as { isError?: boolean; result?: { content?: { text?: string }[] } };
      return {
        key: e.key,
        isError: ev.isError === true,
        text: (ev.result?.content ?? []).map((c) => c.text ?? '').join(''),
      };
    });
}

describe('task board', () => {
  it('six agents on real threads race for one task: exactly one takes it, the others are told who owns it', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: race
provider: scripted
script: script.yaml
concurrency: 6
board:
  - Fix the flaky login test
agents:
  grabber: { tools: [read] }
tasks:
  - id: grab
    agent: grabber
    for_each: [a, b, c, d, e, f]
    prompt: "Take the task on the board, you are \${{ item }}"
`,
      'script.yaml': `turns:
  - tools: [{ name: task_update, args: { id: "1", status: in_progress } }]
  - text: done
`,
    });
    const { out, log } = await run(dir);
    expect(out.status).toBe('succeeded');
    // The agents got the board tools by default (a fan-out runs several agents) without naming them.
    const claims = ofType(log, 'board_task').filter((e) => e.change === 'claimed');
    expect(claims).toHaveLength(1);
    const winner = claims[0]!.by;
    const results = toolResults(log, 'task_update');
    expect(results).toHaveLength(6);
    expect(results.filter((r) => !r.isError).map((r) => r.key)).toEqual([winner]);
    for (const lost of results.filter((r) => r.isError))
      expect(lost.text).toContain(`task #1 is owned by ${winner} (in progress)`);
    const board = foldEvents(log).board;
    expect(board.get('1')).toMatchObject({ status: 'in_progress', owner: winner, createdBy: 'recipe' });
  });

  // The files name Claude Code's tools (TaskCreate, SendMessage...): they map onto the board's and send_message.
  it('a team of three from Claude Code team files: the lead plans on the board, two workers claim, message the lead and complete', async () => {
    const agentFile = (name: string, description: string, tools: string, body: string) =>
      `---\nname: ${name}\ndescription: ${description}\ntools: ${tools}\nmodel: sonnet\ncolor: blue\n---\n\n${body}\n`;
    const dir = tempProject({
      '.claude/agents/team-lead.md': agentFile(
        'team-lead',
        'Splits the work into tasks on the shared board and reviews what the team did.',
        'Read, Glob, Grep, TaskCreate, TaskList, TaskGet, TaskUpdate, SendMessage',
        'You are the team lead. Break the work into tasks on the task board, then review.',
      ),
      '.claude/agents/docs-writer.md': agentFile(
        'docs-writer',
        'Writes documentation tasks from the board.',
        'Read, Write, Edit, Bash, TaskList, TaskGet, TaskUpdate, SendMessage',
        'You are the docs writer of the team. Take documentation tasks from the board.',
      ),
      '.claude/agents/test-writer.md': agentFile(
        'test-writer',
        'Writes tests for tasks on the board.',
        'Read, Write, Edit, Bash, TaskList, TaskGet, TaskUpdate, SendMessage',
        'You are the test writer of the team. Take testing tasks from the board.',
      ),
      'recipe.yaml': `name: team
provider: scripted
script: script.yaml
agents:
  lead: { system_file: .claude/agents/team-lead.md }
  docs: { system_file: .claude/agents/docs-writer.md }
  tests: { system_file: .claude/agents/test-writer.md }
tasks:
  - id: plan
    agent: lead
    prompt: Plan the slugify release on the task board.
  - id: docs
    agent: docs
    needs: [plan]
    prompt: Work on the board as the docs writer.
  - id: tests
    agent: tests
    needs: [plan]
    prompt: Work on the board as the test writer.
  - id: review
    agent: lead
    needs: [docs, tests]
    prompt: Review the release work on the board.
`,
      'script.yaml': `conversations:
  - match: "Plan the slugify release"
    turns:
      - tools:
          - { name: task_create, args: { subject: Document slugify in README.md, description: One paragraph and an example } }
          - { name: task_create, args: { subject: Write slugify tests, description: "Cover accents and punctuation" } }
          - { name: task_create, args: { subject: Review the release, blocked_by: ["1", "2"] } }
      - tools: [{ name: task_list, args: {} }]
      - text: Three tasks are on the board; docs and tests can start now, the review waits for both.
  - match: "as the docs writer"
    turns:
      - tools: [{ name: task_list, args: { status: pending } }]
      - tools: [{ name: task_update, args: { id: "1", status: in_progress } }]
      - tools: [{ name: write, args: { path: README.md, content: "slugify(text) turns text into a-url-slug.\\n" } }]
      - tools:
          - { name: task_update, args: { id: "1", status: completed, notes: README.md documents slugify } }
          - { name: send_message, args: { to: review, text: "Task 1 done: README.md documents slugify." } }
      - text: Documented slugify.
  - match: "as the test writer"
    turns:
      - tools: [{ name: task_get, args: { id: "2" } }]
      - tools: [{ name: task_update, args: { id: "2", status: in_progress } }]
      - tools: [{ name: write, args: { path: slugify.test.js, content: "// accents and punctuation\\n" } }]
      - tools:
          - { name: task_update, args: { id: "2", status: completed, notes: slugify.test.js covers accents } }
          - { name: send_message, args: { to: review, text: "Task 2 done: tests in slugify.test.js." } }
      - text: Wrote the tests.
  - match: "Review the release work"
    turns:
      - tools: [{ name: task_update, args: { id: "3", status: in_progress } }]
      - tools: [{ name: read, args: { path: README.md } }]
      - tools: [{ name: task_update, args: { id: "3", status: completed, notes: Both parts are in } }]
      - text: Release reviewed; every task on the board is completed.
`,
    });
    const { out, log } = await run(dir);
    expect(out.status).toBe('succeeded');
    const state = foldEvents(log);
    expect(
      [...state.board.values()].map((i) => ({ id: i.id, status: i.status, owner: i.owner, createdBy: i.createdBy })),
    ).toEqual([
      { id: '1', status: 'completed', owner: 'docs', createdBy: 'plan' },
      { id: '2', status: 'completed', owner: 'tests', createdBy: 'plan' },
      { id: '3', status: 'completed', owner: 'review', createdBy: 'plan' },
    ]);
    expect(state.board.get('3')!.blockedBy).toEqual(['1', '2']);
    // No board call failed, and the workers' messages reached the lead's review.
    for (const tool of ['task_create', 'task_list', 'task_get', 'task_update'])
      expect(toolResults(log, tool).filter((r) => r.isError)).toEqual([]);
    expect(
      ofType(log, 'message')
        .map((m) => `${m.from}->${m.to}`)
        .sort(),
    ).toEqual(['docs->review', 'tests->review']);
    const review = state.instances.get('review\u0000review')!;
    const session = readFileSync(review.sessionFile!, 'utf8');
    expect(session).toContain('Task 1 done: README.md documents slugify.');
    expect(session).toContain('Task 2 done: tests in slugify.test.js.');
    // The lead saw the board as the workers left it (its list showed what blocks the review).
    expect(toolResults(log, 'task_list').find((r) => r.key === 'plan')!.text).toContain(
      '#3 [pending] Review the release (unowned, blocked by #1, #2)',
    );
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('slugify');
    // Every view shows the board: the live frame's and watch's header, the plain log, report.html.
    const header = frameHeader(state, { width: 200, height: 40, now: Date.now(), painter: makePainter(false) });
    expect(header).toContain('board 3/3 completed');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const plain = new PlainLog(sink);
    for (const e of log) plain.handle(e);
    expect(lines.join('')).toMatch(/board #1 claimed by docs: Document slugify in README\.md/);
    expect(lines.join('')).toMatch(/board #3 completed by review: Review the release/);
    const html = buildHtmlReport(loadRunFolder(out.dir));
    expect(html).toContain('<h2>Task board');
    expect(html).toContain('Both parts are in');
  });

  it('for_each: board fans out over the items open when the task starts, one instance per item', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: fan-board
provider: scripted
script: script.yaml
board:
  - Write the changelog
  - { id: docs, subject: Update the docs }
tasks:
  - id: plan
    prompt: Plan the release.
  - id: work
    needs: [plan]
    for_each: board
    prompt: "Do task #\${{ item.id }}: \${{ item.subject }}"
`,
      'script.yaml': `conversations:
  - match: "Plan the release"
    turns:
      - tools:
          - { name: task_create, args: { subject: Tag the release } }
          - { name: task_update, args: { id: "1", status: completed, notes: nothing to log } }
      - text: planned
  - match: "Do task #([a-z0-9]+)"
    turns:
      - tools: [{ name: task_update, args: { id: "{{match.1}}", status: in_progress } }]
      - tools: [{ name: task_update, args: { id: "{{match.1}}", status: completed } }]
      - text: done
`,
    });
    const { out, log } = await run(dir);
    expect(out.status).toBe('succeeded');
    // #1 was completed by the planner before work started: no instance for it.
    expect(ofType(log, 'task_expanded').find((e) => e.task === 'work')!.keys).toEqual(['work.docs', 'work.2']);
    const board = foldEvents(log).board;
    expect([...board.values()].map((i) => `${i.id}:${i.status}:${i.owner}`)).toEqual([
      '1:completed:plan',
      'docs:completed:work.docs',
      '2:completed:work.2',
    ]);
  });

  it('a worker that fails for good gives its task back: the next agent takes it', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: give-back
provider: scripted
script: script.yaml
board: [Fix the bug]
tasks:
  - id: first
    prompt: First try at the bug.
    on_failure: continue
  - id: second
    needs: [first]
    prompt: Second try at the bug.
`,
      'script.yaml': `conversations:
  - match: "First try"
    turns:
      - tools: [{ name: task_update, args: { id: "1", status: in_progress } }]
      - { error: "invalid_request_error: the request is malformed" }
  - match: "Second try"
    turns:
      - tools: [{ name: task_update, args: { id: "1", status: in_progress } }]
      - tools: [{ name: task_update, args: { id: "1", status: completed } }]
      - text: fixed
`,
    });
    const { log } = await run(dir);
    expect(ofType(log, 'instance_failed').find((e) => e.key === 'first')).toMatchObject({ final: true });
    const changes = ofType(log, 'board_task').map((e) => `${e.change}:${e.by}`);
    expect(changes).toEqual([
      'created:recipe',
      'claimed:first',
      'released:orchestrate',
      'claimed:second',
      'completed:second',
    ]);
    expect(
      foldEvents(log)
        .board.get('1')!
        .notes.map((n) => n.text),
    ).toEqual(['released: first failed (error)']);
  });
});
