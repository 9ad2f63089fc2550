// kill -9 of the coordinator (the real CLI process) at several points of a run, then
// `orchestrate resume`: while agents stream, while a tool runs, during a compaction (the
// handoff summary), and at random moments while the run log is being written. After every kill:
// every complete line of every session and of the run log parses (only a torn last line may
// not). After the resume: the run succeeds, instances finished before the kill made no further
// model request, and every line written before the kill is still there, in order (a prefix).
// The two tests run at the same time (#43): each has its own fake API and project, and their
// kills wait on what the run shows (requests, a tool's process, run.jsonl's lines), never on a clock.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type FakeAnthropic,
  type FakeBlock,
  type RespondInput,
  type ResponseSpec,
  startFakeAnthropic,
  turnOrderProblem,
} from '../helpers/fake-anthropic-server.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { cleanupTempDirs, conversationKey, logOf, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { isSummaryRequest } from '../helpers/summary-request.js';
import { checkJsonl, type Exited, exited, printSummary, spawnCli, until } from './helpers/reliability-fixtures.js';
import { runFolderName } from '../helpers/run-folder.js';

afterAll(() => cleanupTempDirs());

/** The fake model's handoff summary: names the task, so a compacted context still says what it was. */
const summaryOf = (item: string): string =>
  `## Goal\nWrite the marker for ${item}.\n\n## Progress\n### Done\n- [x] wrote the marker\n\n## Next Steps\n(none)`;

interface Slowness {
  /** Delay between SSE events of the final answer of these items. */
  answer?: Record<string, number>;
  /** Delay between SSE events of the handoff summary of these items. */
  summary?: Record<string, number>;
  /** Seconds the bash call of these items sleeps before writing its marker. */
  tool?: Record<string, string>;
  /** Characters added to every final answer (more streamed deltas, more log lines). */
  padding?: number;
}

/** Writer agents: first a bash call appends `marker-<item>` to <item>.txt, then they answer; summaries summarize. */
function writerResponder(slow: () => Slowness): (req: RespondInput) => ResponseSpec {
  return ({ body }) => {
    const key = conversationKey(body);
    const item = /Write the marker for (\w+)/.exec(key)?.[1] ?? '?';
    const s = slow();
    if (isSummaryRequest(body)) {
      return {
        kind: 'message',
        content: [{ type: 'text', text: summaryOf(item) }],
        delayMs: s.summary?.[item] ?? 0,
        usage: { input_tokens: 400 },
      };
    }
    // Like a model: once the history shows the bash call (its result, or a summary saying so), answer.
    const history = JSON.stringify(body.messages);
    const wrote = history.includes('"tool_result"') || history.includes('[x] wrote the marker');
    const content: FakeBlock[] = !wrote
      ? [
          {
            type: 'tool_use',
            name: 'bash',
            input: {
              command: `${s.tool?.[item] ? `sleep ${s.tool[item]}; ` : ''}printf 'marker-${item}\\n' >> ${item}.txt`,
            },
          },
        ]
      : [{ type: 'text', text: `done ${item}${s.padding ? ` ${'.'.repeat(s.padding)}` : ''}` }];
    // Large usage so the keep-recent budget is exceeded and the handoff summary is a real compaction.
    return { kind: 'message', content, delayMs: wrote ? (s.answer?.[item] ?? 0) : 0, usage: { input_tokens: 3_000 } };
  };
}

function recipe(items: string[], concurrency: number): string {
  return `name: crashy
provider: anthropic
model: claude-haiku-4-5
concurrency: ${concurrency}
agents:
  writer: { tools: [bash], compaction: { keep_recent_tokens: 1 } }
tasks:
  - id: write
    for_each: [${items.join(', ')}]
    agent: writer
    prompt: "Write the marker for \${{ item }}"
`;
}

/** Model requests made for one item (its turns and its summaries). */
const requestsOf = (server: FakeAnthropic, item: string): number =>
  server.requests.filter((q) => new RegExp(`Write the marker for ${item}\\b`).test(conversationKey(q.body))).length;

function runDirOf(runs: string): string | undefined {
  if (!existsSync(runs)) return undefined;
  const name = runFolderName(runs);
  return name ? join(runs, name) : undefined;
}

/** The run's last attempt wrote run_end succeeded (a kill then only stopped a process on its way out). */
const endedSucceeded = (runDir: string): boolean => {
  const last = logOf(runDir)
    .filter((e) => e.type === 'run_start' || e.type === 'run_resume' || e.type === 'run_end')
    .at(-1);
  return last?.type === 'run_end' && last.status === 'succeeded';
};

/** Complete lines of the run log and every session file, after checking that each parses. */
interface Snapshot {
  files: Map<string, string[]>;
  torn: number;
}

function snapshot(runDir: string): Snapshot {
  const files = new Map<string, string[]>();
  let torn = 0;
  const sessions = existsSync(join(runDir, 'sessions'))
    ? readdirSync(join(runDir, 'sessions')).filter((f) => f.endsWith('.jsonl'))
    : [];
  for (const file of [join(runDir, 'run.jsonl'), ...sessions.map((f) => join(runDir, 'sessions', f))]) {
    const c = checkJsonl(file);
    expect(c.bad, `${file}: complete lines that do not parse`).toEqual([]);
    if (c.torn !== undefined) torn++;
    files.set(file, c.lines);
  }
  return { files, torn };
}

/** Every line of `before` is still in the file, in order, as its first complete lines. */
function expectPrefix(before: Snapshot): number {
  let lines = 0;
  for (const [file, old] of before.files) {
    const now = checkJsonl(file);
    expect(
      now.bad.filter((b) => !old.length || b.line > old.length),
      `${file}: unreadable lines after resume`,
    ).toEqual([]);
    const complete = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(complete.slice(0, old.length), `${file}: lines written before the kill were lost or changed`).toEqual(old);
    lines += old.length;
  }
  return lines;
}

interface Harness {
  server: FakeAnthropic;
  dir: string;
  runs: string;
  env: Record<string, string>;
}

async function harness(items: string[], concurrency: number, slow: () => Slowness): Promise<Harness> {
  // Strict like a real endpoint: a request with two user turns in a row (e.g. tool results and a resume note) is a 400.
  const server = await startFakeAnthropic({ respond: writerResponder(slow), strictTurns: true });
  const dir = tempProject({ 'recipe.yaml': recipe(items, concurrency) });
  return {
    server,
    dir,
    runs: join(dir, 'runs'),
    env: { ANTHROPIC_API_KEY: 'sk-ant-crash-test', ANTHROPIC_BASE_URL: server.url, ORCHESTRATE_RETRY_BASE_MS: '20' },
  };
}

/**
 * Resumes to the end and checks everything the suite promises; returns numbers for the summary.
 * `finished`: the last attempt's exit when it got to the end by itself, or 'ended-before-kill'
 * when the kill landed after it had written run_end (nothing to resume: the finished run is checked).
 */
async function resumeAndCheck(
  h: Harness,
  runDir: string,
  before: Snapshot,
  doneBefore: Map<string, number>,
  items: string[],
  finished?: Exited | 'ended-before-kill',
) {
  if (finished !== 'ended-before-kill') {
    const r = finished ?? (await exited(spawnCli(['resume', runDir], h.env)));
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+/);
  }
  for (const [item, count] of doneBefore)
    expect(requestsOf(h.server, item), `finished instance ${item} was called again`).toBe(count);
  for (const q of h.server.requests) expect(turnOrderProblem(q.body?.messages), `request ${q.index}`).toBeUndefined();
  const kept = expectPrefix(before);
  const result = JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as {
    status: string;
    instances: { id: string; status: string; output: unknown }[];
  };
  expect(result.status).toBe('succeeded');
  expect(result.instances.map((i) => [i.id, i.status, String(i.output).split(' ').slice(0, 2).join(' ')])).toEqual(
    items.map((i) => [`write.${i}`, 'done', `done ${i}`]),
  );
  return { kept };
}

function finishedItems(runDir: string, h: Harness): Map<string, number> {
  return new Map(
    ofType(logOf(runDir), 'instance_done').map((e) => [
      e.key.replace(/^write\./, ''),
      requestsOf(h.server, e.key.replace(/^write\./, '')),
    ]),
  );
}

/** Only a guard against a hang (each test's own limit is 120 s): two CLIs start at once on a busy machine. */
const HANG_GUARD_MS = 110_000;

describe('kill -9 of the coordinator, then resume (real CLI)', { timeout: 120_000, concurrent: true }, () => {
  it('while agents stream, while a tool runs, and during the handoff compaction', async () => {
    const items = ['a', 'b', 'c', 'd', 'e', 'f'];
    let slowOn = true;
    const sleep = `30.${process.pid}${Date.now() % 1000}`;
    const sleeping = () =>
      spawnSync('pgrep', ['-f', `sleep ${sleep}`])
        .stdout.toString()
        .trim() !== '';
    // a, b finish at once; c, d stream their answer slowly; e runs a slow tool; f's handoff summary is slow.
    // Slow means stuck mid-stream until the kill (the server ends those streams at close()).
    const h = await harness(items, 6, () =>
      slowOn ? { answer: { c: 30_000, d: 30_000 }, tool: { e: sleep }, summary: { f: 30_000 } } : {},
    );
    try {
      const child = spawnCli([join(h.dir, 'recipe.yaml'), '--run-dir', h.runs], h.env);
      const done = exited(child);
      const summaryStarted = () =>
        h.server.requests.some((q) => isSummaryRequest(q.body) && /marker for f\b/.test(conversationKey(q.body)));
      const toolRunning = () =>
        logOf(runDirOf(h.runs)).some(
          (e) => e.type === 'agent_event' && e.key === 'write.e' && e.event.type === 'tool_execution_start',
        );
      await until(
        () =>
          finishedItems(runDirOf(h.runs) ?? '', h).size >= 2 &&
          requestsOf(h.server, 'c') >= 2 &&
          requestsOf(h.server, 'd') >= 2 &&
          toolRunning() &&
          summaryStarted(),
        'a, b done; c, d streaming; e in its tool; f summarizing',
        HANG_GUARD_MS,
      );
      expect(sleeping()).toBe(true);
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      // The tool's process group died with the coordinator (no orphan finishes it later).
      await until(() => !sleeping(), 'the killed tool command to be gone', 60_000); // a hang bound only
      const runDir = runDirOf(h.runs)!;
      const doneBefore = finishedItems(runDir, h);
      expect([...doneBefore.keys()].sort()).toEqual(['a', 'b']);
      expect(ofType(logOf(runDir), 'run_end')).toHaveLength(0);
      const before = snapshot(runDir);

      slowOn = false;
      const t0 = Date.now();
      const { kept } = await resumeAndCheck(h, runDir, before, doneBefore, items);
      // The tool cut by the kill is not run again (the model hears it was interrupted), and no orphan finished it.
      for (const i of ['a', 'b', 'c', 'd', 'f'])
        expect(readFileSync(join(h.dir, `${i}.txt`), 'utf8'), i).toBe(`marker-${i}\n`);
      expect(existsSync(join(h.dir, 'e.txt')) ? readFileSync(join(h.dir, 'e.txt'), 'utf8') : '').toBe('');
      // Resume re-paid only the calls in flight at the kill: the answers of c and d and the summary
      // of f, one each; e (killed in its tool) and the finished a, b none. A clean item makes 3.
      expect(Object.fromEntries(items.map((i) => [i, requestsOf(h.server, i)]))).toEqual({
        a: 3,
        b: 3,
        c: 4,
        d: 4,
        e: 3,
        f: 4,
      });
      const starts = ofType(logOf(runDir), 'instance_start').filter((e) => e.attempt === 2);
      expect(starts.map((e) => e.key).sort()).toEqual(['write.c', 'write.d', 'write.e', 'write.f']);
      expect(starts.every((e) => e.resumedFromLeaf)).toBe(true);
      printSummary('crash-resume/points', {
        kills: 1,
        killed_streaming: 2,
        killed_in_tool: 1,
        killed_in_compaction: 1,
        torn_lines: before.torn,
        lines_kept: kept,
        entries_lost: 0,
        rerun_finished: 0,
        resume_ms: Date.now() - t0,
      });
    } finally {
      await h.server.close();
    }
  });

  it('random kills while the run log is written: every kill leaves readable files, and the run finishes', async () => {
    const items = ['p', 'q', 'r', 's', 't', 'u'];
    const h = await harness(items, 3, () => ({ answer: { p: 2, q: 2, r: 2, s: 2, t: 2, u: 2 }, padding: 300 }));
    const dice = seededRandom(7);
    let runDir: string | undefined;
    let first: Snapshot | undefined;
    const doneBefore = new Map<string, number>();
    let kills = 0;
    let torn = 0;
    let finished: Exited | 'ended-before-kill' | undefined;
    try {
      for (let round = 0; round < 5; round++) {
        const args = runDir
          ? ['resume', runDir, '--full-events']
          : [join(h.dir, 'recipe.yaml'), '--run-dir', h.runs, '--full-events'];
        const child = spawnCli(args, h.env);
        const done = exited(child);
        const logLines = () =>
          (runDir ?? runDirOf(h.runs)) ? checkJsonl(join((runDir ?? runDirOf(h.runs))!, 'run.jsonl')).lines.length : 0;
        const startLines = logLines();
        // Kill after a random number of new log lines (mid-stream of events), a random moment later.
        const grow = 3 + Math.floor(dice() * 250);
        await until(
          () => logLines() > startLines + grow || child.exitCode !== null,
          'the run log to grow',
          HANG_GUARD_MS,
        );
        await new Promise((r) => setTimeout(r, Math.floor(dice() * 30)));
        if (child.exitCode !== null) {
          // This attempt got to the end before its kill: it is the final resume.
          finished = await done;
          break;
        }
        child.kill('SIGKILL');
        await done;
        kills++;
        runDir ??= runDirOf(h.runs)!;
        const snap = snapshot(runDir);
        torn += snap.torn;
        // Lines a previous kill saw must all survive this attempt too.
        if (first) expectPrefix(first);
        first = snap;
        for (const [item, count] of finishedItems(runDir, h)) if (!doneBefore.has(item)) doneBefore.set(item, count);
        if (endedSucceeded(runDir)) {
          // The kill landed after the run had finished (between run_end and the exit): a valid
          // outcome, and `resume` would rightly refuse. The finished run is what gets checked.
          finished = 'ended-before-kill';
          break;
        }
      }
      expect(kills).toBeGreaterThan(0);
      const { kept } = await resumeAndCheck(h, runDir!, first!, doneBefore, items, finished);
      // Each kill re-paid at most the calls in flight then (one per running agent: concurrency 3); a clean item makes 3.
      expect(h.server.requests.length).toBeLessThanOrEqual(items.length * 3 + kills * 3);
      // A bash call cut by a kill is not re-run: its marker is missing; it is never there twice.
      for (const i of items)
        expect(['', `marker-${i}\n`], i).toContain(
          existsSync(join(h.dir, `${i}.txt`)) ? readFileSync(join(h.dir, `${i}.txt`), 'utf8') : '',
        );
      printSummary('crash-resume/random', {
        kills,
        finished_in_loop: finished === undefined ? 0 : 1,
        killed_after_end: finished === 'ended-before-kill' ? 1 : 0,
        torn_lines: torn,
        finished_before_last_kill: doneBefore.size,
        rerun_finished: 0,
        lines_kept: kept,
        entries_lost: 0,
      });
    } finally {
      await h.server.close();
    }
  });
});
