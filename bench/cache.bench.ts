// Prompt-cache shares of a fan-out (issue: "a fan-out shares one cached prompt prefix, and
// summaries ride the conversation's cache"). Agents work through the real Anthropic SDK against
// the local fake Messages API with its prompt-cache simulation (test/helpers/fake-anthropic-server.ts:
// prefixes remembered at each cache_control breakpoint, readable once their response started,
// 20-block lookback, 1024-token minimum, tool_choice/thinking in the messages' key), so the
// shares below are what the requests themselves earn.
//
// Each instance: its own repo folder, six turns (ls, read, grep, read, find, answer) with real
// tools on real files, then its handoff summary (the whole session compacted by the model).
//
// Before and after, measured in the same run on the same fan-out (AgentSessions started together,
// as the orchestrator's workers are):
// - before: the old request shape, rebuilt on the wire with the SDK's onPayload hook: the whole
//   system prompt (date and cwd inside) in one cached block, one breakpoint on the last user
//   block; summaries as a serialized transcript under the summarizer's own system prompt (the
//   transcript path, still there for uncached providers); no warm-up.
// - after, no warm-up: the new shape alone, every instance starting at once.
// - after: the shipped shape: shared system block with the breakpoint, per-session block after
//   it, breakpoints at the previous and the current request's tail, summaries inside the
//   conversation, and the warm-up gate (src/orchestrator/pacing/cache-warmup.ts) in front of the permits.
// Then one 12-instance fan-out through the real orchestrator (coordinator, worker threads), whose
// result.json figures are the ones `orchestrate show` prints.
//
// Goals: cache reads >= 70 % of input tokens on the 6-repo fan-out; summary calls >= 80 % reads.
// Then (issue 32) 32 one-turn agents inside one git repository vs outside; `--one-turn` runs only that.
// Run: node --import tsx bench/cache.bench.ts
import { execFileSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveModel } from '../src/ai/models.js';
import { registerBuiltInProviders } from '../src/ai/providers.js';
import { stream as registryStream } from '../src/ai/registry.js';
import type { Model, StreamFunction } from '../src/ai/types.js';
import { BudgetLedger } from '../src/orchestrator/schedule/budget.js';
import { CacheWarmup } from '../src/orchestrator/pacing/cache-warmup.js';
import { PermitBroker } from '../src/orchestrator/pacing/permit-broker.js';
import { withPermits, type PermitChannel } from '../src/orchestrator/worker/permitted-stream.js';
import { runRecipeFile } from '../src/orchestrator/run-recipe.js';
import type { ResultFile } from '../src/run/run-state.js';
import { createAgentSession } from '../src/runtime/create-agent-session.js';
import {
  startFakeAnthropic,
  type RecordedRequest,
  type RespondInput,
  type ResponseSpec,
} from '../test/helpers/fake-anthropic-server.js';
import { isSummaryRequest } from '../test/helpers/summary-request.js';

const MODEL_ID = 'claude-sonnet-4-5';
const REPOS = 6;
const WIDE = 12;
const GOAL_READ_SHARE = 0.7;
const GOAL_SUMMARY_SHARE = 0.8;
/** Time to first byte of every reply: the window in which a wave's first requests overlap. */
const FIRST_BYTE_MS = 40;
/** The smallest prefix Sonnet caches. */
const MIN_CACHE_TOKENS = 1024;

// The agent's own instructions, like a recipe's `system:` for a worker (about 900 tokens).
const AGENT_TEXT = [
  'You are a careful refactoring agent working in one repository of a larger change.',
  ...Array.from(
    { length: 24 },
    (_, i) =>
      `Rule ${i + 1}: keep every public function signature, match the surrounding style, and explain each change you make in one sentence (${'keep the diff small and reviewable; '.repeat(2)}).`,
  ),
].join('\n');

const SUMMARY = [
  '## Goal',
  'Rename log() to logger.info() in this repository.',
  '',
  '## Constraints & Preferences',
  '- Keep signatures',
  '',
  '## Progress',
  '### Done',
  '- [x] Found every call in src/',
  '### In Progress',
  '- [ ] Rename the calls',
  '### Blocked',
  '- (none)',
  '',
  '## Key Decisions',
  '- **Rename in place**: no wrapper needed',
  '',
  '## Next Steps',
  '1. Edit src/a.ts and src/b.ts',
  '',
  '## Critical Context',
  '- (none)',
].join('\n');

/** Six turns: five tool calls, then the answer; summary requests get the sectioned summary. */
function respond({ body, index }: RespondInput): ResponseSpec {
  if (isSummaryRequest(body))
    return { kind: 'message', content: [{ type: 'text', text: SUMMARY }], usage: { output_tokens: 1 } };
  const turn = (body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
  const calls: [string, Record<string, unknown>][] = [
    ['ls', { path: '.' }],
    ['read', { path: 'src/a.ts' }],
    ['grep', { pattern: 'log\\(', path: '.' }],
    ['read', { path: 'src/b.ts' }],
    ['find', { pattern: '*.ts' }],
  ];
  const call = calls[turn];
  if (!call)
    return {
      kind: 'message',
      content: [
        { type: 'text', text: 'Found 120 calls of log() in src/a.ts and src/b.ts; they can be renamed in place.' },
      ],
    };
  return {
    kind: 'message',
    content: [
      { type: 'text', text: `Next I look at ${JSON.stringify(call[1])}.` },
      { type: 'tool_use', id: `toolu_${index}`, name: call[0], input: call[1] },
    ],
  };
}

function makeRepo(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  for (const f of ['a', 'b']) {
    const lines = Array.from(
      { length: 60 },
      (_, i) =>
        `export function step${i}(x: number): number {\n  log("${name} ${f} step ${i}", x);\n  return x + ${i};\n}`,
    );
    writeFileSync(join(dir, 'src', `${f}.ts`), `${lines.join('\n')}\n`);
  }
  writeFileSync(join(dir, 'README.md'), `# ${name}\n`);
  return dir;
}

interface Shares {
  turns: { read: number; write: number; input: number };
  summaries: { read: number; write: number; input: number };
  requests: number;
}

function shares(requests: RecordedRequest[]): Shares {
  const out: Shares = {
    turns: { read: 0, write: 0, input: 0 },
    summaries: { read: 0, write: 0, input: 0 },
    requests: requests.length,
  };
  for (const r of requests) {
    const bucket = isSummaryRequest(r.body) ? out.summaries : out.turns;
    bucket.read += r.cache?.read ?? 0;
    bucket.write += r.cache?.write ?? 0;
    bucket.input += r.cache?.input ?? 0;
  }
  return out;
}

const all = (b: { read: number; write: number; input: number }): number => b.read + b.write + b.input;
const pct = (n: number, d: number): string => `${d > 0 ? ((100 * n) / d).toFixed(1) : '0.0'} %`;

/** Input cost in $ at the model's prices, and what the same tokens cost uncached. */
function inputCost(
  model: Model,
  b: { read: number; write: number; input: number },
): { paid: number; uncached: number } {
  const c = model.cost;
  return {
    paid: (b.input * c.input + b.read * c.cacheRead + b.write * c.cacheWrite) / 1e6,
    uncached: (all(b) * c.input) / 1e6,
  };
}

/** The old wire shape (see the top of this file), rebuilt from the new one. */
function legacyPayload(payload: unknown): unknown {
  const p = payload as {
    system?: { type: 'text'; text: string; cache_control?: unknown }[];
    messages: { role: string; content: unknown }[];
  };
  const cache = { type: 'ephemeral' };
  if (p.system?.length)
    p.system = [{ type: 'text', text: p.system.map((b) => b.text).join('\n\n'), cache_control: cache }];
  for (const m of p.messages)
    if (Array.isArray(m.content)) for (const b of m.content as { cache_control?: unknown }[]) delete b.cache_control;
  const last = p.messages[p.messages.length - 1];
  if (last?.role === 'user' && Array.isArray(last.content))
    (last.content[last.content.length - 1] as { cache_control?: unknown }).cache_control = cache;
  return p;
}

/** One fan-out of `n` sessions started together: the old shape, or the new one with or without the warm-up. */
async function fanOut(n: number, mode: 'before' | 'after' | 'after-no-warmup'): Promise<Shares> {
  const before = mode === 'before';
  const server = await startFakeAnthropic({
    respond,
    promptCache: { firstByteDelayMs: FIRST_BYTE_MS, minTokens: MIN_CACHE_TOKENS },
  });
  const root = mkdtempSync(join(tmpdir(), 'orch-cache-bench-'));
  registerBuiltInProviders();
  const model: Model = { ...resolveModel(MODEL_ID, 'anthropic'), baseUrl: server.url };
  // The orchestrator's permit path, with the warm-up gate after the change.
  const warmup = new CacheWarmup();
  const broker = new PermitBroker({ budget: new BudgetLedger(), ...(mode === 'after' ? { gate: warmup } : {}) });
  const ids = Array.from({ length: n }, (_, i) => `repo-${i + 1}`);
  warmup.arm('fan-out', ids);
  try {
    await Promise.all(
      ids.map(async (id) => {
        const channel: PermitChannel = {
          request: (m, _kind, signal) =>
            broker.request({
              model: m,
              scopes: ['run', `instance:${id}`],
              estimate: { usd: 0, tokens: 0 },
              ...(signal ? { signal } : {}),
            }),
          started: (slot, at) => broker.started(slot, at),
          usage: (slot, _m, usage) => broker.usage(slot, usage),
          rateLimited: () => {},
        };
        const streamFn: StreamFunction = withPermits(registryStream, channel);
        const session = await createAgentSession({
          cwd: makeRepo(root, id),
          inMemory: true,
          model,
          apiKey: 'sk-ant-bench',
          tools: ['read', 'ls', 'grep', 'find'],
          appendSystemPrompt: AGENT_TEXT,
          defaultSkills: false,
          contextFiles: false,
          thinkingLevel: 'off',
          streamFn,
          // Before: summaries through another stream function take the transcript path.
          ...(before
            ? { summaryStreamFn: withPermits(registryStream, channel), streamOptions: { onPayload: legacyPayload } }
            : {}),
          notify: () => {},
        });
        await session.prompt(
          'Find every call of log() in this repository and say how to rename them to logger.info().',
        );
        await session.compact('This summary is a handoff to the coordinator of a multi-agent run.', {
          keepRecentTokens: 0,
        });
        await session.dispose();
      }),
    );
    return shares(server.requests);
  } finally {
    broker.close();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** The same fan-out through the real orchestrator: result.json's cache figures. */
async function orchestrated(n: number): Promise<{ result: ResultFile; shares: Shares }> {
  const server = await startFakeAnthropic({
    respond,
    promptCache: { firstByteDelayMs: FIRST_BYTE_MS, minTokens: MIN_CACHE_TOKENS },
  });
  const root = mkdtempSync(join(tmpdir(), 'orch-cache-bench-run-'));
  const repos = Array.from({ length: n }, (_, i) => `repo-${i + 1}`);
  for (const r of repos) makeRepo(join(root, 'repos'), r);
  writeFileSync(
    join(root, 'recipe.yaml'),
    `name: cache-bench
model: ${MODEL_ID}
concurrency: ${n}
agents:
  worker:
    system: ${JSON.stringify(AGENT_TEXT)}
    tools: [read, ls, grep, find]
tasks:
  - id: rename
    for_each: { glob: "repos/*" }
    agent: worker
    cwd: \${{ item }}
    prompt: "Find every call of log() in this repository and say how to rename them to logger.info()."
`,
  );
  try {
    const r = await runRecipeFile(
      join(root, 'recipe.yaml'),
      { cwd: root },
      {
        runsDir: join(root, 'runs'),
        env: { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-bench', ANTHROPIC_BASE_URL: server.url },
      },
    );
    if (!r.ok) throw new Error(`the run did not start: ${JSON.stringify(r)}`);
    if (r.outcome.status !== 'succeeded') throw new Error(`the run ended ${r.outcome.status}`);
    const result = JSON.parse(readFileSync(join(r.outcome.dir, 'result.json'), 'utf8')) as ResultFile;
    return { result, shares: shares(server.requests) };
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Issue 32's row "32 one-turn agents, one process, fake Anthropic server over HTTP": the same
 * fan-out (one answer, no tools) with its folders inside one git repository (every instance takes
 * a workspace snapshot and a landing diff) and outside any; goal: inside as fast as outside.
 */
async function oneTurn(n: number, insideGit: boolean): Promise<number> {
  return (await oneTurnRun(n, insideGit)).ms;
}

/** One such run: its wall time and the coordinator's longest event-loop stall meanwhile. */
async function oneTurnRun(n: number, insideGit: boolean): Promise<{ ms: number; maxDelayMs: number }> {
  const server = await startFakeAnthropic({
    respond: () => ({ kind: 'message', content: [{ type: 'text', text: 'done' }] }),
  });
  const root = mkdtempSync(join(tmpdir(), 'orch-cache-bench-oneturn-'));
  for (let i = 0; i < n; i++) makeRepo(join(root, 'repos'), `repo-${String(i).padStart(3, '0')}`);
  writeFileSync(
    join(root, 'recipe.yaml'),
    `name: one-turn\nmodel: ${MODEL_ID}\nconcurrency: ${n}\nagents:\n  worker: { tools: [read] }\n` +
      `tasks:\n  - id: answer\n    for_each: { glob: "repos/*" }\n    agent: worker\n    cwd: \${{ item }}\n    prompt: "Say done."\n`,
  );
  if (insideGit) {
    writeFileSync(join(root, '.gitignore'), 'runs/\n.orchestrate/\n');
    for (const a of [
      ['init', '-q'],
      ['add', '-A'],
      ['-c', 'user.name=b', '-c', 'user.email=b@localhost', 'commit', '-qm', 'x'],
    ])
      execFileSync('git', a, { cwd: root, stdio: 'pipe' });
  }
  try {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const t0 = performance.now();
    const r = await runRecipeFile(
      join(root, 'recipe.yaml'),
      { cwd: root },
      {
        runsDir: join(root, 'runs'),
        env: { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-bench', ANTHROPIC_BASE_URL: server.url },
      },
    );
    const ms = performance.now() - t0;
    delay.disable();
    if (!r.ok || r.outcome.status !== 'succeeded')
      throw new Error(`the one-turn run failed: ${JSON.stringify(r).slice(0, 300)}`);
    return { ms, maxDelayMs: delay.max / 1e6 };
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const model = resolveModel(MODEL_ID, 'anthropic');
function report(label: string, s: Shares): { turnShare: number; summaryShare: number; paid: number; uncached: number } {
  const both = {
    read: s.turns.read + s.summaries.read,
    write: s.turns.write + s.summaries.write,
    input: s.turns.input + s.summaries.input,
  };
  const cost = inputCost(model, both);
  const turnShare = s.turns.read / Math.max(1, all(s.turns));
  const summaryShare = s.summaries.read / Math.max(1, all(s.summaries));
  console.log(
    `${label.padEnd(30)} ${String(s.requests).padStart(4)} req  turns: ${pct(s.turns.read, all(s.turns)).padStart(7)} read, ${pct(s.turns.write, all(s.turns)).padStart(7)} written` +
      `  summaries: ${pct(s.summaries.read, all(s.summaries)).padStart(7)} read  all input: ${pct(both.read, all(both)).padStart(7)} read` +
      `  input $${cost.paid.toFixed(4)} vs $${cost.uncached.toFixed(4)} uncached (${pct(cost.uncached - cost.paid, cost.uncached)} saved)`,
  );
  return { turnShare, summaryShare, paid: cost.paid, uncached: cost.uncached };
}

// `--one-turn`: only the issue 32 line below.
if (!process.argv.includes('--one-turn') && !process.argv.includes('--one-turn-child')) {
  console.log(
    `model ${MODEL_ID}: input $${model.cost.input}/M, cache read $${model.cost.cacheRead}/M, cache write $${model.cost.cacheWrite}/M; replies start after ${FIRST_BYTE_MS} ms\n`,
  );
  const results: Record<string, ReturnType<typeof report>> = {};
  for (const n of [REPOS, WIDE]) {
    results[`before ${n}`] = report(`before: ${n} repos`, await fanOut(n, 'before'));
    report(`after, no warm-up: ${n} repos`, await fanOut(n, 'after-no-warmup'));
    results[`after ${n}`] = report(`after:  ${n} repos`, await fanOut(n, 'after'));
  }
  const run = await orchestrated(WIDE);
  const u = run.result.usage;
  report(`orchestrator: ${WIDE} repos`, run.shares);
  console.log(
    `  result.json: cache read ${u.cacheRead}, written ${u.cacheWrite} (${pct(u.cacheRead, u.input + u.cacheRead + u.cacheWrite)} of input read), saved $${(u.cacheSaved ?? 0).toFixed(4)} against uncached prices`,
  );

  const after = results[`after ${REPOS}`]!;
  const before = results[`before ${REPOS}`]!;
  console.log(
    `\n${REPOS}-repo fan-out: turns read ${pct(after.turnShare, 1)} of input (before ${pct(before.turnShare, 1)}; goal >= ${pct(GOAL_READ_SHARE, 1)}), ` +
      `summaries ${pct(after.summaryShare, 1)} (before ${pct(before.summaryShare, 1)}; goal >= ${pct(GOAL_SUMMARY_SHARE, 1)}); ` +
      `input cost $${after.paid.toFixed(4)} (before $${before.paid.toFixed(4)}, uncached $${after.uncached.toFixed(4)})`,
  );
  const met = after.turnShare >= GOAL_READ_SHARE && after.summaryShare >= GOAL_SUMMARY_SHARE;
  console.log(met ? 'verdict: goals met' : 'verdict: goals MISSED');
}

// `--one-turn-child inside|outside`: one cold run in this fresh process (what one CLI run pays:
// bwrap's probe and product git's private home are made during it), printed as JSON.
const child = process.argv.indexOf('--one-turn-child');
if (child > 0) {
  console.log(JSON.stringify(await oneTurnRun(32, process.argv[child + 1] === 'inside')));
  process.exit(0);
}

// Issue 32: 32 one-turn agents inside one repository vs outside (alternating; median of 3), warm
// (in this process, after a warm-up) and cold (each run in a fresh process).
const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const inside: number[] = [];
const outside: number[] = [];
await oneTurn(4, true); // warm-up
for (let round = 0; round < 3; round++) {
  inside.push(await oneTurn(32, true));
  outside.push(await oneTurn(32, false));
}
const mid = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const list = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(', ');
console.log(
  `\n32 one-turn agents, fake Anthropic over HTTP, warm process: inside one git repository ${mid(inside).toFixed(0)} ms, outside ${mid(outside).toFixed(0)} ms ` +
    `= ${(mid(inside) / mid(outside)).toFixed(2)}x (goal <= 1.1x, now/goal ${(mid(inside) / mid(outside) / 1.1).toFixed(2)}; runs inside ${list(inside)}, outside ${list(outside)} ms; load ${load()})`,
);
const cold = { inside: [] as number[], outside: [] as number[], stallIn: [] as number[], stallOut: [] as number[] };
for (let round = 0; round < 3; round++) {
  for (const where of ['inside', 'outside'] as const) {
    const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1]!, '--one-turn-child', where], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { ms: number; maxDelayMs: number };
    cold[where].push(r.ms);
    cold[where === 'inside' ? 'stallIn' : 'stallOut'].push(r.maxDelayMs);
  }
}
console.log(
  `32 one-turn agents, cold process each: inside ${mid(cold.inside).toFixed(0)} ms, outside ${mid(cold.outside).toFixed(0)} ms ` +
    `= ${(mid(cold.inside) / mid(cold.outside)).toFixed(2)}x (goal <= 1.1x, now/goal ${(mid(cold.inside) / mid(cold.outside) / 1.1).toFixed(2)}; runs inside ${list(cold.inside)}, outside ${list(cold.outside)} ms; ` +
    `coordinator's longest event-loop stall inside ${list(cold.stallIn)}, outside ${list(cold.stallOut)} ms; load ${load()})`,
);
