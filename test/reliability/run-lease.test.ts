// One coordinator per run, through the real CLI against the fake Anthropic API: `resume` of a
// live run is refused (exit 2, naming the holder) and the live run finishes normally; `runs` and
// `show` say `running`; two resumes started together: exactly one proceeds, the other writes
// nothing; after kill -9 the lease is free at once; a lease from another host whose heartbeat is
// old is taken over (a fresh one is not); a coordinator that loses its lease stops and writes
// nothing more. The model's replies are held at a gate, so every step waits on an event (a
// request at the server, a line in run.jsonl, a process exit), never on time.
// The five tests run at the same time (#43): each has its own fake API, project and run folder,
// and none times anything, so they only share the CPU; serially, each CLI start waited for the
// one before it while the other core idled, and the lost-lease test waited out a 5 s heartbeat.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { leaseFile, leaseState, readRunLease, type LeaseHolder } from '../../src/run/run-lease.js';
import {
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeBlock,
  type RespondInput,
  type ResponseSpec,
} from '../helpers/fake-anthropic-server.js';
import { cleanupTempDirs, conversationKey, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { isSummaryRequest } from '../helpers/summary-request.js';
import { exited, printSummary, spawnCli, until } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

/** Only a guard against a hang (each test's own limit is 120 s): five CLIs start at once on a busy machine. */
const HANG_GUARD_MS = 110_000;

const recipe = (items: string[]) => `name: leased
provider: anthropic
model: claude-haiku-4-5
concurrency: ${items.length}
agents:
  writer: { tools: [bash] }
tasks:
  - id: write
    for_each: [${items.join(', ')}]
    agent: writer
    prompt: "Write the marker for \${{ item }}"
`;

const itemOf = (body: unknown): string =>
  /Write the marker for (\w+)/.exec(conversationKey(body as Parameters<typeof conversationKey>[0]))?.[1] ?? '?';
const isSummary = (body: Parameters<typeof isSummaryRequest>[0]): boolean => isSummaryRequest(body);
/** A first turn: the history has no tool result yet (the agent has not run its bash call). */
const isFirstTurn = (body: { system?: unknown; messages?: unknown }): boolean =>
  !isSummary(body) && !JSON.stringify(body.messages).includes('"tool_result"');

/** A fake model whose first-turn replies for the gated items wait until the gate opens. */
interface Model {
  server: FakeAnthropic;
  open(): void;
  close(): Promise<void>;
  /** First-turn requests (a bash call about to be asked for) of one item. */
  firstTurns(item: string): number;
}

async function gatedModel(gated: (item: string) => boolean): Promise<Model> {
  let isOpen = false;
  const waiting: (() => void)[] = [];
  const gate = (): Promise<void> => (isOpen ? Promise.resolve() : new Promise((r) => waiting.push(r)));
  const respond = async ({ body }: RespondInput): Promise<ResponseSpec> => {
    const item = itemOf(body);
    if (isSummary(body))
      return {
        kind: 'message',
        content: [
          {
            type: 'text',
            text: `## Goal\nWrite the marker for ${item}.\n\n## Progress\n### Done\n- [x] wrote the marker`,
          },
        ],
      };
    if (isFirstTurn(body) && gated(item)) await gate();
    const content: FakeBlock[] = isFirstTurn(body)
      ? [{ type: 'tool_use', name: 'bash', input: { command: `printf 'marker-${item}\\n' >> ${item}.txt` } }]
      : [{ type: 'text', text: `done ${item}` }];
    return { kind: 'message', content };
  };
  const server = await startFakeAnthropic({ respond });
  const open = (): void => {
    isOpen = true;
    for (const w of waiting.splice(0)) w();
  };
  return {
    server,
    open,
    close: async () => {
      open();
      await server.close();
    },
    firstTurns: (item) => server.requests.filter((q) => itemOf(q.body) === item && isFirstTurn(q.body)).length,
  };
}

interface Project {
  dir: string;
  runs: string;
  env: Record<string, string>;
}

function project(model: Model, items: string[]): Project {
  const dir = tempProject({ 'recipe.yaml': recipe(items) });
  return {
    dir,
    runs: join(dir, 'runs'),
    env: {
      ANTHROPIC_API_KEY: 'sk-ant-lease-test',
      ANTHROPIC_BASE_URL: model.server.url,
      ORCHESTRATE_RETRY_BASE_MS: '20',
    },
  };
}

function runDirOf(runs: string): string | undefined {
  if (!existsSync(runs)) return undefined;
  const name = readdirSync(runs).find((n) => existsSync(join(runs, n, 'run.jsonl')));
  return name ? join(runs, name) : undefined;
}

const noStack = (text: string): void => expect(text).not.toMatch(/\n\s+at .+[:(]\d+/);
const markerOf = (p: Project, item: string): string =>
  existsSync(join(p.dir, `${item}.txt`)) ? readFileSync(join(p.dir, `${item}.txt`), 'utf8') : '';
const topLeaseGeneration = (runDir: string): number =>
  Math.max(
    0,
    ...readdirSync(runDir)
      .flatMap((n) => /^lease\.(\d+)\.json$/.exec(n)?.[1] ?? [])
      .map(Number),
  );

/** Starts a run whose first turns all wait at the gate, and kills it with SIGKILL once every item is waiting. */
async function killedRun(model: Model, p: Project, items: string[]): Promise<string> {
  const child = spawnCli([join(p.dir, 'recipe.yaml'), '--run-dir', p.runs], p.env);
  const done = exited(child);
  await until(
    () => items.every((i) => model.firstTurns(i) >= 1),
    'every item to wait for its first reply',
    HANG_GUARD_MS,
  );
  child.kill('SIGKILL');
  expect((await done).signal).toBe('SIGKILL');
  return runDirOf(p.runs)!;
}

describe('one coordinator per run (real CLI)', { timeout: 120_000, concurrent: true }, () => {
  it('resume of a live run is refused with exit 2 naming the holder; runs and show say running; the live run finishes normally', async () => {
    const model = await gatedModel((item) => item === 'b');
    try {
      const p = project(model, ['a', 'b']);
      const live = spawnCli([join(p.dir, 'recipe.yaml'), '--run-dir', p.runs], p.env);
      const liveDone = exited(live);
      // a finishes; b waits at the gate for its first reply.
      const aDone = (): boolean => {
        if (live.exitCode !== null) throw new Error(`the run ended early with exit ${live.exitCode}`);
        const runDir = runDirOf(p.runs);
        return runDir !== undefined && ofType(events(runDir), 'instance_done').length === 1;
      };
      await until(() => model.firstTurns('b') >= 1 && aDone(), 'a done, b waiting for its reply', HANG_GUARD_MS);
      const runDir = runDirOf(p.runs)!;
      const runId = runDir.split('/').pop()!;
      const logBefore = readFileSync(join(runDir, 'run.jsonl'), 'utf8');

      // The refused resume and the four views start together: none of them writes to the run.
      const [refused, runs, runsJsonOut, show, showJsonOut] = await Promise.all(
        [
          ['resume', runDir],
          ['runs', '--run-dir', p.runs, '--no-color'],
          ['runs', '--run-dir', p.runs, '--json'],
          ['show', runDir, '--no-color'],
          ['show', runDir, '--json'],
        ].map((args) => exited(spawnCli(args, p.env))),
      );
      expect(refused!.code, refused!.stderr).toBe(2);
      expect(refused!.stderr).toContain(
        `run ${runId} is running: its coordinator is pid ${live.pid} on host ${hostname()}, since `,
      );
      expect(refused!.stderr).toMatch(/Wait for it to end .*or stop it first \(Ctrl-C in its terminal, or kill \d+/);
      noStack(refused!.stderr);
      // The refused resume wrote nothing: no run_resume, and the log is still the live run's.
      expect(readFileSync(join(runDir, 'run.jsonl'), 'utf8').startsWith(logBefore)).toBe(true);
      expect(ofType(events(runDir), 'run_resume')).toHaveLength(0);

      expect(runs!.code).toBe(0);
      expect(runs!.stdout).toContain(`running (pid ${live.pid} on ${hostname()})`);
      const runsJson = JSON.parse(runsJsonOut!.stdout) as {
        status: string;
        holder?: LeaseHolder;
      }[];
      expect(runsJson[0]).toMatchObject({ status: 'running', holder: { pid: live.pid, host: hostname() } });
      expect(show!.stdout).toMatch(new RegExp(`status: running \\(coordinator pid ${live.pid} on host `));
      const showJson = JSON.parse(showJsonOut!.stdout) as {
        status: string;
        coordinator?: { pid: number };
      };
      expect(showJson).toMatchObject({ status: 'running', coordinator: { pid: live.pid } });

      model.open();
      const r = await liveDone;
      expect(r.code, r.stderr).toBe(0);
      const log = events(runDir);
      expect(ofType(log, 'run_resume')).toHaveLength(0);
      expect(ofType(log, 'run_end').map((e) => e.status)).toEqual(['succeeded']);
      expect(['a', 'b'].map((i) => [model.firstTurns(i), markerOf(p, i)])).toEqual([
        [1, 'marker-a\n'],
        [1, 'marker-b\n'],
      ]);
      // Released at the end: no longer running.
      expect(readRunLease(runDir)?.state).toEqual({ state: 'released' });
      const after = await exited(spawnCli(['runs', '--run-dir', p.runs, '--no-color'], p.env));
      expect(after.stdout).toMatch(/succeeded/);
      printSummary('run-lease/live-resume', {
        refused_exit: refused!.code ?? -1,
        live_exit: r.code ?? -1,
        run_resume_events: 0,
        double_runs: 0,
      });
    } finally {
      await model.close();
    }
  });

  it('after kill -9 the lease is free at once; of two resumes started together exactly one proceeds and every instance runs once', async () => {
    const items = ['a', 'b', 'c'];
    const model = await gatedModel(() => true);
    try {
      const p = project(model, items);
      const runDir = await killedRun(model, p, items);
      // The killed coordinator's lease is still there, heartbeat fresh, but its process is gone: stale at once.
      const left = readRunLease(runDir)!;
      expect(left.holder.releasedAt).toBeUndefined();
      expect(left.state).toEqual({ state: 'stale', why: `its process (pid ${left.holder.pid}) is gone` });

      const first = spawnCli(['resume', runDir], p.env);
      const second = spawnCli(['resume', runDir], p.env);
      const results = [exited(first), exited(second)];
      // The winner waits at the gate (it cannot finish), so the loser meets a live run.
      const loser = await Promise.race(results.map((r, i) => r.then((x) => ({ ...x, i }))));
      expect(loser.code, loser.stderr).toBe(2);
      const winnerPid = [first, second][1 - loser.i]!.pid;
      expect(loser.stderr).toContain(`is running: its coordinator is pid ${winnerPid} on host ${hostname()}`);
      noStack(loser.stderr);
      await until(
        () => items.every((i) => model.firstTurns(i) >= 2),
        'the winner to ask for every first reply again',
        HANG_GUARD_MS,
      );
      model.open();
      const winner = await results[1 - loser.i]!;
      expect(winner.code, winner.stderr).toBe(0);

      const log = events(runDir);
      expect(ofType(log, 'run_resume')).toHaveLength(1);
      expect(ofType(log, 'run_end').map((e) => e.status)).toEqual(['succeeded']);
      expect(
        ofType(log, 'instance_done')
          .map((e) => e.key)
          .sort(),
      ).toEqual(items.map((i) => `write.${i}`));
      // Each instance: the killed attempt's request, then the winner's; its bash call ran once.
      for (const i of items) {
        expect(model.firstTurns(i), i).toBe(2);
        expect(markerOf(p, i), i).toBe(`marker-${i}\n`);
      }
      expect(ofType(log, 'instance_start').filter((e) => e.attempt === 2)).toHaveLength(items.length);
      printSummary('run-lease/two-resumes', {
        resumes: 2,
        proceeded: 1,
        refused: 1,
        run_resume_events: 1,
        instances: items.length,
        requests_per_instance: 2,
      });
    } finally {
      await model.close();
    }
  });

  it("another host's lease is taken over once its heartbeat is older than the timeout, and refused while it is fresh", async () => {
    const model = await gatedModel(() => false);
    const gated = await gatedModel(() => true);
    try {
      // An interrupted run (its coordinator killed), then a lease that another host holds.
      const p = project(gated, ['a']);
      const runDir = await killedRun(gated, p, ['a']);
      const gen = topLeaseGeneration(runDir) + 1;
      const foreign = (heartbeatAt: number): LeaseHolder => ({
        pid: 4242,
        host: 'build-7.example',
        token: 'far-away',
        startedAt: heartbeatAt - 60_000,
        heartbeatAt,
      });
      writeFileSync(leaseFile(runDir, gen), JSON.stringify(foreign(Date.now())));
      const env = { ...p.env, ANTHROPIC_BASE_URL: model.server.url };
      const refused = await exited(spawnCli(['resume', runDir], env));
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('its coordinator is pid 4242 on host build-7.example');
      expect(refused.stderr).toContain('Ctrl-C in its terminal on build-7.example');
      expect(refused.stderr).toContain('resume works once its last heartbeat is 30 s old');
      expect(ofType(events(runDir), 'run_resume')).toHaveLength(0);

      // Ten minutes without a heartbeat: stale.
      writeFileSync(leaseFile(runDir, gen), JSON.stringify(foreign(Date.now() - 10 * 60_000)));
      expect(leaseState(readRunLease(runDir)!.holder).state).toBe('stale');
      const r = await exited(spawnCli(['resume', runDir], env));
      expect(r.code, r.stderr).toBe(0);
      expect(ofType(events(runDir), 'run_end').map((e) => e.status)).toEqual(['succeeded']);
      expect(readRunLease(runDir)).toMatchObject({ holder: { host: hostname() }, state: { state: 'released' } });
      expect(topLeaseGeneration(runDir)).toBe(gen + 1);
    } finally {
      await model.close();
      await gated.close();
    }
  });

  it('SIGTERM (like Ctrl-C) stops a run and releases its lease; a failed run releases it too', async () => {
    const model = await gatedModel(() => true);
    try {
      const p = project(model, ['a']);
      const child = spawnCli([join(p.dir, 'recipe.yaml'), '--run-dir', p.runs], p.env);
      const done = exited(child);
      await until(() => model.firstTurns('a') >= 1, 'a waiting for its reply', HANG_GUARD_MS);
      const runDir = runDirOf(p.runs)!;
      expect(readRunLease(runDir)).toMatchObject({ holder: { pid: child.pid }, state: { state: 'live' } });
      child.kill('SIGTERM');
      const r = await done;
      expect(r.code, r.stderr).toBe(130);
      expect(readRunLease(runDir)).toMatchObject({ holder: { pid: child.pid }, state: { state: 'released' } });

      // A resume that fails (the recipe it is told to reload is broken) gives the lease back as well.
      writeFileSync(join(p.dir, 'recipe.yaml'), 'tasks: [');
      const failed = await exited(spawnCli(['resume', runDir, '--reload-recipe'], p.env));
      expect(failed.code).toBe(2);
      expect(readRunLease(runDir)?.state).toEqual({ state: 'released' });
      expect(readRunLease(runDir)?.holder.pid).not.toBe(child.pid);
    } finally {
      await model.close();
    }
  });

  it('a coordinator that loses its lease stops like an interrupt, says why, and writes nothing more to the run', async () => {
    const model = await gatedModel(() => true);
    try {
      const p = project(model, ['a', 'b']);
      const child = spawnCli([join(p.dir, 'recipe.yaml'), '--run-dir', p.runs], p.env);
      const done = exited(child);
      // Only a guard against a hang (the test's own timeout is 120 s): a CLI started from the sources
      // on a busy machine can take most of a minute to ask; a run that ended says why.
      await until(
        () => (model.firstTurns('a') >= 1 && model.firstTurns('b') >= 1) || child.exitCode !== null,
        'both items waiting for their reply',
        HANG_GUARD_MS,
      );
      if (child.exitCode !== null) expect.fail(`the run ended before the lease was taken: ${(await done).stderr}`);
      const runDir = runDirOf(p.runs)!;
      // Another coordinator took the run over (as if this one had been frozen past the timeout).
      const now = Date.now();
      writeFileSync(
        leaseFile(runDir, topLeaseGeneration(runDir) + 1),
        JSON.stringify({
          pid: 4242,
          host: 'build-7.example',
          token: 'usurper',
          startedAt: now,
          heartbeatAt: now + 10 * 60_000,
        }),
      );
      const logBefore = readFileSync(join(runDir, 'run.jsonl'), 'utf8');
      // Its next heartbeat notices.
      const r = await done;
      expect(r.code, r.stderr).toBe(130);
      expect(r.stderr).toContain('lost the lease of run');
      expect(r.stderr).toContain('another coordinator took the lease over (now pid 4242 on host build-7.example');
      noStack(r.stderr);
      // The run goes on under the other coordinator: no resume hint that would be refused.
      expect(r.stdout + r.stderr).not.toContain('orchestrate resume');
      expect(readFileSync(join(runDir, 'run.jsonl'), 'utf8')).toBe(logBefore);
      expect(existsSync(join(runDir, 'result.json'))).toBe(false);
      expect(readRunLease(runDir)?.holder.token).toBe('usurper');
      expect(markerOf(p, 'a') + markerOf(p, 'b')).toBe('');
    } finally {
      await model.close();
    }
  });
});
