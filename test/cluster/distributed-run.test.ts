// Distributed runs with real parts: a redis-server of this test's own, several real
// `orchestrate worker` processes whose workdirs are separate from the project, and the scripted
// model. The coordinator runs in this process (runRecipeFile with a RedisExecutor) or, where it
// gets killed, as its own `orchestrate <recipe> --redis` process.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { redisRunSettingsOf } from '../../src/cli/commands/run.js';
import { Queue } from 'bullmq';
import type { JobEnvelope } from '../../src/cluster/cluster-trust.js';
import { AGENTS_QUEUE, BULLMQ_PREFIX } from '../../src/cluster/cluster-wire.js';
import { finishedLaunchesKey } from '../../src/cluster/finished-launches.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { runRecipeFile, type RunOptions } from '../../src/orchestrator/run-recipe.js';
import { openRedisRun } from '../../src/service/redis-run.js';
import type { RunEvent } from '../../src/run/run-events.js';
import {
  cleanupTempDirs,
  conversationKey,
  conversationResponder,
  events,
  gitInit,
  isSummaryRequest,
  ofType,
  requestText,
  tempProject,
} from '../orchestrator/helpers/run-fixtures.js';
import {
  type FakeAnthropic,
  type RespondInput,
  type ResponseSpec,
  startFakeAnthropic,
} from '../helpers/fake-anthropic-server.js';
import { exited, spawnCli, until } from '../reliability/helpers/reliability-fixtures.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { runFolderName } from '../helpers/run-folder.js';
import { SECRET_ENV, useCluster, type WorkerProcess } from './helpers/cluster-fixture.js';

const cluster = useCluster('distributed runs');
const skip = cluster.skip;
/** The runs folder of the current test's runHere (its log is printed when the test fails). */
let lastRunsDir = '';
/** The workers the current test uses (their stderr is printed when it fails). */
const inUse: WorkerProcess[] = [];
/** The workers the current test started for itself: they end with it (drain), or are killed if they do not. */
const ownWorkers: WorkerProcess[] = [];

afterEach(async (ctx) => {
  // A failed test (a timeout too) shows what its workers said: a hang leaves no other trace.
  if (ctx.task.result?.state === 'fail')
    for (const w of inUse) console.error(`--- worker ${w.name} stderr (tail):\n${w.stderr().slice(-4000)}`);
  const run = lastRunsDir && existsSync(lastRunsDir) ? runFolderName(lastRunsDir) : undefined;
  if (ctx.task.result?.state === 'fail' && run)
    console.error(`--- run.jsonl (tail):\n${readFileSync(join(lastRunsDir, run, 'run.jsonl'), 'utf8').slice(-6000)}`);
  inUse.length = 0;
  lastRunsDir = '';
  await cluster.stop(ownWorkers.splice(0));
});
afterAll(() => cleanupTempDirs());

/** Starts `orchestrate worker` for the current test alone and waits for its ready line. */
async function startWorker(
  name: string,
  concurrency = 2,
  env: Record<string, string> = {},
  args: string[] = [],
  url?: string,
  workdirBase?: string,
): Promise<WorkerProcess> {
  const w = await cluster.startWorker(name, {
    concurrency,
    env,
    args,
    ...(url ? { url } : {}),
    ...(workdirBase ? { workdirBase } : {}),
  });
  ownWorkers.push(w);
  inUse.push(w);
  return w;
}

/**
 * Workers the tests of a describe block share: started once before them, stopped after them. Each
 * test still has its own run (its own jobs and keys in Redis); the block's tests are those that
 * need the same kind of workers and none of them kills, drains or starves one.
 */
function sharedWorkers(start: () => Promise<WorkerProcess>[]): WorkerProcess[] {
  const pool: WorkerProcess[] = [];
  beforeAll(async () => {
    pool.push(...(await Promise.all(start())));
  }, 120_000);
  beforeEach(() => {
    inUse.push(...pool);
  });
  afterAll(async () => cluster.stop(pool.splice(0)));
  return pool;
}

/** The run with the CLI's own glue for --redis: the Redis executor and the run lease held in Redis too. */
async function runHere(dir: string, extra: RunOptions = {}, flags: { maxWorkspaceMb?: number } = {}) {
  const settings = redisRunSettingsOf(
    cluster.redis.url,
    flags.maxWorkspaceMb !== undefined ? { 'max-workspace-mb': flags.maxWorkspaceMb } : {},
    { ...process.env, ...SECRET_ENV },
  );
  if (!settings.ok) throw new Error(settings.message);
  const opened = await openRedisRun(settings.settings, () => {});
  if (!opened.ok) throw new Error(opened.message);
  lastRunsDir = join(dir, 'runs');
  try {
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { runsDir: join(dir, 'runs'), ...opened.run.options, ...extra },
    );
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.outcome;
  } finally {
    await opened.run.close();
  }
}

function fanOutProject(names: string[], opts: { concurrency?: number; delayMs?: number; extra?: string } = {}): string {
  const files: Record<string, string> = {
    'recipe.yaml': `name: fan
provider: scripted
script: script.yaml
concurrency: ${opts.concurrency ?? 4}
${opts.extra ?? ''}
agents:
  editor: { tools: [read, edit, write, bash] }
tasks:
  - id: rename
    for_each: { glob: "svc/*" }
    agent: editor
    cwd: \${{ item }}
    prompt: "Rename the service in \${{ item }}"
`,
    'script.yaml': `conversations:
  - match: "Rename the service in svc/(\\\\w+)"
    turns:
      - tools: [{ name: edit, args: { path: config.txt, edits: [{ oldText: "name: old", newText: "name: {{match.1}}-renamed" }] } }]
${opts.delayMs ? `        delay_ms: ${opts.delayMs}\n` : ''}      - tools: [{ name: write, args: { path: NOTES.md, content: "renamed {{match.1}}\\n" } }]
${opts.delayMs ? `        delay_ms: ${opts.delayMs}\n` : ''}      - text: "Renamed {{match.1}}."
`,
  };
  for (const n of names) files[`svc/${n}/config.txt`] = 'name: old\nport: 80\n';
  return tempProject(files);
}

function expectRenamed(dir: string, names: string[]): void {
  for (const n of names) {
    expect(readFileSync(join(dir, 'svc', n, 'config.txt'), 'utf8')).toBe(`name: ${n}-renamed\nport: 80\n`);
    expect(readFileSync(join(dir, 'svc', n, 'NOTES.md'), 'utf8')).toBe(`renamed ${n}\n`);
  }
}

/** The fan-out's conversations for a local API (the real SDK on the wire), so a test can hold a call. */
function renameResponder(names: string[]) {
  return conversationResponder(
    names.map((n) => ({
      match: new RegExp(`Rename the service in svc/${n}\\b`),
      turns: [
        {
          tools: [
            {
              name: 'edit',
              args: { path: 'config.txt', edits: [{ oldText: 'name: old', newText: `name: ${n}-renamed` }] },
            },
          ],
        },
        { tools: [{ name: 'write', args: { path: 'NOTES.md', content: `renamed ${n}\n` } }] },
        { text: `Renamed ${n}.` },
      ],
    })),
  );
}

/** fanOutProject with its model behind a local API instead of the scripted provider. */
function apiFanOutProject(names: string[], opts: { concurrency?: number } = {}): string {
  const dir = fanOutProject(names, opts);
  const recipe = join(dir, 'recipe.yaml');
  writeFileSync(
    recipe,
    readFileSync(recipe, 'utf8').replace('provider: scripted\nscript: script.yaml\n', 'model: claude-haiku-4-5\n'),
  );
  return dir;
}

/** Model replies so far in a request (the turn it asks for). */
const repliesIn = (body: { messages: { role: string }[] }): number =>
  body.messages.filter((m) => m.role === 'assistant').length;

/** The coordinator needs no key of its own: its agents call the model from the workers. */
const NO_COORDINATOR_KEY: RunOptions = {
  env: { ...process.env, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
};

const workersOf = (log: RunEvent[]): Set<string | undefined> =>
  new Set(ofType(log, 'instance_start').map((e) => e.worker));

/** A planner/worker pair: the planner asks for one correction, then approves (two rounds). */
function pairProject(): string {
  return tempProject({
    'recipe.yaml': `name: pair
provider: scripted
script: script.yaml
agents:
  planner: { system: "You are the PLANNER of this pair.", tools: [read] }
  worker: { system: "You are the WORKER of this pair.", tools: [read, write, edit] }
tasks:
  - id: build
    pair: { planner: planner, worker: worker, max_rounds: 3 }
    prompt: "Write greeting.txt with a friendly greeting."
`,
    'script.yaml': `conversations:
  - match: "You are the PLANNER"
    turns:
      - tools: [{ name: read, args: { path: greeting.txt } }]
      - text: "Corrections: the greeting must be exactly 'hello, world'."
      - text: "APPROVED"
  - match: "You are the WORKER"
    turns:
      - tools: [{ name: write, args: { path: greeting.txt, content: "hello there" } }]
      - text: "Wrote greeting.txt."
      - tools: [{ name: edit, args: { path: greeting.txt, edits: [{ oldText: "hello there", newText: "hello, world" }] } }]
      - text: "greeting.txt now says hello, world."
`,
  });
}

describe.skipIf(skip)('distributed runs: real worker processes through Redis', () => {
  describe('on two workers of two agents each', () => {
    const boxes = sharedWorkers(() => [cluster.startWorker('alpha-box'), cluster.startWorker('bravo-box')]);

    it('a fan-out spreads over two workers; the run folder is as complete as a local one', async () => {
      const [a, b] = boxes;
      const names = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8'];
      const dir = fanOutProject(names, { delayMs: 100 });
      const out = await runHere(dir);
      expect(out.status).toBe('succeeded');
      expectRenamed(dir, names);
      const log = events(out.dir);
      expect(workersOf(log)).toEqual(new Set(['alpha-box', 'bravo-box']));
      // Sessions streamed back: each one holds the whole conversation, as in a local run.
      for (const n of names) {
        const lines = readFileSync(join(out.dir, 'sessions', `rename.svc-${n}.jsonl`), 'utf8')
          .trim()
          .split('\n');
        expect(lines.length).toBeGreaterThan(5);
        expect(lines.some((l) => l.includes(`Renamed ${n}.`))).toBe(true);
      }
      // show and the report say which worker ran what.
      const [shown, report] = await Promise.all([
        exited(spawnCli(['show', out.dir], {})),
        exited(spawnCli(['report', out.dir], {})),
      ]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/rename\.svc-n1[\s\S]*?worker: (alpha|bravo)-box/);
      expect(report.code, report.stderr).toBe(0);
      const html = readFileSync(join(out.dir, 'report.html'), 'utf8');
      expect(html).toContain('on alpha-box');
      expect(html).toContain('on bravo-box');
      const result = JSON.parse(readFileSync(out.resultFile, 'utf8')) as { instances?: unknown[]; tasks?: unknown[] };
      expect(JSON.stringify(result)).toContain('rename.svc-n8');
      // Nothing of the project ever lands in a worker's workdir for good (removed when each agent ends).
      for (const w of [a!, b!])
        await until(
          () => readdirSync(w.workdir).flatMap((r) => readdirSync(join(w.workdir, r))).length === 0,
          `${w.name}'s workdir to be emptied`,
        );
    }, 120_000);

    it('a workspace past the size limit fails its instance with a clear error, and the others still run', async () => {
      const dir = fanOutProject(['small', 'big']);
      writeFileSync(join(dir, 'svc', 'big', 'blob.bin'), Buffer.alloc(300 * 1024, 7));
      const out = await runHere(dir, {}, { maxWorkspaceMb: 0.1 });
      expect(out.status).toBe('failed');
      const failed = ofType(events(out.dir), 'instance_failed').filter((e) => e.final);
      expect(failed.map((e) => [e.key, e.failure])).toEqual([['rename.svc-big', 'workspace']]);
      expect(failed[0]!.error).toMatch(/too large.*--max-workspace-mb/s);
      expect(readFileSync(join(dir, 'svc', 'small', 'config.txt'), 'utf8')).toBe('name: small-renamed\nport: 80\n');
      expect(readFileSync(join(dir, 'svc', 'big', 'config.txt'), 'utf8')).toBe('name: old\nport: 80\n');
    }, 120_000);

    it('a result patch that no longer applies to the original workspace fails its instance as patch_conflict', async () => {
      const dir = tempProject({
        'recipe.yaml': `name: clash
provider: scripted
script: script.yaml
concurrency: 2
agents:
  editor: { tools: [edit] }
tasks:
  - id: set
    for_each: [red, blue]
    agent: editor
    prompt: "Set the colour to \${{ item }}"
`,
        'script.yaml': `conversations:
  - match: "Set the colour to (\\\\w+)"
    turns:
      - tools: [{ name: edit, args: { path: colour.txt, edits: [{ oldText: "colour: none", newText: "colour: {{match.1}}" }] } }]
      - text: "Set {{match.1}}."
`,
        'colour.txt': 'colour: none\n',
      });
      const out = await runHere(dir);
      const log = events(out.dir);
      const done = ofType(log, 'instance_done').map((e) => e.key);
      const failed = ofType(log, 'instance_failed').filter((e) => e.final);
      // Both edited the same line of their own copies: the first result applies, the second cannot.
      expect(done).toHaveLength(1);
      expect(failed.map((e) => e.failure)).toEqual(['patch_conflict']);
      expect(failed[0]!.error).toMatch(/do not apply to/);
      expect(readFileSync(join(dir, 'colour.txt'), 'utf8')).toMatch(/^colour: (red|blue)\n$/);
      // Both launches packed the same folder: one copy in Redis, deleted with the last of them.
      const client = connectRedis(cluster.redis.url, { name: 'test' });
      try {
        expect(await client.keys('orchestrate:run:*:ws:*')).toEqual([]);
      } finally {
        client.disconnect();
      }
    }, 120_000);
  });

  describe('a planner/worker pair split over two workers of one agent each', () => {
    sharedWorkers(() => [
      cluster.startWorker('doer', { concurrency: 1, args: ['--queues', 'agents'] }),
      cluster.startWorker('reviewer', { concurrency: 1, args: ['--queues', 'partners'] }),
    ]);

    it('a planner/worker pair split over two workers: the planner reviews the files the worker wrote elsewhere', async () => {
      const dir = pairProject();
      const out = await runHere(dir);
      expect(out.status).toBe('succeeded');
      expect(readFileSync(join(dir, 'greeting.txt'), 'utf8')).toBe('hello, world');
      const log = events(out.dir);
      const placed = new Map<string, string>();
      for (const e of ofType(log, 'instance_start')) if (e.worker) placed.set('first', e.worker);
      for (const e of ofType(log, 'instance_worker')) placed.set(e.agent, e.worker);
      expect(new Set([...placed.values()])).toEqual(new Set(['doer', 'reviewer']));
      // The planner, on the other machine, read what the worker wrote on its own.
      const planner = readFileSync(join(out.dir, 'sessions', 'build@planner.jsonl'), 'utf8');
      expect(planner).toContain('hello there');
      expect(ofType(log, 'instance_done').find((e) => e.key === 'build')).toMatchObject({ rounds: 2, approved: true });
    }, 120_000);

    it('a split pair run again and again on one Redis: every run ends, the last verdict of the planner reaches the worker', async () => {
      // Regression: the planner's approving verdict (pair channel) could reach its worker process
      // after the planner's result (agent channel): the result went up first, the coordinator settled
      // the planner and dropped the verdict, and the pair's worker waited forever. It happened in
      // most runs made after an earlier run on the same Redis, so this makes several in a row.
      for (let i = 0; i < 4; i++) {
        const dir = pairProject();
        const out = await runHere(dir);
        expect(out.status).toBe('succeeded');
        expect(readFileSync(join(dir, 'greeting.txt'), 'utf8')).toBe('hello, world');
        expect(ofType(events(out.dir), 'instance_done').find((e) => e.key === 'build')).toMatchObject({
          rounds: 2,
          approved: true,
        });
      }
    }, 240_000);
  });

  describe('on three workers of one agent each, whose own key calls a local API', () => {
    // One local API for the block (the real SDK on the wire): each test sets the replies it needs.
    const unset = (): ResponseSpec => ({
      kind: 'http-error',
      status: 400,
      message: 'no replies are set for this test',
    });
    let respond: (req: RespondInput) => ResponseSpec | Promise<ResponseSpec> = unset;
    let server: FakeAnthropic;
    beforeAll(async () => {
      server = await startFakeAnthropic({ respond: (req) => respond(req) });
    });
    afterAll(async () => server?.close());
    beforeEach(() => {
      server.requests.length = 0;
    });
    const singles = sharedWorkers(() =>
      ['one', 'two', 'three'].map((name) =>
        cluster.startWorker(name, {
          concurrency: 1,
          env: { ANTHROPIC_API_KEY: 'sk-test-worker', ANTHROPIC_BASE_URL: server.url },
        }),
      ),
    );

    it('the recipe concurrency and rate limit hold across all workers together', async () => {
      // One agent at a time each: two workers at least are needed for the recipe's 2, and the
      // three could run 3 at once. The replies come at once (no scripted delay): the calls of two
      // agents outrun 3 a second on any machine, so they wait for the shared rate limit.
      const names = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
      const dir = fanOutProject(names, { concurrency: 2, extra: 'rate_limit: 3' });
      const out = await runHere(dir, { rateWindowMs: 1_000 });
      expect(out.status).toBe('succeeded');
      expectRenamed(dir, names);
      const log = events(out.dir);
      const used = workersOf(log);
      expect(used.size).toBeGreaterThanOrEqual(2);
      expect([...used].every((w) => singles.some((s) => s.name === w))).toBe(true);
      // Never more than 2 instances between their start and their end, whichever worker ran them.
      let running = 0;
      let peak = 0;
      for (const e of log) {
        if (e.type === 'instance_start') peak = Math.max(peak, ++running);
        if (e.type === 'instance_done' || e.type === 'instance_failed') running--;
      }
      expect(peak).toBe(2);
      // 18 calls at 3 per 1 s window: calls waited for the shared rate limit.
      expect(ofType(log, 'call_usage').length).toBeGreaterThanOrEqual(18);
      expect(ofType(log, 'permit_wait').some((e) => /rate/i.test(e.reason))).toBe(true);
    }, 120_000);

    it('send_message between agents on different workers, through the real SDK against a local API', async () => {
      respond = conversationResponder(
        ['alice', 'bob'].map((me) => {
          const other = me === 'alice' ? 'bob' : 'alice';
          return {
            match: new RegExp(`You are ${me}`),
            turns: [
              { tools: [{ name: 'send_message', args: { to: other, text: `hello ${other}, this is ${me}` } }] },
              { tools: [{ name: 'bash', args: { command: 'sleep 1' } }] },
              { text: `${me} is done` },
            ],
          };
        }),
      );
      try {
        // Each worker uses its own key and API address (nothing of the coordinator's environment travels).
        const dir = tempProject({
          'recipe.yaml': `name: talk
model: claude-haiku-4-5
concurrency: 2
agents:
  talker: { tools: [send_message, bash] }
tasks:
  - id: alice
    agent: talker
    prompt: "You are alice. Say hello to bob."
  - id: bob
    agent: talker
    prompt: "You are bob. Say hello to alice."
`,
        });
        // The coordinator needs no key of its own: its agents call the model from the workers.
        const out = await runHere(dir, {
          env: { ...process.env, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
        });
        expect(out.status).toBe('succeeded');
        const log = events(out.dir);
        // One agent at a time on each worker: the two, talking while both run, ran on two of them.
        expect(workersOf(log).size).toBe(2);
        for (const me of ['alice', 'bob']) {
          const other = me === 'alice' ? 'bob' : 'alice';
          const mine = server.requests.filter(
            (q) => !isSummaryRequest(q.body) && conversationKey(q.body).includes(`You are ${me}`),
          );
          expect(mine.some((q) => requestText(q.body).includes(`hello ${me}, this is ${other}`))).toBe(true);
        }
        expect(
          ofType(log, 'message')
            .map((m) => `${m.from}->${m.to}`)
            .sort(),
        ).toEqual(['alice->bob', 'bob->alice']);
        // The workers' own key went on the wire.
        expect(server.requests.every((q) => JSON.stringify(q.headers ?? {}).includes('sk-test-worker'))).toBe(true);
      } finally {
        respond = unset;
      }
    }, 120_000);

    it('a 429 seen by one worker pauses the calls of the agents on the other workers', async () => {
      const arrivals: { t: number; status: number; item: string; turn: number }[] = [];
      const responder = conversationResponder([
        { match: /Check item/, turns: [{ tools: [{ name: 'ls', args: { path: '.' } }] }, { text: 'checked' }] },
      ]);
      let limited = false;
      let runsDir = '';
      // a and c get their first reply only once the coordinator has logged b's 429 (an event, not a delay).
      const rateLimitLogged = async (): Promise<void> =>
        until(
          () => {
            if (!existsSync(runsDir)) return false;
            const run = runFolderName(runsDir);
            return (
              run !== undefined &&
              existsSync(join(runsDir, run, 'run.jsonl')) &&
              readFileSync(join(runsDir, run, 'run.jsonl'), 'utf8').includes('"rate_limited"')
            );
          },
          'the 429 to reach the coordinator',
          60_000,
        );
      respond = async (req) => {
        const item = /Check item (\w)/.exec(conversationKey(req.body))?.[1] ?? '?';
        const turn = (req.body.messages as unknown[]).length;
        if (!limited && item === 'b') {
          limited = true;
          arrivals.push({ t: Date.now(), status: 429, item, turn });
          return { kind: 'http-error', status: 429, headers: { 'retry-after-ms': '1500' } };
        }
        arrivals.push({ t: Date.now(), status: 200, item, turn });
        if (turn === 1 && item !== 'b') await rateLimitLogged();
        return responder(req);
      };
      try {
        const dir = tempProject({
          'recipe.yaml': `name: paused
model: claude-haiku-4-5
concurrency: 3
agents:
  checker: { tools: [ls] }
tasks:
  - id: check
    for_each: [a, b, c]
    agent: checker
    prompt: "Check item \${{ item }}"
`,
        });
        runsDir = join(dir, 'runs');
        const out = await runHere(dir, { env: { ...process.env, ANTHROPIC_API_KEY: 'sk-test-coordinator' } });
        expect(out.status).toBe('succeeded');
        const log = events(out.dir);
        expect(workersOf(log)).toEqual(new Set(singles.map((w) => w.name)));
        const rl = ofType(log, 'rate_limited');
        expect(rl).toHaveLength(1);
        expect(rl[0]).toMatchObject({ key: 'check.b', status: 429, delayMs: 1500 });
        // a and c, on other workers, had their next call ready right after the 429 was known: it waited out the pause.
        const limitedAt = arrivals.find((a) => a.status === 429)!.t;
        const next = arrivals.filter((a) => a.item !== 'b' && a.turn > 1);
        expect(next.length).toBeGreaterThanOrEqual(2);
        for (const a of next) expect(a.t - limitedAt).toBeGreaterThanOrEqual(1400);
        expect(ofType(log, 'permit_wait').some((e) => e.key !== 'check.b')).toBe(true);
      } finally {
        respond = unset;
      }
    }, 120_000);
  });

  describe('workers a test starts for itself (killed, drained, on another database or folder)', () => {
    it('a worker killed with kill -9 mid-run: another worker takes its agents over from their streamed sessions', async () => {
      // The model is a local API (real SDK on the wire) so the test holds the agents mid-run: every
      // call the victim makes after its first edit hangs, so none of its agents can finish before the
      // kill however slow the machine is; the rescuer's calls are answered.
      const names = ['k1', 'k2', 'k3'];
      const responder = renameResponder(names);
      const held = new Set<string>();
      const server = await startFakeAnthropic({
        respond: (req) => {
          const fromVictim = JSON.stringify(req.headers).includes('sk-test-victim');
          if (fromVictim && repliesIn(req.body) >= 1 && !isSummaryRequest(req.body)) {
            held.add(/svc\/(\w+)/.exec(conversationKey(req.body))?.[1] ?? '?');
            return { kind: 'hang' };
          }
          return responder(req);
        },
      });
      try {
        const api = (key: string) => ({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.url });
        const victim = await startWorker('victim', 4, api('sk-test-victim'));
        const dir = apiFanOutProject(names, { concurrency: 3 });
        gitInit(dir);
        const running = runHere(dir, NO_COORDINATOR_KEY);
        // Kill it once every agent made its first edit there (the edit is in the streamed session)
        // and asked for its next turn (held above).
        const runDir = () => join(dir, 'runs', runFolderName(join(dir, 'runs')) ?? '');
        await until(
          () =>
            held.size === names.length &&
            runFolderName(join(dir, 'runs')) !== undefined &&
            names.every((n) => {
              const f = join(runDir(), 'sessions', `rename.svc-${n}.jsonl`);
              return existsSync(f) && readFileSync(f, 'utf8').includes('toolResult');
            }),
          'every agent to have a tool result streamed back and its next call held',
          90_000,
        );
        expect(ofType(events(runDir()), 'instance_done')).toEqual([]);
        victim.child.kill('SIGKILL');
        await startWorker('rescuer', 4, api('sk-test-rescuer'));
        const out = await running;
        expect(out.status).toBe('succeeded');
        expectRenamed(dir, names);
        const log = events(out.dir);
        const placements = ofType(log, 'instance_worker');
        const takeovers = placements.filter((e) => e.takeover);
        expect(new Set(takeovers.map((e) => e.key)), JSON.stringify(placements)).toEqual(
          new Set(names.map((n) => `rename.svc-${n}`)),
        );
        expect(takeovers.every((e) => e.worker === 'rescuer')).toBe(true);
        // The edit of the first turn was not made twice: the session continued, it did not start over.
        for (const n of names) {
          const session = readFileSync(join(out.dir, 'sessions', `rename.svc-${n}.jsonl`), 'utf8');
          expect(session.match(/"name":"edit"/g)?.length ?? 0).toBe(1);
        }
      } finally {
        await server.close();
      }
    }, 240_000);

    it('SIGTERM drains a worker: its running agent finishes, then it exits 0', async () => {
      // The agent's second model call is held until the worker says it drains: the agent is running
      // when SIGTERM comes, however slow the machine (an event, not a 1.5 s scripted delay).
      const responder = renameResponder(['d1']);
      let release = (): void => {};
      const released = new Promise<void>((r) => (release = r));
      let held = false;
      const server = await startFakeAnthropic({
        respond: async (req) => {
          if (repliesIn(req.body) === 1 && !isSummaryRequest(req.body)) {
            held = true;
            await released;
          }
          return responder(req);
        },
      });
      try {
        const w = await startWorker('drainee', 2, {
          ANTHROPIC_API_KEY: 'sk-test-worker',
          ANTHROPIC_BASE_URL: server.url,
        });
        const dir = apiFanOutProject(['d1']);
        const running = runHere(dir, NO_COORDINATOR_KEY);
        await until(() => held, "the agent's second model call", 90_000);
        const exit = exited(w.child);
        w.child.kill('SIGTERM');
        await until(
          () => /draining: no new agents; waiting for 1 running/.test(w.stderr()),
          'the worker to say it drains',
          90_000,
        );
        release();
        const out = await running;
        expect(out.status).toBe('succeeded');
        expectRenamed(dir, ['d1']);
        const e = await exit;
        expect(e.code).toBe(0);
      } finally {
        release();
        await server.close();
      }
    }, 240_000);

    it('the coordinator killed with kill -9 mid-run: resume --redis picks the run up, the workers drop the old jobs', async () => {
      // The model is a local API: every agent's second call is held while the first coordinator
      // lives, so the kill lands mid-run however slow the machine (an event, not a scripted delay).
      // The held calls of the old jobs are never answered; the resumed run's calls are.
      const names = ['r1', 'r2', 'r3'];
      const responder = renameResponder(names);
      const held = new Set<string>();
      let holding = true;
      const server = await startFakeAnthropic({
        respond: (req) => {
          if (holding && repliesIn(req.body) >= 1 && !isSummaryRequest(req.body)) {
            held.add(/svc\/(\w+)/.exec(conversationKey(req.body))?.[1] ?? '?');
            return { kind: 'hang' };
          }
          return responder(req);
        },
      });
      try {
        const w = await startWorker('steady', 4, {
          ANTHROPIC_API_KEY: 'sk-test-worker',
          ANTHROPIC_BASE_URL: server.url,
        });
        const dir = apiFanOutProject(names, { concurrency: 3 });
        const runs = join(dir, 'runs');
        // From the repository (tsx resolves from the working folder); the recipe's paths resolve from its own folder.
        // The coordinator has no key of its own: its agents call the model from the worker.
        const coordinator = spawnCli(
          [join(dir, 'recipe.yaml'), '--redis', cluster.redis.url, '--run-dir', runs],
          SECRET_ENV,
        );
        const first = exited(coordinator);
        const runDir = () => join(runs, runFolderName(runs) ?? '');
        await until(
          () =>
            held.size === names.length &&
            runFolderName(runs) !== undefined &&
            names.every((n) => {
              const f = join(runDir(), 'sessions', `rename.svc-${n}.jsonl`);
              return existsSync(f) && readFileSync(f, 'utf8').includes('toolResult');
            }),
          'every agent to have a tool result streamed back and its next call held',
          60_000,
        );
        expect(ofType(events(runDir()), 'instance_done')).toEqual([]);
        coordinator.kill('SIGKILL');
        await first;
        holding = false;
        const resumed = await exited(
          spawnCli(['resume', runDir(), '--redis', cluster.redis.url, '--run-dir', runs], SECRET_ENV),
        );
        expect(resumed.code, resumed.stderr).toBe(0);
        expectRenamed(dir, names);
        for (const n of names) {
          const session = readFileSync(join(runDir(), 'sessions', `rename.svc-${n}.jsonl`), 'utf8');
          expect(session.match(/"name":"edit"/g)?.length ?? 0).toBe(1);
        }
        await until(
          () => /dropped|no longer holds the run/.test(w.stderr()) || ofType(events(runDir()), 'run_end').length > 0,
          'the worker to note the old jobs',
          90_000,
        );
      } finally {
        await server.close();
      }
    }, 180_000);

    it('Redis restarted mid-run (its data lost): coordinator and worker reconnect and the run completes', async () => {
      // Both agents' last calls are held until Redis is back: the restart lands mid-run however slow
      // the machine (an event, not a scripted delay). Both edits are made and streamed back first, so
      // whether an agent goes on or is taken over from its session, its files are the same.
      const names = ['x1', 'x2'];
      const responder = renameResponder(names);
      const held = new Set<string>();
      let release = (): void => {};
      const released = new Promise<void>((r) => (release = r));
      const server = await startFakeAnthropic({
        respond: async (req) => {
          if (repliesIn(req.body) === 2 && !isSummaryRequest(req.body)) {
            held.add(/svc\/(\w+)/.exec(conversationKey(req.body))?.[1] ?? '?');
            await released;
          }
          return responder(req);
        },
      });
      try {
        await startWorker('survivor', 4, { ANTHROPIC_API_KEY: 'sk-test-worker', ANTHROPIC_BASE_URL: server.url });
        const dir = apiFanOutProject(names, { concurrency: 2 });
        const running = runHere(dir, NO_COORDINATOR_KEY);
        const runDir = () => join(dir, 'runs', runFolderName(join(dir, 'runs')) ?? '');
        await until(
          () =>
            held.size === names.length &&
            runFolderName(join(dir, 'runs')) !== undefined &&
            names.every((n) => {
              const f = join(runDir(), 'sessions', `rename.svc-${n}.jsonl`);
              return existsSync(f) && readFileSync(f, 'utf8').includes('Successfully wrote');
            }),
          'both agents to be under way (their tool results streamed back, the last call held)',
          60_000,
        );
        await cluster.redis.restart();
        release();
        const out = await running;
        if (out.status !== 'succeeded')
          console.log(
            JSON.stringify(ofType(events(out.dir), 'instance_failed').map((e) => [e.key, e.failure, e.error])),
          );
        expect(out.status).toBe('succeeded');
        expectRenamed(dir, names);
      } finally {
        release();
        await server.close();
      }
    }, 180_000);

    it('a job of an agent that already ended, queued again (Redis lost the record of it): the worker that takes it is told to stop at once, it holds no slot waiting for a start', async () => {
      // The first task's model call waits until the test has read its job from the queue; the
      // second task's call waits until the copy of the first job has met its fate, so the
      // coordinator is live all along. A Redis restarted without its data loses the record of the
      // launches that ended (finished-launches.ts); a job queued again for such a launch (the
      // coordinator's recovery, a cancel that came as a worker took the job) is then claimed.
      // Before, the coordinator ignored that claim and the worker held a slot for its 60 s start
      // timeout ('no start'), and a drain waited for it.
      let firstAsked = false;
      let secondAsked = false;
      let readJob = (): void => {};
      const jobRead = new Promise<void>((r) => (readJob = r));
      let releaseSecond = (): void => {};
      const secondReleased = new Promise<void>((r) => (releaseSecond = r));
      const responder = conversationResponder([
        { match: /Answer FIRST/, turns: [{ text: 'first done' }] },
        { match: /Answer SECOND/, turns: [{ text: 'second done' }] },
      ]);
      const server = await startFakeAnthropic({
        respond: async (req) => {
          if (!isSummaryRequest(req.body) && /Answer FIRST/.test(conversationKey(req.body))) {
            firstAsked = true;
            await jobRead;
          }
          if (!isSummaryRequest(req.body) && /Answer SECOND/.test(conversationKey(req.body))) {
            secondAsked = true;
            await secondReleased;
          }
          return responder(req);
        },
      });
      const redis = connectRedis(cluster.redis.url, { forBullmq: true });
      const queue = new Queue(AGENTS_QUEUE, { connection: redis, prefix: BULLMQ_PREFIX });
      try {
        const w = await startWorker('late', 2, { ANTHROPIC_API_KEY: 'sk-test-worker', ANTHROPIC_BASE_URL: server.url });
        const dir = tempProject({
          'recipe.yaml': `name: late
model: claude-haiku-4-5
agents:
  answerer: { tools: [read] }
tasks:
  - id: first
    agent: answerer
    prompt: "Answer FIRST"
  - id: second
    needs: [first]
    agent: answerer
    prompt: "Answer SECOND"
`,
        });
        const running = runHere(dir, NO_COORDINATOR_KEY);
        await until(() => firstAsked, "the first task's model call", 90_000);
        const [job] = await queue.getJobs(['active']);
        if (!job?.id) throw new Error('the first task has no active job in the queue');
        const envelope = job.data as JobEnvelope;
        readJob();
        await until(() => secondAsked, "the second task's model call", 90_000);
        // The worker records the first launch as ended; Redis then "loses" that record.
        const finished = finishedLaunchesKey(envelope.runId);
        while ((await redis.sismember(finished, envelope.launchId)) !== 1) await new Promise((r) => setTimeout(r, 15));
        await redis.del(finished);
        const again = `${job.id}-again`;
        await queue.add('agent', envelope, { jobId: again, attempts: 1, removeOnComplete: true, removeOnFail: true });
        const outcome = new RegExp(`\\(job ${again.replace(/\./g, '\\.')}\\): (.+)`);
        await until(() => outcome.test(w.stderr()), 'the worker to end the job queued again', 90_000);
        expect(outcome.exec(w.stderr())?.[1]).toBe('cancelled');
        expect(w.stderr()).not.toMatch(/no start for first/);
        releaseSecond();
        const out = await running;
        expect(out.status).toBe('succeeded');
        const log = events(out.dir);
        // The first agent ran once: no second start or takeover of it, one done.
        expect(ofType(log, 'instance_worker').filter((e) => e.key === 'first')).toEqual([]);
        expect(ofType(log, 'instance_done').map((e) => e.key)).toEqual(['first', 'second']);
      } finally {
        releaseSecond();
        readJob();
        await queue.close();
        redis.disconnect();
        await server.close();
      }
    }, 180_000);

    it('the CLI: an unreachable Redis is exit 2 with the reason; with no worker yet, the run says its agents wait, and goes on once one starts', async () => {
      const dir = fanOutProject(['q1']);
      const runs = join(dir, 'runs');
      // The refused run and the waiting one start together (two process starts in the time of one).
      const refusedRuns = join(dir, 'refused-runs');
      const refusing = exited(
        spawnCli([join(dir, 'recipe.yaml'), '--redis', 'redis://127.0.0.1:1', '--run-dir', refusedRuns], SECRET_ENV),
      );
      // A database of its own: no heartbeat of an earlier test's worker in it.
      const url = `${cluster.redis.url}/5`;
      const coordinator = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], {
        ORCHESTRATE_REDIS_URL: url,
        ...SECRET_ENV,
      });
      const done = exited(coordinator);
      let err = '';
      coordinator.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const refused = await refusing;
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1: connection refused/);
      expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(existsSync(refusedRuns)).toBe(false);
      await until(() => /no orchestrate worker serves/.test(err), 'the note that no worker serves this Redis', 60_000);
      await startWorker('late', 1, {}, [], url);
      const e = await done;
      expect(e.code, e.stderr).toBe(0);
      expectRenamed(dir, ['q1']);
    }, 120_000);

    it.skipIf(skipWithoutBwrap('the worker sandbox test'))(
      "a sandboxed command on a worker sees its own workspace, not the worker's other workspaces and sessions",
      async () => {
        // Outside /tmp: commands get a private /tmp anyway, which would hide a workdir there by itself.
        await startWorker('jail', 2, {}, [], cluster.redis.url, '/var/tmp');
        const dir = tempProject({
          'recipe.yaml': `name: peek
provider: scripted
script: script.yaml
concurrency: 2
agents:
  looker: { tools: [bash] }
tasks:
  - id: look
    for_each: [a, b]
    agent: looker
    cwd: \${{ item }}
    prompt: "Look around from \${{ item }}"
`,
          'script.yaml': `conversations:
  - match: "Look around from (\\\\w)"
    turns:
      - tools: [{ name: bash, args: { command: "echo here:; ls -a; echo parent:; ls -a ..; echo grandparent:; ls -a ../.." } }]
        delay_ms: 300
      - text: "Looked."
`,
          'a/mine-a.txt': 'a\n',
          'b/mine-b.txt': 'b\n',
        });
        const out = await runHere(dir);
        expect(out.status).toBe('succeeded');
        for (const [me, other] of [
          ['a', 'b'],
          ['b', 'a'],
        ] as const) {
          const session = readFileSync(join(out.dir, 'sessions', `look.${me}.jsonl`), 'utf8');
          const result = session.split('\n').find((l) => l.includes('"toolResult"')) ?? '';
          expect(result).toContain(`mine-${me}.txt`);
          expect(result).not.toContain(`mine-${other}.txt`);
          expect(result).not.toContain('session.jsonl');
        }
      },
      120_000,
    );
  });
});
