import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { showCommand } from '../../../src/cli/commands/show.js';
import { FileRunLease } from '../../../src/run/run-lease.js';
import { RunStore } from '../../../src/run/run-store.js';
import { invoke } from '../../display/fixtures/invoke-command.js';
import { writeSyntheticRun } from '../../display/fixtures/synthetic-run.js';

function setup() {
  const cwd = mkdtempSync(join(tmpdir(), 'cli-show-'));
  const { store } = writeSyntheticRun(join(cwd, '.orchestrate', 'runs'), '20260101-120000-abcd');
  return { cwd, store };
}

describe('orchestrate show', () => {
  it('shows statuses, outputs, errors with their class, usage per instance, attempts and the merged plan', async () => {
    const { cwd } = setup();
    const r = await invoke(showCommand, ['show', '20260101'], { cwd });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^run 20260101-120000-abcd · rename-logger · recipes\/rename-logger\.yaml\nstatus: failed/);
    expect(r.out).toMatch(/apply\.repo-c {2}failed in 1\.2s\n {4}usage: 0 turns · 1,540 tokens/);
    expect(r.out).toContain('error (timeout): no progress for 10m');
    expect(r.out).toMatch(/attempt 1: retry after .*overloaded: provider overloaded \(529\) \(retried after 300ms\)/);
    expect(r.out).toContain('output: Renamed 4 calls in repo-a.');
    expect(r.out).toContain('skipped: needs apply');
    expect(r.out).toMatch(/plan \(.*plan\.md\)\n# rename-logger/);
  });

  it('--instance prints that agent conversation from its session file', async () => {
    const { cwd } = setup();
    const r = await invoke(showCommand, ['show', '20260101-120000-abcd', '--instance', 'apply.repo-b'], { cwd });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^apply\.repo-b \(done\) in run 20260101-120000-abcd\nsession: .*sessions\/apply\.repo-b\.jsonl/,
    );
    expect(r.out).toMatch(/user\n {2}Rename log\(\) to logger\.info\(\) in repo-b/);
    expect(r.out).toContain('→ read({"path":"repos/repo-b/src/log.ts"})');
    expect(r.out).toMatch(/assistant.*\n {2}Renamed 2 calls in repo-b\./);
  });

  it("--json prints the run with every instance as data, and with --instance that agent's conversation", async () => {
    const { cwd } = setup();
    const r = await invoke(showCommand, ['show', '20260101', '--json'], { cwd });
    expect(r.code).toBe(0);
    const run = JSON.parse(r.out) as {
      runId: string;
      status: string;
      instances: { key: string; status: string; failure?: string; output?: unknown; attempts: unknown[] }[];
    };
    expect(run).toMatchObject({ runId: '20260101-120000-abcd', status: 'failed' });
    const byKey = Object.fromEntries(run.instances.map((i) => [i.key, i]));
    expect(byKey['apply.repo-c']).toMatchObject({ status: 'failed', failure: 'timeout' });
    expect(byKey['apply.repo-a']?.output).toBe('Renamed 4 calls in repo-a.');
    const one = await invoke(showCommand, ['show', '20260101', '--instance', 'apply.repo-b', '--json'], { cwd });
    expect(one.code).toBe(0);
    const conv = JSON.parse(one.out) as { key: string; conversation: { kind: string; text?: string }[] };
    expect(conv.key).toBe('apply.repo-b');
    expect(conv.conversation[0]).toMatchObject({
      kind: 'user',
      text: expect.stringContaining('Rename log() to logger.info() in repo-b'),
    });
    expect(conv.conversation.at(-1)).toMatchObject({
      kind: 'assistant',
      text: expect.stringContaining('Renamed 2 calls in repo-b.'),
    });
  });

  it('accepts the path of a run folder, relative to the current folder', async () => {
    const { cwd } = setup();
    const r = await invoke(showCommand, ['show', '.orchestrate/runs/20260101-120000-abcd'], { cwd });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^run 20260101-120000-abcd/);
  });

  it('an unknown run exits 2 and lists the recent runs', async () => {
    const { cwd } = setup();
    const r = await invoke(showCommand, ['show', 'nope'], { cwd });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /no run "nope" in .*\.orchestrate\/runs\n {2}recent runs:\n {4}20260101-120000-abcd {2}rename-logger .* failed/,
    );
  });

  it('an unknown instance exits 2 and lists the instances', async () => {
    const { cwd } = setup();
    const r = await invoke(showCommand, ['show', '20260101', '--instance', 'apply.repo-z'], { cwd });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /no instance "apply\.repo-z".*\n {2}instances: plan, apply\.repo-a, apply\.repo-b, apply\.repo-c, review/,
    );
  });
  it('a run whose coordinator holds its lease shows as running with pid, host and since when; without one, a log with no run_end is interrupted', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-show-'));
    const store = RunStore.create(join(cwd, '.orchestrate', 'runs'), '20260105-080000-cafe');
    store.append({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'r',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 't', keys: ['t'], needs: [], dynamic: false }],
    });
    store.append({ type: 'instance_start', task: 't', key: 't', attempt: 1 });
    const cut = await invoke(showCommand, ['show', '20260105'], { cwd });
    expect(cut.out).toContain('status: interrupted (no run_end in the log)');
    expect(JSON.parse((await invoke(showCommand, ['show', '20260105', '--json'], { cwd })).out)).toMatchObject({
      status: 'interrupted',
    });

    const lease = new FileRunLease(store.dir);
    expect(lease.acquireSync().ok).toBe(true);
    const live = await invoke(showCommand, ['show', '20260105'], { cwd });
    expect(live.out).toMatch(
      new RegExp(
        `status: running \\(coordinator pid ${process.pid} on host ${hostname()}, since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC \\(last heartbeat \\d+ s ago\\)\\)`,
      ),
    );
    const json = JSON.parse((await invoke(showCommand, ['show', '20260105', '--json'], { cwd })).out) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({ status: 'running', coordinator: { pid: process.pid, host: hostname() } });
    lease.releaseSync();
  });
});
