// `orchestrate approve|reject` against real CLI processes (issue 29, Done-when): a run waits at a
// task's approval gate making no model request (counted on a fake Anthropic server), survives
// kill -9 of its coordinator and `orchestrate resume`, then `approve` (over the control socket of
// the resumed run) runs the rest; `reject` given while no coordinator holds the run (written under
// the run's lease) makes the resume skip the task and its dependant. Who answered is in run.jsonl.
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/run/run-events.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../helpers/fake-anthropic-server.js';
import { runFolderName } from '../../helpers/run-folder.js';
import {
  cleanupTempDirs,
  conversationResponder,
  conversationKey,
  events,
  ofType,
  tempProject,
} from '../../orchestrator/helpers/run-fixtures.js';
import { exited, spawnCli, until } from '../../reliability/helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

const RECIPE = `name: gated
provider: anthropic
model: claude-haiku-4-5
tasks:
  - id: first
    prompt: "FIRST task"
  - id: gated
    needs: [first]
    prompt: "GATED task"
    approve: { prompt: "Ship it?" }
  - id: after
    needs: [gated]
    prompt: "AFTER task"
`;

/** Model requests of one task's conversation (its turns and its handoff summary). */
const requestsFor = (server: FakeAnthropic, word: string): number =>
  server.requests.filter((q) => conversationKey(q.body).includes(`${word} task`)).length;

async function harness() {
  const server = await startFakeAnthropic({
    respond: conversationResponder([
      { match: /FIRST task/, turns: [{ text: 'first done' }] },
      { match: /GATED task/, turns: [{ text: 'gated done' }] },
      { match: /AFTER task/, turns: [{ text: 'after done' }] },
    ]),
  });
  const dir = tempProject({ 'recipe.yaml': RECIPE });
  const runs = join(dir, 'runs');
  const env = { ANTHROPIC_API_KEY: 'sk-ant-gate-test', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' };
  return { server, dir, runs, env };
}

const log = (runDir: string): RunEvent[] => {
  try {
    return events(runDir);
  } catch {
    return [];
  }
};

/** Starts the run and waits until its gate is requested; returns the child and the run folder. */
async function runToGate(h: Awaited<ReturnType<typeof harness>>) {
  const child = spawnCli([join(h.dir, 'recipe.yaml'), '--run-dir', h.runs], h.env);
  const done = exited(child);
  let runDir = '';
  await until(() => {
    const name = runFolderName(h.runs);
    if (!name) return false;
    runDir = join(h.runs, name);
    return ofType(log(runDir), 'approval_requested').length > 0;
  }, 'the gate request');
  return { child, done, runDir };
}

/** A bounded look at the paused run: no request for the gated task in that time. */
async function expectNoRequestsWhileWaiting(h: Awaited<ReturnType<typeof harness>>, ms: number) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    expect(requestsFor(h.server, 'GATED')).toBe(0);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const statuses = (runDir: string) =>
  Object.fromEntries(
    (
      JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as { instances: { id: string; status: string }[] }
    ).instances.map((i) => [i.id, i.status]),
  );

describe('orchestrate approve / reject (real CLI)', { timeout: 120_000 }, () => {
  it('waits with no model request, survives kill -9 and resume, then approve runs the rest', async () => {
    const h = await harness();
    try {
      const { child, done, runDir } = await runToGate(h);
      expect(requestsFor(h.server, 'FIRST')).toBeGreaterThan(0);
      await expectNoRequestsWhileWaiting(h, 500);
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');

      const resume = exited(spawnCli(['resume', runDir], h.env));
      // The resumed coordinator asks again (same gate, same record) once it is back at the gate.
      await until(() => {
        const l = log(runDir);
        const resumedAt = l.findIndex((e) => e.type === 'run_resume');
        return resumedAt >= 0 && l.slice(resumedAt).some((e) => e.type === 'approval_requested');
      }, 'the resumed run at its gate');
      await expectNoRequestsWhileWaiting(h, 300);

      const answer = await exited(
        spawnCli(['approve', runDir, '--task', 'gated', '--as', 'alice', '--note', 'ship it'], h.env),
      );
      expect(answer.code, answer.stderr).toBe(0);
      expect(answer.stdout).toBe('approved gated: queued now\n');
      const resumed = await resume;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(requestsFor(h.server, 'GATED')).toBeGreaterThan(0);
      expect(requestsFor(h.server, 'AFTER')).toBeGreaterThan(0);
      expect(statuses(runDir)).toEqual({ first: 'done', gated: 'done', after: 'done' });
      expect(ofType(log(runDir), 'approval_given')).toEqual([
        expect.objectContaining({ key: 'gated', decision: 'approved', by: 'alice', via: 'cli', note: 'ship it' }),
      ]);
    } finally {
      await h.server.close();
    }
  });

  it('reject while no coordinator holds the run is recorded under its lease; the resume skips the task and its dependant', async () => {
    const h = await harness();
    try {
      const { child, done, runDir } = await runToGate(h);
      child.kill('SIGKILL');
      await done;
      const answer = await exited(spawnCli(['reject', runDir, '--task', 'gated', '--note', 'not this week'], h.env));
      expect(answer.code, answer.stderr).toBe(0);
      expect(answer.stdout).toMatch(/^rejected gated: recorded in run .*; `orchestrate resume .*` skips it/);
      const given = ofType(log(runDir), 'approval_given');
      expect(given).toEqual([
        expect.objectContaining({
          key: 'gated',
          decision: 'rejected',
          by: userInfo().username,
          via: 'cli',
          note: 'not this week',
          offline: true,
        }),
      ]);
      // The lease was given back: the resume takes it.
      const resumed = await exited(spawnCli(['resume', runDir], h.env));
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(statuses(runDir)).toEqual({ first: 'done', gated: 'skipped', after: 'skipped' });
      expect(requestsFor(h.server, 'GATED')).toBe(0);
      expect(requestsFor(h.server, 'AFTER')).toBe(0);
      // The token reaches no file of the run folder's log.
      expect(readFileSync(join(runDir, 'run.jsonl'), 'utf8')).not.toContain('sk-ant-gate-test');
    } finally {
      await h.server.close();
    }
  });
});
