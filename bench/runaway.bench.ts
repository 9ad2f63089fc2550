// Requests a misbehaving model gets before the runtime stops it (issue: "a looping model spends
// without bound"). Each scenario runs one AgentSession — the one `orchestrate agent` and every
// orchestrated instance run — through the real Anthropic SDK against the local fake Messages API,
// with real tools on a temp folder, and counts the requests the server saw.
//
// Baseline, measured in the same run: the same looping model with every guard off (loop detection
// disabled, no turn cap), stopped from outside after BASELINE_MS — what the runtime did before.
// Goal: a looping agent is stopped within 12 requests.
// Run: node --import tsx bench/runaway.bench.ts
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveModel } from '../src/ai/models.js';
import { createAgentSession } from '../src/runtime/create-agent-session.js';
import { isRunStoppedError, type LoopDetectionSettings, type RunLimits } from '../src/runtime/run-limits.js';
import { startFakeAnthropic, type ResponseSpec } from '../test/helpers/fake-anthropic-server.js';

const GOAL_REQUESTS = 12;
const BASELINE_MS = 3_000;

type Respond = (index: number) => ResponseSpec;
const call = (name: string, input: Record<string, unknown>, index: number): ResponseSpec => ({
  kind: 'message',
  content: [{ type: 'tool_use', id: `toolu_${index}`, name, input }],
  usage: { input_tokens: 2_000, output_tokens: 40 },
});

const scenarios: {
  name: string;
  respond: Respond;
  loopDetection?: Partial<LoopDetectionSettings>;
  limits?: Partial<RunLimits>;
  baseline?: boolean;
}[] = [
  { name: 'the same call forever', respond: (i) => call('read', { path: 'a.txt' }, i) },
  { name: 'a cycle of two calls', respond: (i) => call('read', { path: i % 2 ? 'b.txt' : 'a.txt' }, i) },
  { name: 'a cycle of three calls', respond: (i) => call('read', { path: ['a.txt', 'b.txt', 'c.txt'][i % 3]! }, i) },
  {
    name: 'new calls forever (turn cap 50)',
    respond: (i) => call('write', { path: `f${i}.txt`, content: String(i) }, i),
    limits: { maxTurns: 50 },
  },
  {
    name: 'baseline: same call, guards off',
    respond: (i) => call('read', { path: 'a.txt' }, i),
    loopDetection: { enabled: false },
    limits: { maxTurns: 0 },
    baseline: true,
  },
];

async function runScenario(s: (typeof scenarios)[number]): Promise<{ requests: number; ms: number; outcome: string }> {
  const server = await startFakeAnthropic({ respond: ({ index }) => s.respond(index) });
  const cwd = mkdtempSync(join(tmpdir(), 'orch-runaway-'));
  for (const f of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(cwd, f), `${f}\n`);
  const session = await createAgentSession({
    cwd,
    inMemory: true,
    tools: ['read', 'write'],
    defaultSkills: false,
    contextFiles: false,
    model: { ...resolveModel('claude-sonnet-4-5'), baseUrl: server.url },
    apiKey: 'sk-ant-bench',
    notify: () => {},
    ...(s.loopDetection ? { loopDetection: s.loopDetection } : {}),
    ...(s.limits ? { limits: s.limits } : {}),
  });
  const started = performance.now();
  const timer = s.baseline ? setTimeout(() => void session.abort(), BASELINE_MS) : undefined;
  let outcome = 'finished';
  try {
    await session.prompt('Read a.txt and tell me what it says.');
  } catch (err) {
    outcome = isRunStoppedError(err) ? `stopped (${err.kind})` : `error: ${String(err)}`;
  }
  if (timer) {
    clearTimeout(timer);
    outcome = `aborted from outside after ${BASELINE_MS} ms`;
  }
  const ms = performance.now() - started;
  await session.dispose();
  await server.close();
  rmSync(cwd, { recursive: true, force: true });
  return { requests: server.requests.length, ms, outcome };
}

let worst = 0;
let baselineRequests = 0;
for (const s of scenarios) {
  const r = await runScenario(s);
  if (s.baseline) baselineRequests = r.requests;
  else if (!s.limits) worst = Math.max(worst, r.requests);
  console.log(
    `${s.name.padEnd(34)} ${String(r.requests).padStart(5)} requests  ${r.ms.toFixed(0).padStart(6)} ms  ${r.outcome}`,
  );
}
console.log(
  `\nlooping agent: stopped after at most ${worst} requests (goal <= ${GOAL_REQUESTS}); unguarded baseline: ${baselineRequests} requests in ${BASELINE_MS / 1000} s and still going`,
);
console.log(worst <= GOAL_REQUESTS ? 'verdict: goal met' : 'verdict: goal MISSED');
