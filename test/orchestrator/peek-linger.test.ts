// `peek` (issue 21), the paths run-control-peek.test.ts leaves out: streaming goes off once nobody
// peeked for STREAM_LINGER_MS and a new peek turns it on again; a `partial` still on its way when
// streaming went off is not shown later as the text being written; a planner/worker pair shows
// the member that writes. A real coordinator and real worker threads; the agents run behind a
// relay (an executor wrapping the local pool) that records every port message in both directions
// and can hold the worker's messages back, the way a slow link (Redis) does. Every wait is on a
// relayed message, a peek reply or run.jsonl; the clock gives generous upper bounds and one lower
// bound (a timer never fires early).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { STREAM_LINGER_MS } from '../../src/orchestrator/execution/agent-launch.js';
import type { ExternalExecutor } from '../../src/orchestrator/execution/instance-executor.js';
import type { InstanceTask } from '../../src/orchestrator/execution/instance-task.js';
import { createWorkerPool } from '../../src/orchestrator/execution/pool.js';
import { connectRunControl } from '../../src/run/run-control-client.js';
import type { RunControl } from '../../src/run/run-control.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { childModule } from '../helpers/cli-entry.js';
import { cleanupTempDirs, events, ofType, tempProject, until } from './helpers/run-fixtures.js';

/** The one worker thread the relayed runs share, one run after another (started once: a thread start is most of a short run). */
let pool: Piscina | undefined;
/** Its entry: the built worker when dist/ is current (half the CPU of a start through tsx), else the sources; see cli-entry.ts. */
const WORKER = pathToFileURL(childModule('orchestrator/worker/worker-entry.cts')).href;
const releases: string[] = [];
afterAll(async () => {
  for (const r of releases) writeFileSync(r, 'x');
  await pool?.destroy();
  cleanupTempDirs();
});

type PortMessage = { type: string; [k: string]: unknown };
interface Relayed {
  key: string;
  /** down: coordinator -> agent; up: agent -> coordinator (logged when passed on to the coordinator). */
  dir: 'down' | 'up';
  m: PortMessage;
  at: number;
}

/**
 * Runs agents on a local worker pool through a relay on their coordinator port: every message is
 * recorded, and an agent's messages to the coordinator can be held back and released in order.
 */
class RelayExecutor implements ExternalExecutor {
  readonly description = 'local threads behind a recording relay';
  readonly log: Relayed[] = [];
  private readonly held = new Map<string, PortMessage[]>();
  private readonly toCoordinator = new Map<string, (m: PortMessage) => void>();
  private readonly closeWhenReleased = new Map<string, () => void>();

  constructor(private readonly pool: Piscina) {}

  async run(task: InstanceTask, options: { transferList: MessagePort[]; signal?: AbortSignal }): Promise<unknown> {
    const key = task.id;
    const outer = task.port;
    const inner = new MessageChannel();
    // Settles once the agent's last message (`done`) passed or its end closed (a dead thread).
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const pass = (m: PortMessage) => {
      this.log.push({ key, dir: 'up', m, at: Date.now() });
      outer.postMessage(m);
      if (m.type === 'done') finish();
    };
    this.toCoordinator.set(key, pass);
    outer.on('message', (m: PortMessage) => {
      this.log.push({ key, dir: 'down', m, at: Date.now() });
      inner.port1.postMessage(m);
    });
    inner.port1.on('message', (m: PortMessage) => {
      const queue = this.held.get(key);
      if (queue) queue.push(m);
      else pass(m);
    });
    inner.port1.once('close', () => {
      const close = () => {
        outer.close();
        finish();
      };
      if (this.held.has(key)) this.closeWhenReleased.set(key, close);
      else close();
    });
    outer.once('close', () => inner.port1.close());
    const transferList: MessagePort[] = [inner.port2, ...(task.peerPort ? [task.peerPort] : [])];
    const result: unknown = await this.pool.run(
      { ...task, port: inner.port2 },
      { transferList, ...(options.signal ? { signal: options.signal } : {}) },
    );
    // The result travels apart from the port: hand it over only once every message has passed.
    await finished;
    return result;
  }

  hold(key: string): void {
    this.held.set(key, []);
  }

  heldOf(key: string): PortMessage[] {
    return this.held.get(key) ?? [];
  }

  release(key: string): void {
    const queue = this.held.get(key) ?? [];
    this.held.delete(key);
    const pass = this.toCoordinator.get(key)!;
    for (const m of queue) pass(m);
    this.closeWhenReleased.get(key)?.();
    this.closeWhenReleased.delete(key);
  }

  /** Index of the first entry at or after `from` that matches. */
  find(from: number, match: (r: Relayed) => boolean): number {
    for (let i = from; i < this.log.length; i++) if (match(this.log[i]!)) return i;
    return -1;
  }

  partials(key: string, from: number, to = this.log.length): string[] {
    return this.log
      .slice(from, to)
      .flatMap((r) => (r.key === key && r.dir === 'up' && r.m.type === 'partial' ? [String(r.m.text)] : []));
  }
}

const isStream = (key: string, on: boolean) => (r: Relayed) =>
  r.key === key && r.dir === 'down' && r.m.type === 'stream' && r.m.on === on;
const isUp = (key: string, type: string) => (r: Relayed) => r.key === key && r.dir === 'up' && r.m.type === type;

function logOf(runDir: string): RunEvent[] {
  return existsSync(join(runDir, 'run.jsonl')) ? events(runDir) : [];
}

async function peekText(control: RunControl, instance: string): Promise<string | undefined> {
  const r = await control.send({ action: 'peek', instance });
  return r.ok ? r.message : undefined;
}

function startRun(dir: string, runId: string, executor?: RelayExecutor) {
  const runsDir = join(dir, 'runs');
  const runDir = join(runsDir, runId);
  const done = runRecipeFile(
    join(dir, 'recipe.yaml'),
    { cwd: dir },
    { runsDir, runId, ...(executor ? { executor } : {}) },
  ).then((r) => {
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.outcome;
  });
  // A failed start must fail the test, not hang it on a socket that never comes.
  done.catch(() => {});
  return { runDir, done, control: connectRunControl(runDir) };
}

/** A relay over the shared one-thread pool: each test runs one agent, and its run has ended before the next starts. */
function relayed(): RelayExecutor {
  pool ??= createWorkerPool({ concurrency: 1, filename: WORKER });
  return new RelayExecutor(pool);
}

/** `n` words of 6 characters: 24-character chunks, so n/4 chunks. */
function words(prefix: string, n: number): string {
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`).join(' ');
}

describe('peek: streaming lingers, stops, restarts', () => {
  it('after the last peek partials keep coming for the linger period, then stream off; none while the agent writes on; a new peek turns it on again', async () => {
    // 2000 words, 24 characters every 80 ms: about 40 s of writing (the run is interrupted once seen).
    const reply = words('w', 2000);
    const dir = tempProject({
      'recipe.yaml': `name: linger
provider: scripted
script: script.yaml
agents:
  w: { tools: [read] }
tasks:
  - id: writer
    agent: w
    prompt: "WRITE at length"
`,
      'script.yaml': `turns:
  - stream_delay_ms: 80
    text: ${JSON.stringify(reply)}
`,
    });
    const relay = relayed();
    const { runDir, done, control } = startRun(dir, 'linger', relay);

    // Peek until the text grows between two peeks: streaming is on and the agent writes.
    const first = await until('a first partial', async () => (await peekText(control, 'writer')) || undefined);
    await until('the partial to grow', async () => ((await peekText(control, 'writer')) ?? '').length > first.length);
    const beforeLastPeek = Date.now();
    const lastPeek = await peekText(control, 'writer');
    expect(reply.startsWith(lastPeek ?? '?')).toBe(true);
    const afterLastPeek = relay.log.length;

    // Nobody peeks now: streaming lingers, then goes off.
    const off = await until('stream off', () => {
      const i = relay.find(afterLastPeek, isStream('writer', false));
      return i >= 0 ? i : undefined;
    });
    expect(relay.log[off]!.at - beforeLastPeek).toBeGreaterThanOrEqual(STREAM_LINGER_MS - 20);
    expect(relay.find(0, isStream('writer', false))).toBe(off);
    const lingered = relay.partials('writer', afterLastPeek, off);
    expect(lingered.length).toBeGreaterThanOrEqual(2);
    for (const p of lingered) expect(reply.startsWith(p)).toBe(true);
    for (let i = 1; i < lingered.length; i++)
      expect(lingered[i]!.length).toBeGreaterThanOrEqual(lingered[i - 1]!.length);
    expect(lingered[lingered.length - 1]!.length).toBeGreaterThan(lingered[0]!.length);
    const lastBeforeOff = relay.partials('writer', 0, off).pop()!;

    // The agent writes on (a progress heartbeat at most once a second, from its deltas) and sends
    // no partial: past the second heartbeat, a partial still in flight at stream off has arrived.
    const settled = await until('two heartbeats after stream off', () => {
      const a = relay.find(off + 1, isUp('writer', 'progress'));
      const b = a >= 0 ? relay.find(a + 1, isUp('writer', 'progress')) : -1;
      return b >= 0 ? b : undefined;
    });
    await until(
      'three more heartbeats',
      () => relay.log.slice(settled + 1).filter(isUp('writer', 'progress')).length >= 3,
    );
    const quiet = relay.log.length;
    expect(relay.partials('writer', settled, quiet)).toEqual([]);
    expect(relay.find(off + 1, isStream('writer', true))).toBe(-1);

    // A new peek: streaming on again, and the first partial shows how far the agent got meanwhile.
    await peekText(control, 'writer');
    const on = await until('stream on again', () => {
      const i = relay.find(quiet, isStream('writer', true));
      return i >= 0 ? i : undefined;
    });
    const resumed = await until('a partial after the new peek', () => relay.partials('writer', on)[0]);
    expect(reply.startsWith(resumed)).toBe(true);
    expect(resumed.length).toBeGreaterThan(lastBeforeOff.length);
    const shown = await until('peek to show the text past where it stopped', async () => {
      const t = await peekText(control, 'writer');
      return t !== undefined && t.length > lastBeforeOff.length ? t : undefined;
    });
    expect(reply.startsWith(shown)).toBe(true);
    // One stream-on per start: peeks while it is on only extend it.
    expect(relay.log.slice(off).filter(isStream('writer', true))).toHaveLength(1);

    expect(await control.send({ action: 'cancel_run', by: 'test' })).toMatchObject({ ok: true });
    const out = await done;
    expect(out.status).toBe('interrupted');
    // The text being written stays in memory; only the message the interrupt ended is logged (its message_end).
    const log = events(runDir);
    const ended = ofType(log, 'agent_event').flatMap((e) =>
      e.event.type === 'message_end' ? [JSON.stringify(e.event)] : [],
    );
    const raw = readFileSync(join(runDir, 'run.jsonl'), 'utf8');
    for (const s of relay.partials('writer', 0).filter((p) => p !== '')) {
      if (!ended.some((m) => m.includes(JSON.stringify(s)))) expect(raw).not.toContain(JSON.stringify(s));
    }
    expect(ended.filter((m) => m.includes(JSON.stringify(lastBeforeOff)))).toEqual([]);
    expect(log.filter((e) => e.type === 'agent_event' && e.event.type === 'message_update')).toEqual([]);
  }, 180_000);

  it('a partial that was on its way when streaming went off is not shown afterwards as the text being written', async () => {
    // 300 words, 24 characters every 80 ms: about 6 s of writing from the first partial (the last
    // peek), twice the linger: the reply ends while streaming is off.
    const reply = words('r', 300);
    const dir = tempProject({});
    const release = join(dir, 'release');
    releases.push(release);
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: stale
provider: scripted
script: script.yaml
agents:
  w: { tools: [bash] }
tasks:
  - id: writer
    agent: w
    prompt: "WRITE then wait"
`,
    );
    writeFileSync(
      join(dir, 'script.yaml'),
      `turns:
  - stream_delay_ms: 80
    text: ${JSON.stringify(reply)}
    tools: [{ name: bash, args: { command: ${JSON.stringify(`while [ ! -f '${release}' ]; do sleep 0.05; done; echo released`)} } }]
  - text: "finished"
`,
    );
    const relay = relayed();
    const { runDir, done, control } = startRun(dir, 'stale', relay);

    await until('a first partial', async () => (await peekText(control, 'writer')) || undefined);
    // The link turns slow: the agent's messages wait in the relay while streaming lingers and goes off.
    relay.hold('writer');
    await until('a partial to be held', () =>
      relay.heldOf('writer').some((m) => m.type === 'partial' && m.text !== ''),
    );
    await until('stream off', () => relay.find(0, isStream('writer', false)) >= 0);
    // The reply is complete (its message_end sent) while streaming is off.
    const held = await until('the reply to end', () => {
      const h = relay.heldOf('writer');
      return h.some(
        (m) =>
          m.type === 'event' &&
          (m.event as { type: string; message?: { role?: string } }).message?.role === 'assistant',
      )
        ? h
        : undefined;
    });
    const heldPartials = held.filter((m) => m.type === 'partial').map((m) => String(m.text));
    // The case under test: the last partial sent is text, not the '' that ends a message while streaming is on.
    expect(heldPartials[heldPartials.length - 1]).not.toBe('');
    relay.release('writer');
    // The agent goes on into its bash call, where it writes nothing.
    await until('the bash call to start', () =>
      ofType(logOf(runDir), 'agent_event').some((e) => e.key === 'writer' && e.event.type === 'tool_execution_start'),
    );

    // Nothing is being written: peek shows nothing, now and once streaming is on again.
    const off = relay.find(0, isStream('writer', false));
    expect(await control.send({ action: 'peek', instance: 'writer' })).toEqual({ ok: true, message: '' });
    await until('stream on again', () => relay.find(off + 1, isStream('writer', true)) >= 0);
    expect(await control.send({ action: 'peek', instance: 'writer' })).toEqual({ ok: true, message: '' });

    writeFileSync(release, 'x');
    const out = await done;
    expect(out.status).toBe('succeeded');
  }, 180_000);

  it('a peek right after streaming went off: a stale partial still on its way is replaced by what the worker says now', async () => {
    // As above: about 6 s of writing, twice the linger.
    const reply = words('s', 300);
    const dir = tempProject({});
    const release = join(dir, 'release');
    releases.push(release);
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: stale-repeek
provider: scripted
script: script.yaml
agents:
  w: { tools: [bash] }
tasks:
  - id: writer
    agent: w
    prompt: "WRITE then wait"
`,
    );
    writeFileSync(
      join(dir, 'script.yaml'),
      `turns:
  - stream_delay_ms: 80
    text: ${JSON.stringify(reply)}
    tools: [{ name: bash, args: { command: ${JSON.stringify(`while [ ! -f '${release}' ]; do sleep 0.05; done; echo released`)} } }]
  - text: "finished"
`,
    );
    const relay = relayed();
    const { runDir, done, control } = startRun(dir, 'stale-repeek', relay);

    await until('a first partial', async () => (await peekText(control, 'writer')) || undefined);
    relay.hold('writer');
    await until('a partial to be held', () =>
      relay.heldOf('writer').some((m) => m.type === 'partial' && m.text !== ''),
    );
    const off = await until('stream off', () => {
      const i = relay.find(0, isStream('writer', false));
      return i >= 0 ? i : undefined;
    });
    const held = await until('the reply to end', () => {
      const h = relay.heldOf('writer');
      return h.some(
        (m) =>
          m.type === 'event' &&
          (m.event as { type: string; message?: { role?: string } }).message?.role === 'assistant',
      )
        ? h
        : undefined;
    });
    // As above: the last partial held is text (the message ended while streaming was off).
    expect(held.filter((m) => m.type === 'partial').pop()?.text).not.toBe('');
    // A viewer looks again before the held messages (the stale partial among them) arrive.
    expect(await control.send({ action: 'peek', instance: 'writer' })).toEqual({ ok: true, message: '' });
    const on = await until('stream on again', () => {
      const i = relay.find(off + 1, isStream('writer', true));
      return i >= 0 ? i : undefined;
    });
    relay.release('writer');
    // The worker answers the new stream-on with what it writes now (nothing: it is in its bash call).
    await until(
      "the worker's answer ('') after the held partials",
      () => relay.partials('writer', on + 1).includes(''),
      30_000,
    );
    expect(await control.send({ action: 'peek', instance: 'writer' })).toEqual({ ok: true, message: '' });

    writeFileSync(release, 'x');
    const out = await done;
    expect(out.status).toBe('succeeded');
    expect(
      ofType(events(runDir), 'agent_event').some((e) => e.key === 'writer' && e.event.type === 'tool_execution_start'),
    ).toBe(true);
  }, 180_000);
});

describe('peek on a planner/worker pair', () => {
  it("shows the reply of the member writing now (the worker's report, then the planner's review); nothing of it is logged", async () => {
    // 80 words each, 24 characters every 80 ms: about 1.6 s of writing each, 20 chunks to see
    // at least two of (a poll is three peeks over the socket, tens of ms on a loaded machine).
    const report = words('k', 80);
    const review = `${words('v', 80)} APPROVED`;
    const dir = tempProject({
      'recipe.yaml': `name: pair-peek
provider: scripted
script: script.yaml
agents:
  planner: { system: "You are the PLANNER of this pair.", tools: [read] }
  worker: { system: "You are the WORKER of this pair.", tools: [read] }
tasks:
  - id: build
    pair: { planner: planner, worker: worker, max_rounds: 2 }
    prompt: "Build it."
`,
      'script.yaml': `conversations:
  - match: "You are the PLANNER"
    turns:
      - stream_delay_ms: 80
        text: ${JSON.stringify(review)}
  - match: "You are the WORKER"
    turns:
      - stream_delay_ms: 80
        text: ${JSON.stringify(report)}
`,
    });
    const { runDir, done, control } = startRun(dir, 'pair-peek');
    let ended = false;
    void done.then(
      () => (ended = true),
      () => (ended = true),
    );

    // Poll the pair's key and both member keys until the run ends.
    const seen: { whole: string; worker: string | undefined; planner: string | undefined }[] = [];
    while (!ended) {
      const whole = await peekText(control, 'build');
      if (whole)
        seen.push({
          whole,
          worker: await peekText(control, 'build@worker'),
          planner: await peekText(control, 'build@planner'),
        });
      await new Promise((r) => setTimeout(r, 20));
    }
    const out = await done;
    expect(out.status, JSON.stringify(ofType(events(runDir), 'instance_failed'))).toBe('succeeded');
    expect(ofType(events(runDir), 'instance_done').find((e) => e.key === 'build')).toMatchObject({
      approved: true,
      output: report,
    });

    const fromWorker = seen.filter((s) => report.startsWith(s.whole)).map((s) => s.whole);
    const fromPlanner = seen.filter((s) => review.startsWith(s.whole)).map((s) => s.whole);
    // Every text shown is a prefix of one member's reply, the worker's all before the planner's.
    expect(fromWorker.length + fromPlanner.length).toBe(seen.length);
    expect(seen.map((s) => s.whole)).toEqual([...fromWorker, ...fromPlanner]);
    // Both seen while being written, growing.
    for (const texts of [fromWorker, fromPlanner]) {
      expect(new Set(texts).size).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < texts.length; i++) expect(texts[i]!.length).toBeGreaterThanOrEqual(texts[i - 1]!.length);
    }
    expect(fromWorker.some((t) => t.length < report.length)).toBe(true);
    expect(fromPlanner.some((t) => t.length < review.length)).toBe(true);
    // A member's key shows that member's text only.
    for (const s of seen) {
      expect(s.worker === undefined || report.startsWith(s.worker)).toBe(true);
      expect(s.planner === undefined || review.startsWith(s.planner)).toBe(true);
    }
    expect(seen.some((s) => s.worker !== undefined && s.worker !== '' && report.startsWith(s.worker))).toBe(true);
    expect(seen.some((s) => s.planner !== undefined && s.planner !== '' && review.startsWith(s.planner))).toBe(true);

    const log = events(runDir);
    expect(ofType(log, 'control')).toEqual([]);
    expect(log.filter((e) => e.type === 'agent_event' && e.event.type === 'message_update')).toEqual([]);
    const raw = readFileSync(join(runDir, 'run.jsonl'), 'utf8');
    for (const s of seen.map((x) => x.whole).filter((t) => t !== report && t !== review))
      expect(raw).not.toContain(JSON.stringify(s));
  }, 180_000);
});
