// Planner/worker pairs: two agents on two threads joined by a direct MessageChannel. The worker
// executes the task and sends its report (final text + a structured summary); the planner
// reviews it and answers APPROVED (or JSON {"approved": true}) or with corrections, which enter
// the worker's session as its next prompt. Up to max_rounds; the result is the worker's final
// text, and both sessions are kept. The channel carries only this small protocol; anything else
// the agents say to each other goes through send_message like for every agent.
import type { MessagePort } from 'node:worker_threads';
import { z } from 'zod';
import { buildExtractiveSummary } from '../../runtime/extractive-summary.js';
import { extractJson } from '../execution/output-json.js';
import type { WorkerResult } from '../protocol.js';
import type { FailureClass } from '../../run/usage-summary.js';
import { checkWork, failedResult, succeededResult, type AgentHost } from './agent-host.js';

const PairMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('report'), round: z.number(), text: z.string(), summary: z.string().optional() }),
  z.object({ type: z.literal('verdict'), round: z.number(), approved: z.boolean(), text: z.string() }),
  /** The sender is done (reason "done") or gave up (any other reason). */
  z.object({ type: z.literal('end'), reason: z.string() }),
]);
export type PairMessage = z.infer<typeof PairMessageSchema>;

/** One member's end of the direct channel, as an async queue. A closed port reads as `end`. */
export class PairChannel {
  private readonly queue: PairMessage[] = [];
  private waiter: ((m: PairMessage) => void) | undefined;
  private closed = false;
  /** Resolves once the port is closed, by either side. */
  private readonly portClosed: Promise<void>;

  constructor(private readonly port: MessagePort) {
    this.portClosed = new Promise((resolve) => port.once('close', () => resolve()));
    port.on('message', (raw: unknown) => {
      const parsed = PairMessageSchema.safeParse(raw);
      this.push(
        parsed.success
          ? parsed.data
          : { type: 'end', reason: `malformed pair message: ${parsed.error.issues[0]?.message ?? 'invalid'}` },
      );
    });
    port.on('close', () => this.push({ type: 'end', reason: 'the other agent of the pair stopped' }));
  }

  private push(m: PairMessage): void {
    if (this.closed && m.type !== 'end') return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w(m);
    } else this.queue.push(m);
  }

  next(): Promise<PairMessage> {
    const m = this.queue.shift();
    if (m) return Promise.resolve(m);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  send(m: PairMessage): void {
    if (this.closed) return;
    try {
      this.port.postMessage(m);
    } catch {
      // the other side is gone; its own end message will say so
    }
  }

  /**
   * Closes the channel and resolves once the close is done. A thread returns only after that: a
   * piscina thread sleeps between tasks (Atomics.wait), so a close left pending would reach the
   * other end only at the thread's next task, and a distributed worker, which sends the pair
   * member's result once its pair port closed, waited its 10 s fallback for every pair member.
   */
  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.port.close();
    }
    return this.portClosed;
  }
}

/** APPROVED (not "NOT APPROVED"), or JSON with approved: true. */
export function parseVerdict(text: string): boolean {
  const json = extractJson(text);
  if (json.ok && json.value && typeof json.value === 'object' && 'approved' in json.value) {
    return (json.value as { approved: unknown }).approved === true;
  }
  if (/\bNOT\s+APPROVED\b/.test(text)) return false;
  return /\bAPPROVED\b/.test(text);
}

export function reviewPrompt(
  taskPrompt: string,
  report: Extract<PairMessage, { type: 'report' }>,
  maxRounds: number,
): string {
  return [
    'You review the work of another agent (the worker) on this task:',
    '<task>',
    taskPrompt,
    '</task>',
    '',
    reportBlock(report, maxRounds),
    '',
    'Check the work (read the files if you need to). If it is complete and correct, answer APPROVED (or the JSON {"approved": true}).',
    'Otherwise answer with specific corrections for the worker: what is wrong, where, and what to do.',
  ].join('\n');
}

function reportBlock(report: Extract<PairMessage, { type: 'report' }>, maxRounds: number): string {
  const lines = [
    `The worker's report (round ${report.round} of at most ${maxRounds}):`,
    '<report>',
    report.text.trim() || '(no text)',
    '</report>',
  ];
  if (report.summary) lines.push('<worker-summary>', report.summary.trim(), '</worker-summary>');
  return lines.join('\n');
}

export function correctionPrompt(text: string, round: number, maxRounds: number): string {
  return `The reviewer asked for corrections (round ${round} of at most ${maxRounds}):\n\n${text.trim()}\n\nMake the corrections, then finish with a short report of what you changed.`;
}

/** Why a pair that ran out of rounds failed, with the planner's last objection and the way out. */
function notApprovedText(round: number, maxRounds: number, verdict: string): string {
  const flat = verdict.replace(/\s+/g, ' ').trim();
  const objection = flat ? `; the planner's last answer: "${flat.length > 200 ? `${flat.slice(0, 199)}…` : flat}"` : '';
  return `the planner did not approve the work in ${round} round${round === 1 ? '' : 's'} (max_rounds ${maxRounds})${objection}. Raise max_rounds, or set pair.on_max_rounds: accept to take the last work anyway`;
}

async function runWorker(host: AgentHost, channel: PairChannel, maxRounds: number): Promise<WorkerResult> {
  const giveUp = (outcome: { failure: FailureClass; error: string }): WorkerResult => {
    channel.send({ type: 'end', reason: outcome.error });
    return failedResult(host, outcome);
  };
  let out = await host.start();
  if (!out.ok) return giveUp(out);
  let verifyAttempts = 0;
  let approved = false;
  let lastVerdict = '';
  let round = 1;
  for (;;) {
    const checked = await checkWork(host);
    verifyAttempts += checked.verifyAttempts;
    if (!checked.ok) return giveUp(checked);
    const summary = buildExtractiveSummary({ messages: host.session.messages }).summary;
    channel.send({ type: 'report', round, text: host.lastText(), summary });
    const reply = await channel.next();
    if (reply.type === 'end') {
      if (reply.reason === 'done') break;
      return failedResult(host, {
        failure: 'error',
        error: `the planner of the pair stopped before approving: ${reply.reason}`,
      });
    }
    if (reply.type !== 'verdict') continue;
    lastVerdict = reply.text;
    if (reply.approved) {
      approved = true;
      break;
    }
    if (round >= maxRounds) break;
    round++;
    out = await host.run(correctionPrompt(reply.text, round, maxRounds));
    if (!out.ok) return giveUp(out);
  }
  channel.send({ type: 'end', reason: 'done' });
  if (!approved && host.task.onMaxRounds !== 'accept')
    return failedResult(host, { failure: 'not_approved', error: notApprovedText(round, maxRounds, lastVerdict) });
  return succeededResult(host, verifyAttempts, { rounds: round, approved });
}

async function runPlanner(host: AgentHost, channel: PairChannel, maxRounds: number): Promise<WorkerResult> {
  let round = 0;
  let approved = false;
  for (;;) {
    const msg = await channel.next();
    if (msg.type === 'end') {
      if (msg.reason === 'done') break;
      return failedResult(host, { failure: 'error', error: `the worker of the pair stopped: ${msg.reason}` });
    }
    if (msg.type !== 'report') continue;
    round++;
    const review = reviewPrompt(host.task.prompt, msg, maxRounds);
    // A resumed planner already holds the task: its loop goes on where it stopped, the continue
    // note and the new report joining its pending turn (or following its last answer).
    const fresh = host.session.messages.length === 0;
    const prompt =
      round === 1 && fresh
        ? review
        : round === 1
          ? { resume: `${host.task.continueNote}\n\n${reportBlock(msg, maxRounds)}` }
          : reportBlock(msg, maxRounds);
    const out = await host.run(prompt);
    if (!out.ok) {
      channel.send({ type: 'end', reason: out.error });
      return failedResult(host, out);
    }
    approved = parseVerdict(host.lastText());
    channel.send({ type: 'verdict', round, approved, text: host.lastText() });
    if (approved || round >= maxRounds) break;
  }
  return succeededResult(host, 0, { rounds: round, approved });
}

/** A pair member's whole attempt. */
export async function runPairMember(host: AgentHost): Promise<WorkerResult> {
  const t = host.task;
  if (!t.peerPort)
    return failedResult(host, { failure: 'error', error: 'a pair member needs a channel to its partner (peerPort)' });
  const channel = new PairChannel(t.peerPort);
  const maxRounds = Math.max(1, t.maxRounds ?? 3);
  try {
    return t.role === 'pair-worker'
      ? await runWorker(host, channel, maxRounds)
      : await runPlanner(host, channel, maxRounds);
  } finally {
    await channel.close();
  }
}
