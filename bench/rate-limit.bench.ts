// Throughput at the provider's ceiling (issue #41): 100 agents x 5 turns against a fake Anthropic
// and a fake OpenAI API that enforce their documented limits as token buckets (Anthropic: requests,
// uncached input tokens and output tokens; OpenAI: requests and tokens), with the vendors' real
// rate-limit headers on every response and a 429 beyond that is as strict as the real one
// (test/helpers/provider-rate-limits.ts): Anthropic names its wait in retry-after, whole seconds
// only; OpenAI names none (its x-ratelimit-reset-* say when a limit is full again) and counts a
// refused request against the requests per minute. Each agent's calls go through the real SDK on
// the wire and the product's permit path (withPermits -> PermitBroker), four ways:
//   before    no pacing and a 429 spends the call's retries (3), as the product did before #41;
//   none      no pacing, a busy 429 waited out (retry-after, or a backoff) without spending the retries;
//   static    a declared `rate_limit:` the user guessed (requests only);
//   adaptive  the limits learned from the headers (the default now).
// To keep the bench short, the providers' one-minute window is scaled down to WINDOW_MS; the rules
// stay the same (limits per window, continuous refill, 429 beyond), and so does the client's clock:
// its first backoff (1 s of the real minute) and the cap of its waits (60 s) are scaled with the
// window too (RETRY_BASE_MS, RETRY_CAP_MS).
// Goals (adaptive): sustained tokens per window >= 90 % of the binding limit, <= 1 % of requests
// answered 429, wall <= 1.15x the ideal (counted tokens / limit), and >= 1.5x faster than none.
// Run: node --import tsx bench/rate-limit.bench.ts
import { loadavg } from 'node:os';
import { streamAnthropic } from '../src/ai/anthropic.js';
import { getModel } from '../src/ai/models.js';
import { streamOpenAIChat } from '../src/ai/openai-compatible.js';
import { modelForProvider } from '../src/ai/provider-config.js';
import type { Message, Model, StreamFunction } from '../src/ai/types.js';
import { BudgetLedger } from '../src/orchestrator/schedule/budget.js';
import { PermitBroker } from '../src/orchestrator/pacing/permit-broker.js';
import { type PermitChannel, withPermits } from '../src/orchestrator/worker/permitted-stream.js';
import { startFakeAnthropic } from '../test/helpers/fake-anthropic-server.js';
import { startFakeOpenAI } from '../test/helpers/fake-openai-server.js';
import { bodyTokens, type EnforcedLimits, ProviderLimitEnforcer } from '../test/helpers/provider-rate-limits.js';

const AGENTS = 100;
const TURNS = 5;
const WINDOW_MS = 2_000;
const MAX_TOKENS = 256;
const OUTPUT_TOKENS = 50;
/** The guess a user would write as `rate_limit:` (requests per window): below the requests limit, blind to tokens. */
const STATIC_RATE_LIMIT = 60;
const GOALS = { sustained: 0.9, refused: 0.01, ideal: 1.15, speedup: 1.5 };
/** The product's first backoff (aiDefaults.retryBaseDelayMs, 1 s of a 60 s window), scaled as the window is. */
const RETRY_BASE_MS = (1000 * WINDOW_MS) / 60_000;
/** The cap of a wait (aiDefaults.maxRetryDelayMs, 60 s: it caps the backoff too), scaled the same way. */
const RETRY_CAP_MS = (60_000 * WINDOW_MS) / 60_000;

const ANTHROPIC_LIMITS: EnforcedLimits = {
  windowMs: WINDOW_MS,
  requests: 100,
  inputTokens: 40_000,
  outputTokens: 40_000,
};
const OPENAI_LIMITS: EnforcedLimits = { windowMs: WINDOW_MS, requests: 100, tokens: 50_000 };

/** A system prompt of ~400 tokens, the same for every agent (as a fan-out's shared prefix). */
const SYSTEM = `You review one repository of a fan-out and report what you found. ${'Be exact and short. '.repeat(80)}`;
const REPLY = 'Looked at the files; nothing to change here yet. '.repeat(4);

type Mode = 'before' | 'none' | 'static' | 'adaptive';

interface Outcome {
  wallMs: number;
  requests: number;
  refused: number;
  failedAgents: number;
  countedTokens: number;
}

function channelTo(broker: PermitBroker): PermitChannel {
  return {
    request: async (model, _kind, signal, provider, info) => {
      const o = await broker.request({
        model,
        ...(provider !== undefined ? { provider } : {}),
        scopes: ['run'],
        estimate: { usd: 0, tokens: 0 },
        ...(info ? { call: info.call, ...(info.keyHash !== undefined ? { keyHash: info.keyHash } : {}) } : {}),
        ...(signal ? { signal } : {}),
      });
      return o.ok ? { ok: true, slotId: o.slotId } : { ok: false, reason: o.reason };
    },
    started: (slot, at, heard) => broker.started(slot, at, heard),
    usage: (slot, _model, usage) => broker.usage(slot, usage),
    rateLimited: (model, delayMs, _status, provider) => broker.pause(model, delayMs, provider),
  };
}

/** One agent: TURNS calls, each with the conversation so far. */
async function agent(stream: StreamFunction, model: Model, n: number): Promise<boolean> {
  const messages: Message[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    messages.push({ role: 'user', content: `Repository ${n}, step ${turn}: list what changed and why.`, timestamp: 1 });
    const s = stream(
      model,
      { systemPrompt: SYSTEM, messages },
      {
        apiKey: 'sk-bench',
        maxTokens: MAX_TOKENS,
        maxRetries: 3,
        retryBaseDelayMs: RETRY_BASE_MS,
        maxRetryDelayMs: RETRY_CAP_MS,
      },
    );
    const reply = await s.result();
    if (reply.stopReason === 'error' || reply.stopReason === 'aborted') return false;
    messages.push(reply);
  }
  return true;
}

async function runMode(vendor: 'anthropic' | 'openai', mode: Mode, agents = AGENTS): Promise<Outcome> {
  const limits = vendor === 'anthropic' ? ANTHROPIC_LIMITS : OPENAI_LIMITS;
  const enforcer = new ProviderLimitEnforcer(vendor, limits);
  let requests = 0;
  let refused = 0;
  const admit = (body: unknown, maxTokens: number) => {
    requests++;
    const a = enforcer.admit({ input: bodyTokens(body), maxTokens });
    if (!a.ok) refused++;
    else enforcer.finish(a.ticket, OUTPUT_TOKENS);
    return a;
  };
  const broker = new PermitBroker({
    budget: new BudgetLedger(),
    adaptive: mode === 'adaptive',
    learnedWindowMs: WINDOW_MS,
    windowMs: WINDOW_MS,
    ...(mode === 'static' ? { rateLimits: { '*': STATIC_RATE_LIMIT } } : {}),
  });
  let close: () => Promise<void>;
  let model: Model;
  let base: StreamFunction;
  if (vendor === 'anthropic') {
    const server = await startFakeAnthropic({
      respond: ({ body }) => {
        const a = admit(body, Number(body.max_tokens));
        if (!a.ok)
          return {
            kind: 'http-error',
            status: 429,
            errorType: 'rate_limit_error',
            message: 'rate limited',
            headers: a.headers,
          };
        return {
          kind: 'message',
          content: [{ type: 'text', text: REPLY }],
          usage: { input_tokens: bodyTokens(body), output_tokens: 1 },
          deltaUsage: { output_tokens: OUTPUT_TOKENS },
          headers: a.headers,
        };
      },
    });
    close = () => server.close();
    model = { ...getModel('claude-haiku-4-5')!, baseUrl: server.url };
    base = streamAnthropic;
  } else {
    const server = await startFakeOpenAI({
      respond: ({ body }) => {
        const a = admit(body, Number(body.max_tokens ?? body.max_completion_tokens));
        if (!a.ok)
          return {
            kind: 'http-error',
            status: 429,
            message: `Rate limit reached on ${a.binding} per min`,
            type: a.binding,
            code: 'rate_limit_exceeded',
            headers: a.headers,
          };
        return {
          kind: 'chat',
          text: REPLY,
          usage: { prompt_tokens: bodyTokens(body), completion_tokens: OUTPUT_TOKENS },
          headers: a.headers,
        };
      },
    });
    close = () => server.close();
    model = modelForProvider({ name: 'openai', type: 'openai-compatible', baseUrl: server.url }, 'gpt-bench', {
      contextWindow: 128_000,
      maxTokens: 4096,
      cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 },
    });
    base = streamOpenAIChat;
  }
  // Before: no permit path changes a 429's cost (the broker had no limit to apply anyway).
  const stream = mode === 'before' ? base : withPermits(base, channelTo(broker));
  const t0 = Date.now();
  const done = await Promise.all(Array.from({ length: agents }, (_, n) => agent(stream, model, n)));
  const wallMs = Date.now() - t0;
  broker.close();
  await close();
  const countedTokens =
    vendor === 'anthropic' ? enforcer.stats.inputTokens : enforcer.stats.inputTokens + enforcer.stats.outputTokens;
  return { wallMs, requests, refused, failedAgents: done.filter((ok) => !ok).length, countedTokens };
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

async function bench(vendor: 'anthropic' | 'openai'): Promise<boolean> {
  const limits = vendor === 'anthropic' ? ANTHROPIC_LIMITS : OPENAI_LIMITS;
  const bindingLimit = vendor === 'anthropic' ? limits.inputTokens! : limits.tokens!;
  const bindingName = vendor === 'anthropic' ? 'uncached input tokens' : 'tokens';
  const results = {} as Record<Mode, Outcome>;
  for (const mode of ['before', 'none', 'static', 'adaptive'] as const) {
    results[mode] = await runMode(vendor, mode);
    const r = results[mode];
    console.log(
      `${vendor} ${mode.padEnd(8)} wall ${(r.wallMs / 1000).toFixed(1)} s, ${r.requests} requests, ${r.refused} answered 429 (${pct(r.refused / r.requests)}), ${r.failedAgents} agents failed, ${r.countedTokens} ${bindingName} counted`,
    );
  }
  const a = results.adaptive;
  const sustained = a.countedTokens / (a.wallMs / WINDOW_MS) / bindingLimit;
  const refusedShare = a.refused / a.requests;
  const idealMs = (a.countedTokens / bindingLimit) * WINDOW_MS;
  const ofIdeal = a.wallMs / idealMs;
  const speedup = results.none.wallMs / a.wallMs;
  const lines: [string, boolean][] = [
    [
      `sustained ${bindingName} per window, adaptive: ${pct(sustained)} of the binding limit ${bindingLimit} (goal >= ${pct(GOALS.sustained)}, now/goal ${(sustained / GOALS.sustained).toFixed(2)})`,
      sustained >= GOALS.sustained,
    ],
    [
      `requests answered 429, adaptive: ${pct(refusedShare)} (goal <= ${pct(GOALS.refused)}; none ${pct(results.none.refused / results.none.requests)}, static ${pct(results.static.refused / results.static.requests)})`,
      refusedShare <= GOALS.refused,
    ],
    [
      `wall vs the ideal (counted tokens / limit = ${(idealMs / 1000).toFixed(1)} s), adaptive: ${ofIdeal.toFixed(2)}x (goal <= ${GOALS.ideal}x, now/goal ${(ofIdeal / GOALS.ideal).toFixed(2)})`,
      ofIdeal <= GOALS.ideal,
    ],
    [
      `wall, no pacing vs adaptive: ${speedup.toFixed(2)}x faster (goal >= ${GOALS.speedup}x, now/goal ${(speedup / GOALS.speedup).toFixed(2)}; static ${(results.static.wallMs / 1000).toFixed(1)} s; before #41 ${results.before.failedAgents} of ${AGENTS} agents failed)`,
      speedup >= GOALS.speedup,
    ],
  ];
  for (const [text, met] of lines) console.log(`${vendor}: ${text}${met ? '' : '  MISSED'}`);
  return lines.every(([, met]) => met) && a.failedAgents === 0;
}

console.log(
  `${AGENTS} agents x ${TURNS} turns per vendor; the providers' 60 s window is scaled to ${WINDOW_MS} ms (limits per window, same rules); load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
// One unmeasured round first: the first mode measured must not pay for loading the SDKs and the JIT.
await runMode('anthropic', 'adaptive', 10);
await runMode('openai', 'adaptive', 10);
const anthropicMet = await bench('anthropic');
const openaiMet = await bench('openai');
console.log(
  `load at the end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(anthropicMet && openaiMet ? 'verdict: goals met' : 'verdict: goals MISSED');
