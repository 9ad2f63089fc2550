// Loop overhead per turn: N turns of one trivial tool call each against an instant model, through
// runAgentLoop and through the Agent class, against a bare loop doing the same work by hand.
// Goal: <= 30 µs/turn, and flat: the last 10 % of turns cost the same as the first 10 %.
//
// Cold (issue #32): the same runs in a fresh process each, nothing warmed up, so the first
// thousand turns include what the JIT and the first calls cost: the bare loop, ours
// (runAgentLoop) and the reference's (pi-agent-core's runAgentLoop, bench/node_modules, the same
// instant model and a no-op tool with a plain JSON Schema). Goal: ours <= 3x the bare loop at
// 1k turns; printed as now/goal. BENCH_LOOP_COLD_RUNS (default 5) processes per figure, median.
//
// The model is a stream function that returns a prebuilt tool-call reply at once (start + done
// events). The scripted provider (src/ai/scripted.ts) is not used here on purpose: it counts
// replies and tokens over the whole context on every call, like a real provider serialising the
// request, so its own cost grows with the history and would hide what this bench measures.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Agent } from '../src/agent/agent.js';
import { runAgentLoop } from '../src/agent/loop.js';
import type { AgentContext, AgentEvent, AgentMessage, AnyAgentTool } from '../src/agent/types.js';
import { AssistantMessageEventStream } from '../src/ai/event-stream.js';
import type { AssistantMessage, Model, StreamFunction, ToolResultMessage } from '../src/ai/types.js';
import { emptyUsage } from '../src/ai/usage.js';

const GOAL_US_PER_TURN = 30;

const model: Model = {
  id: 'instant',
  name: 'instant',
  api: 'instant',
  provider: 'instant',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000_000,
  maxTokens: 1000,
};

const noop: AnyAgentTool = {
  name: 'noop',
  description: 'Does nothing',
  parameters: z.object({ n: z.number() }),
  async execute() {
    return { content: [{ type: 'text', text: 'ok' }] };
  },
};

function reply(i: number, toolCall: boolean): AssistantMessage {
  return {
    role: 'assistant',
    content: toolCall
      ? [{ type: 'toolCall', id: `c${i}`, name: 'noop', arguments: { n: i } }]
      : [{ type: 'text', text: 'done' }],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: toolCall ? 'toolUse' : 'stop',
    timestamp: 0,
  };
}

/** Replies with a tool call for the first `turns` calls, then with text (which ends the run). */
function instantModel(turns: number): StreamFunction {
  const replies = Array.from({ length: turns + 1 }, (_, i) => reply(i, i < turns));
  let call = 0;
  return () => {
    const message = replies[call++] ?? reply(call, false);
    const s = new AssistantMessageEventStream(model);
    s.push({ type: 'start', partial: message });
    s.push({ type: 'done', reason: message.stopReason === 'toolUse' ? 'toolUse' : 'stop', message });
    return s;
  };
}

interface Measurement {
  totalMs: number;
  /** Time at the end of each tool turn, relative to the start (ms). */
  marks: Float64Array;
}

async function measureLoop(turns: number): Promise<Measurement> {
  const marks = new Float64Array(turns);
  let turn = 0;
  const context: AgentContext = { systemPrompt: 'bench', messages: [], tools: [noop] };
  const emit = (e: AgentEvent): void => {
    if (e.type === 'turn_end' && turn < turns) marks[turn++] = performance.now() - t0;
  };
  const prompt: AgentMessage = { role: 'user', content: 'go', timestamp: 0 };
  const t0 = performance.now();
  await runAgentLoop([prompt], context, { model, streamFn: instantModel(turns) }, emit);
  return { totalMs: performance.now() - t0, marks };
}

async function measureAgent(turns: number): Promise<Measurement> {
  const marks = new Float64Array(turns);
  let turn = 0;
  const agent = new Agent({
    initialState: { model, systemPrompt: 'bench', tools: [noop] },
    streamFn: instantModel(turns),
  });
  agent.subscribe((e) => {
    if (e.type === 'turn_end' && turn < turns) marks[turn++] = performance.now() - t0;
  });
  const t0 = performance.now();
  await agent.prompt('go');
  return { totalMs: performance.now() - t0, marks };
}

/** The same work without the agent: consume the reply stream, call the tool, push the messages. */
async function measureBaseline(turns: number): Promise<Measurement> {
  const marks = new Float64Array(turns);
  const streamFn = instantModel(turns);
  const messages: AgentMessage[] = [{ role: 'user', content: 'go', timestamp: 0 }];
  const signal = new AbortController().signal;
  const t0 = performance.now();
  for (let i = 0; i <= turns; i++) {
    const events = streamFn(model, { messages: [] });
    for await (const _event of events) {
      // consumed like the loop does
    }
    const message = await events.result();
    messages.push(message);
    const call = message.content[0];
    if (call?.type !== 'toolCall') break;
    const result = await noop.execute(call.id, call.arguments, signal, () => {});
    const toolResult: ToolResultMessage = {
      role: 'toolResult',
      toolCallId: call.id,
      toolName: call.name,
      content: result.content,
      isError: false,
      timestamp: Date.now(),
    };
    messages.push(toolResult);
    marks[i] = performance.now() - t0;
  }
  return { totalMs: performance.now() - t0, marks };
}

function perTurn(m: Measurement): { overall: number; first: number; last: number } {
  const n = m.marks.length;
  const tenth = Math.max(1, Math.floor(n / 10));
  const first = (m.marks[tenth - 1]! / tenth) * 1000;
  const last = ((m.marks[n - 1]! - m.marks[n - 1 - tenth]!) / tenth) * 1000;
  return { overall: (m.marks[n - 1]! / n) * 1000, first, last };
}

const fmt = (x: number, digits = 1): string => x.toFixed(digits).padStart(9);
const rssMb = (): string => `${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`;
const REPEATS = 5;

type Stats = { overall: number; first: number; last: number };

/** Median of REPEATS runs for each figure (the machine is shared; single runs are noisy). */
async function measure(run: (turns: number) => Promise<Measurement>, turns: number): Promise<Stats> {
  const all: Stats[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // No forced gc() between runs: a full GC shrinks the young generation, and the next run's
    // first turns then measure its regrowth instead of the loop.
    all.push(perTurn(await run(turns)));
  }
  const median = (pick: (s: Stats) => number): number => all.map(pick).sort((a, b) => a - b)[Math.floor(REPEATS / 2)]!;
  return { overall: median((s) => s.overall), first: median((s) => s.first), last: median((s) => s.last) };
}

// ---- cold runs: one fresh process per figure -------------------------------------------------

const REF_AGENT = '@mariozechner/pi-agent-core';
const REF_AI = '@mariozechner/pi-ai';
const benchDir = dirname(fileURLToPath(import.meta.url));

/** The reference's loop on the same instant model (its API: bench/node_modules/.../agent-loop.d.ts). */
async function measureRefLoop(turns: number): Promise<Measurement> {
  const agentSpec = REF_AGENT; // variables keep tsc from resolving bench-only node_modules
  const aiSpec = REF_AI;
  const core = (await import(agentSpec)) as {
    runAgentLoop(
      prompts: unknown[],
      context: unknown,
      config: unknown,
      emit: (e: { type: string }) => void,
      signal: AbortSignal | undefined,
      streamFn: unknown,
    ): Promise<unknown[]>;
  };
  const ai = (await import(aiSpec)) as { createAssistantMessageEventStream(): { push(e: unknown): void } };
  const replies = Array.from({ length: turns + 1 }, (_, i) => reply(i, i < turns));
  let call = 0;
  const streamFn = () => {
    const message = replies[call++] ?? reply(call, false);
    const s = ai.createAssistantMessageEventStream();
    s.push({ type: 'start', partial: message });
    s.push({ type: 'done', reason: message.stopReason === 'toolUse' ? 'toolUse' : 'stop', message });
    return s;
  };
  const tool = {
    name: 'noop',
    label: 'noop',
    description: 'Does nothing',
    parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    async execute() {
      return { content: [{ type: 'text', text: 'ok' }], details: {} };
    },
  };
  const marks = new Float64Array(turns);
  let turn = 0;
  const prompt = { role: 'user', content: 'go', timestamp: 0 };
  const convertToLlm = (messages: AgentMessage[]) =>
    messages.filter((m) => m.role === 'user' || m.role === 'assistant' || m.role === 'toolResult');
  const t0 = performance.now();
  await core.runAgentLoop(
    [prompt],
    { systemPrompt: 'bench', messages: [], tools: [tool] },
    { model, convertToLlm },
    (e) => {
      if (e.type === 'turn_end' && turn < turns) marks[turn++] = performance.now() - t0;
    },
    undefined,
    streamFn,
  );
  return { totalMs: performance.now() - t0, marks };
}

const COLD_VARIANTS: Record<string, (turns: number) => Promise<Measurement>> = {
  bare: measureBaseline,
  ours: measureLoop,
  agent: measureAgent,
  ref: measureRefLoop,
};

/** Child: one cold measurement, printed as JSON. */
async function coldChild(variant: string, turns: number): Promise<void> {
  const run = COLD_VARIANTS[variant];
  if (!run) throw new Error(`unknown cold variant ${variant}`);
  const c0 = process.cpuUsage();
  const m = await run(turns);
  const cpu = process.cpuUsage(c0);
  // CPU time beside wall time: on a shared, loaded box the wall clock mostly measures the others.
  console.log(JSON.stringify({ usPerTurn: (m.totalMs * 1000) / turns, cpuUsPerTurn: (cpu.user + cpu.system) / turns }));
}

interface ColdFigure {
  usPerTurn: number;
  cpuUsPerTurn: number;
}

function coldRun(variant: string, turns: number): ColdFigure | undefined {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--cold', variant, String(turns)],
    {
      encoding: 'utf8',
    },
  );
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{')) {
    console.log(
      `  cold ${variant} ${turns}: FAILED ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`,
    );
    return undefined;
  }
  return JSON.parse(last) as ColdFigure;
}

const GOAL_COLD_RATIO = 3;

function coldSection(): void {
  const runs = Number(process.env.BENCH_LOOP_COLD_RUNS ?? 5);
  const hasRef = existsSync(join(benchDir, 'node_modules', ...REF_AGENT.split('/')));
  const variants = ['bare', 'ours', 'agent', ...(hasRef ? ['ref'] : [])];
  console.log(
    `\ncold: a fresh process per run, nothing warmed up, median of ${runs} runs${hasRef ? '' : ' (reference not installed: run the session bench once, it installs bench/node_modules)'}`,
  );
  const median = (xs: number[]): number | undefined =>
    xs.length === 0 ? undefined : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const wall = new Map<string, number | undefined>();
  const cpu = new Map<string, number | undefined>();
  for (const turns of [1000, 10_000]) {
    const samples = new Map<string, ColdFigure[]>(variants.map((v) => [v, []]));
    // Alternating, so a burst of load elsewhere hits every variant alike.
    for (let r = 0; r < runs; r++)
      for (const v of variants) {
        const f = coldRun(v, turns);
        if (f !== undefined) samples.get(v)!.push(f);
      }
    for (const v of variants) {
      wall.set(`${v}@${turns}`, median(samples.get(v)!.map((f) => f.usPerTurn)));
      cpu.set(`${v}@${turns}`, median(samples.get(v)!.map((f) => f.cpuUsPerTurn)));
    }
    const bw = wall.get(`bare@${turns}`);
    const bc = cpu.get(`bare@${turns}`);
    for (const v of variants) {
      const w = wall.get(`${v}@${turns}`);
      const c = cpu.get(`${v}@${turns}`);
      console.log(
        `  ${v.padEnd(6)} ${String(turns).padStart(6)} turns  wall ${w === undefined ? '-' : w.toFixed(1)} µs/turn${w !== undefined && bw ? ` (${(w / bw).toFixed(2)}x bare)` : ''}  cpu ${c === undefined ? '-' : c.toFixed(1)} µs/turn${c !== undefined && bc ? ` (${(c / bc).toFixed(2)}x bare)` : ''}`,
      );
    }
  }
  for (const [label, figures] of [
    ['wall', wall],
    ['cpu', cpu],
  ] as const) {
    const ours = figures.get('ours@1000');
    const bare = figures.get('bare@1000');
    const ref = figures.get('ref@1000');
    if (ours === undefined || !bare) continue;
    const ratio = ours / bare;
    const nowGoal = ratio / GOAL_COLD_RATIO;
    console.log(
      `  ${nowGoal <= 1 ? 'met ' : 'MISS'} agent loop cold at 1k turns (${label} time): now ${ratio.toFixed(2)}x the bare loop (${ours.toFixed(1)} vs ${bare.toFixed(1)} µs/turn), goal ${GOAL_COLD_RATIO}x, now/goal ${nowGoal.toFixed(2)}` +
        (ref !== undefined
          ? `; pi ${ref.toFixed(1)} µs/turn (${(ref / bare).toFixed(2)}x the bare loop, ${(ref / ours).toFixed(2)}x ours)`
          : ''),
    );
  }
}

async function main(): Promise<void> {
  console.log(
    `agent-loop: overhead per turn, one trivial tool call per turn, instant model (median of ${REPEATS} runs)`,
  );
  // Warm-up so the JIT has optimised the hot paths and the young generation has grown to its
  // working size before anything is timed (otherwise the first runs measure the JIT, not the loop).
  for (let i = 0; i < 3; i++) {
    await measureBaseline(10_000);
    await measureLoop(10_000);
    await measureAgent(10_000);
  }

  console.log(
    `${'variant'.padEnd(16)}${'turns'.padStart(7)}${'turns/s'.padStart(10)}${'µs/turn'.padStart(9)}${'first10%'.padStart(9)}${'last10%'.padStart(9)}${'last/first'.padStart(11)}${'vs base'.padStart(9)}   rss`,
  );
  const verdicts: string[] = [];
  for (const turns of [1000, 10_000]) {
    const base = await measure(measureBaseline, turns);
    const rows: [string, Stats][] = [['baseline (bare)', base]];
    rows.push(['runAgentLoop', await measure(measureLoop, turns)]);
    rows.push(['Agent class', await measure(measureAgent, turns)]);
    for (const [name, r] of rows) {
      const ratio = name.startsWith('baseline') ? '' : `${(r.overall / base.overall).toFixed(1)}x`;
      console.log(
        `${name.padEnd(16)}${String(turns).padStart(7)}${fmt(1e6 / r.overall, 0).padStart(10)}${fmt(r.overall)}${fmt(r.first)}${fmt(r.last)}${fmt(r.last / r.first, 2).padStart(11)}${ratio.padStart(9)}   ${rssMb()}`,
      );
      if (!name.startsWith('baseline') && turns === 10_000) {
        const ok = r.overall <= GOAL_US_PER_TURN && r.last <= GOAL_US_PER_TURN;
        verdicts.push(
          `${name}: ${r.overall.toFixed(1)} µs/turn, first 10 % ${r.first.toFixed(1)}, last 10 % ${r.last.toFixed(1)} -> ${ok ? 'within' : 'OVER'} the ${GOAL_US_PER_TURN} µs goal`,
        );
      }
    }
  }
  for (const v of verdicts) console.log(v);
  coldSection();
}

if (process.argv[2] === '--cold') await coldChild(process.argv[3]!, Number(process.argv[4]));
else await main();
