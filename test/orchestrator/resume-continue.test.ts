// `orchestrate resume` continues each interrupted instance's loop (AgentHost.start ->
// AgentSession.resume): the real CLI, killed with kill -9 while instance a runs a write-like bash
// call and instance b (already answered) runs its verify command, then resumed against the fake
// API in strict mode (two user turns in a row would be a 400). a's cut-off call is reported to the
// model as interrupted and not run again, and a finishes with one more request; b's finished
// answer is not asked again: it makes no request at all and goes straight on to its verify. A pair
// planner cut off in a tool call gets the continue note and the worker's new report inside its
// pending turn (after the interrupted call's result), never as a second user turn. A task-level
// retry after a failed verify is different: its session's finished answer gets the continue note.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import {
  startFakeAnthropic,
  turnOrderProblem,
  type RespondInput,
  type ResponseSpec,
} from '../helpers/fake-anthropic-server.js';
import { exited, spawnCli, until } from '../reliability/helpers/reliability-fixtures.js';
import { cleanupTempDirs, conversationKey, events, ofType, sessionLines, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

type Body = {
  messages: { role: string; content: { type: string; content?: string; is_error?: boolean }[] | string }[];
};

describe('orchestrate resume continues the loop of each instance', { timeout: 120_000 }, () => {
  it('a cut-off write-like call is reported, not re-run, and the task finishes; a finished answer is not asked again', async () => {
    const sleep = `30.${process.pid}${Date.now() % 1000}`;
    const respond = ({ body }: RespondInput): ResponseSpec => {
      const item = /Do job (\w)/.exec(conversationKey(body))?.[1];
      const history = JSON.stringify(body.messages);
      if (item === 'b') return { kind: 'message', content: [{ type: 'text', text: 'done b' }] };
      if (history.includes('"tool_result"')) return { kind: 'message', content: [{ type: 'text', text: 'done a' }] };
      return {
        kind: 'message',
        content: [
          {
            type: 'tool_use',
            name: 'bash',
            input: { command: `echo started >> a.log; sleep ${sleep}; echo finished >> a.log` },
          },
        ],
      };
    };
    const server = await startFakeAnthropic({ respond, strictTurns: true });
    const dir = tempProject({
      'recipe.yaml': `name: resumey
provider: anthropic
model: claude-haiku-4-5
concurrency: 2
agents:
  worker: { tools: [bash], summaries: extractive }
tasks:
  - id: job
    for_each: [a, b]
    agent: worker
    prompt: "Do job \${{ item }}"
    verify: "test -f go || (touch verifying-\${{ item }}; sleep ${sleep})"
`,
    });
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-resume-test',
      ANTHROPIC_BASE_URL: server.url,
      ORCHESTRATE_RETRY_BASE_MS: '20',
    };
    const requestsOf = (item: string) =>
      server.requests.filter((q) => new RegExp(`Do job ${item}\\b`).test(conversationKey(q.body)));
    try {
      const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs')], env);
      const done = exited(child);
      // a is inside its bash call, b has answered and is inside its verify command.
      await until(
        () => existsSync(join(dir, 'a.log')) && existsSync(join(dir, 'verifying-b')),
        'a in its tool, b in its verify',
      );
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      expect(requestsOf('a')).toHaveLength(1);
      expect(requestsOf('b')).toHaveLength(1);

      writeFileSync(join(dir, 'go'), '');
      const runDir = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
      const r = await exited(spawnCli(['resume', runDir], env));
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const result = JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as {
        status: string;
        instances: { id: string; status: string; output: unknown }[];
      };
      expect(result.status).toBe('succeeded');
      expect(result.instances.map((i) => [i.id, i.status, i.output])).toEqual([
        ['job.a', 'done', 'done a'],
        ['job.b', 'done', 'done b'],
      ]);

      // b: its answer was there, so resume made no request for it; its verify ran again.
      expect(requestsOf('b')).toHaveLength(1);
      expect(ofType(events(runDir), 'verify').filter((e) => e.key === 'job.b' && e.ok)).toHaveLength(1);
      // a: one more request, continuing from the interrupted call's result alone (no note, no second user turn).
      const a = requestsOf('a');
      expect(a).toHaveLength(2);
      const messages = (a[1]!.body as Body).messages;
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      const last = messages[2]!.content as { type: string; content?: string; is_error?: boolean }[];
      expect(last.map((b) => b.type)).toEqual(['tool_result']);
      expect(last[0]!.is_error).toBe(true);
      expect(last[0]!.content).toMatch(/interrupted.*may or may not have taken effect/s);
      // The cut-off call never ran a second time (and the killed one never finished).
      expect(readFileSync(join(dir, 'a.log'), 'utf8')).toBe('started\n');
      for (const q of server.requests) expect(turnOrderProblem(q.body?.messages), `request ${q.index}`).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('a pair planner cut off in a tool call: the note and the new report join its pending turn; the finished worker makes no request', async () => {
    const sleep = `30.${process.pid}${Date.now() % 1000}`;
    const respond = ({ body }: RespondInput): ResponseSpec => {
      const key = conversationKey(body);
      const history = JSON.stringify(body.messages);
      if (/You review the work/.test(key)) {
        if (history.includes('"tool_result"'))
          return { kind: 'message', content: [{ type: 'text', text: 'APPROVED' }] };
        return {
          kind: 'message',
          content: [
            { type: 'tool_use', name: 'bash', input: { command: `echo started >> review.log; sleep ${sleep}` } },
          ],
        };
      }
      return { kind: 'message', content: [{ type: 'text', text: 'Wrote the greeting.' }] };
    };
    const server = await startFakeAnthropic({ respond, strictTurns: true });
    const dir = tempProject({
      'recipe.yaml': `name: pair-resume
provider: anthropic
model: claude-haiku-4-5
agents:
  planner: { tools: [bash], summaries: extractive }
  worker: { tools: [bash], summaries: extractive }
tasks:
  - id: build
    pair: { planner: planner, worker: worker, max_rounds: 2 }
    prompt: "Write the greeting."
`,
    });
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-resume-test',
      ANTHROPIC_BASE_URL: server.url,
      ORCHESTRATE_RETRY_BASE_MS: '20',
    };
    const planner = () => server.requests.filter((q) => /You review the work/.test(conversationKey(q.body)));
    const worker = () => server.requests.filter((q) => !/You review the work/.test(conversationKey(q.body)));
    try {
      const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs')], env);
      const done = exited(child);
      await until(() => existsSync(join(dir, 'review.log')), 'the planner in its tool call');
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      expect([worker().length, planner().length]).toEqual([1, 1]);

      const runDir = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
      const r = await exited(spawnCli(['resume', runDir], env));
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const build = ofType(events(runDir), 'instance_done').find((e) => e.key === 'build');
      expect(build).toMatchObject({ approved: true, output: 'Wrote the greeting.' });
      // The worker's answer was there: no request. The planner: one, continuing its own turn.
      expect([worker().length, planner().length]).toEqual([1, 2]);
      const messages = (planner()[1]!.body as Body).messages;
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      const turn = messages[2]!.content as { type: string; content?: string; text?: string; is_error?: boolean }[];
      expect(turn.map((b) => b.type)).toEqual(['tool_result', 'text']);
      expect(turn[0]!.content).toMatch(/interrupted/);
      expect(turn[1]!.text).toMatch(/previous attempt[\s\S]*The worker's report \(round 1/);
      expect(readFileSync(join(dir, 'review.log'), 'utf8')).toBe('started\n');
      for (const q of server.requests) expect(turnOrderProblem(q.body?.messages), `request ${q.index}`).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('a retry after a failed verify: the finished answer is followed by the continue note, and the agent fixes the work', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: retry-note
provider: scripted
script: script.yaml
agents:
  maker: { tools: [write] }
tasks:
  - id: make
    agent: maker
    prompt: "Make ok.txt"
    verify: "test -f ok.txt"
    verify_retries: 0
    retries: { count: 1, on: [verify_failed], backoff: { initial: 10ms } }
`,
      'script.yaml': `turns:
  - text: "I think it is done."
  - tools: [{ name: write, args: { path: ok.txt, content: "ok" } }]
  - text: "Now ok.txt exists."
`,
    });
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    expect(readFileSync(join(dir, 'ok.txt'), 'utf8')).toBe('ok');
    expect(ofType(events(r.outcome.dir), 'instance_done').map((e) => [e.key, e.attempt, e.output])).toEqual([
      ['make', 2, 'Now ok.txt exists.'],
    ]);
    const messages = sessionLines(join(r.outcome.dir, 'sessions', 'make.jsonl')).flatMap((e) =>
      (e as { type: string }).type === 'message'
        ? [(e as { message: { role: string; content: unknown } }).message]
        : [],
    );
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'toolResult', 'assistant']);
    expect(JSON.stringify(messages[2]!.content)).toMatch(
      /previous attempt at this task stopped before it was finished \(verify/,
    );
  });

  it('killed after the handoff summary but before instance_done was written: resume finishes the instance with no request', async () => {
    const respond = ({ body }: RespondInput): ResponseSpec => {
      // A summary request: by the summarizer's system prompt, or asked at the end of the conversation.
      if (/You write handoff summaries|Summarize the conversation/.test(JSON.stringify([body.system, body.messages])))
        return {
          kind: 'message',
          content: [{ type: 'text', text: '## Goal\nSay done.\n\n## Progress\n### Done\n- [x] said it' }],
        };
      return { kind: 'message', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 3_000 } };
    };
    const server = await startFakeAnthropic({ respond, strictTurns: true });
    const dir = tempProject({
      'recipe.yaml': `name: handed-off
provider: anthropic
model: claude-haiku-4-5
agents:
  worker: { tools: [bash], compaction: { keep_recent_tokens: 1 } }
tasks:
  - id: say
    agent: worker
    prompt: "Say done"
`,
    });
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-resume-test',
      ANTHROPIC_BASE_URL: server.url,
      ORCHESTRATE_RETRY_BASE_MS: '20',
    };
    try {
      const first = await exited(spawnCli([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs')], env));
      expect(first.code, first.stderr).toBe(0);
      const runDir = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
      // The answer and the handoff summary were made; the session ends with the compaction.
      expect(server.requests).toHaveLength(2);
      const session = sessionLines(join(runDir, 'sessions', 'say.jsonl')) as { type: string }[];
      expect(session.filter((e) => e.type === 'compaction')).toHaveLength(1);
      // As if the kill came right before instance_done reached the run log.
      const log = readFileSync(join(runDir, 'run.jsonl'), 'utf8').split('\n');
      const cut = log.findIndex((l) => l.includes('"type":"instance_done"'));
      expect(cut).toBeGreaterThan(0);
      writeFileSync(join(runDir, 'run.jsonl'), `${log.slice(0, cut).join('\n')}\n`);

      const r = await exited(spawnCli(['resume', runDir], env));
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(server.requests).toHaveLength(2);
      const done = ofType(events(runDir), 'instance_done');
      expect(done.map((e) => [e.key, e.attempt, e.output])).toEqual([['say', 2, 'done']]);
      expect(done[0]!.summary).toMatch(/said it/);
    } finally {
      await server.close();
    }
  });
});
