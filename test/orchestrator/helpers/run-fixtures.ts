// Shared helpers of the orchestrator end-to-end tests: temp folders with recipes and scripts,
// reading the run log, and a fake-Anthropic responder that picks turns per conversation.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FakeBlock, RespondInput, ResponseSpec } from '../../helpers/fake-anthropic-server.js';
import { readRunLog } from '../../../src/run/run-store.js';
import type { RunEvent } from '../../../src/run/run-events.js';
import { isSummaryRequest as isOwnSummaryRequest } from '../../helpers/summary-request.js';

const made: string[] = [];

/** A temp folder with the given files (paths relative to it). Removed by cleanupTempDirs(). */
export function tempProject(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-e2e-'));
  made.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

export function cleanupTempDirs(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** `git init` + one commit in `dir`. */
export function gitInit(dir: string): void {
  const g = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  g('init', '-q');
  g('add', '-A');
  g('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
}

/** The worktrees git records for a repository (its own checkout first), real paths. */
export function gitWorktrees(repo: string): string[] {
  return execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: repo, encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => realpathSync(l.slice('worktree '.length)));
}

export function events(runDir: string): RunEvent[] {
  return readRunLog(join(runDir, 'run.jsonl')).events;
}

/** The run's events so far; none while run.jsonl does not exist yet (or no run folder is known). */
export const logOf = (runDir: string | undefined): RunEvent[] =>
  runDir && existsSync(join(runDir, 'run.jsonl')) ? events(runDir) : [];

/** Polls `probe` (every 20 ms) until it gives a value; an error naming `what` after `limitMs`. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  limitMs = 60_000,
): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function ofType<T extends RunEvent['type']>(list: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return list.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
}

/** Agents that started before the first instance finished: they were running together. */
export function startedBeforeFirstDone(log: RunEvent[]): Set<string> {
  const firstDone = log.findIndex((e) => e.type === 'instance_done');
  return new Set(
    log.slice(0, firstDone).flatMap((e) => (e.type === 'agent_event' && e.event.type === 'agent_start' ? [e.key] : [])),
  );
}

/** Every line of a session file parses as JSON (a session left intact). */
export function sessionLines(file: string): unknown[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}

export interface Turn {
  text?: string;
  tools?: { name: string; args?: Record<string, unknown> }[];
  /** Milliseconds between SSE events of this reply (a slow model). */
  delayMs?: number;
}

export interface Conversation {
  /** Tested on the first user message text + "\n" + the system prompt. */
  match: RegExp;
  turns: Turn[];
}

/** Body text of a request: first user message, then the system prompt. */
export function conversationKey(body: { system?: unknown; messages?: { role: string; content: unknown }[] }): string {
  const first = body.messages?.find((m) => m.role === 'user');
  const text = (c: unknown): string =>
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? c.map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : '')).join('\n')
        : '';
  return `${text(first?.content)}\n${text(body.system)}`;
}

/** All text a request carries (for "did the peer message reach this request"). */
export function requestText(body: unknown): string {
  return JSON.stringify(body);
}

/**
 * A fake-Anthropic responder like the scripted provider: the conversation is picked by regex,
 * the turn by the number of assistant replies already in the request.
 */
export function conversationResponder(convs: Conversation[]): (req: RespondInput) => ResponseSpec {
  return ({ body, index }) => {
    if (isSummaryRequest(body)) return SUMMARY_REPLY;
    const key = conversationKey(body);
    const conv = convs.find((c) => c.match.test(key));
    if (!conv)
      return {
        kind: 'http-error',
        status: 400,
        errorType: 'invalid_request_error',
        message: `no conversation for ${key.slice(0, 80)}`,
      };
    const replies = (body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
    const turn = conv.turns[replies];
    if (!turn)
      return {
        kind: 'http-error',
        status: 400,
        errorType: 'invalid_request_error',
        message: `conversation ${conv.match} has no turn ${replies}`,
      };
    const content: FakeBlock[] = [];
    if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
    for (const [i, t] of (turn.tools ?? []).entries())
      content.push({ type: 'tool_use', id: `toolu_${index}_${i}`, name: t.name, input: t.args ?? {} });
    return { kind: 'message', content, ...(turn.delayMs ? { delayMs: turn.delayMs } : {}) };
  };
}

/**
 * A summary request of our own: the end-of-instance handoff (or any compaction), inside the
 * conversation or as a transcript (test/helpers/summary-request.ts). The responders answer it
 * with SUMMARY_REPLY; tests that count an agent's turns leave these out.
 */
export function isSummaryRequest(body: { system?: unknown; messages?: unknown }): boolean {
  return isOwnSummaryRequest(body);
}

/** A model-written handoff summary with every section, as a summarizer reply. */
export const SUMMARY_TEXT = `## Goal
Finish the task.

## Constraints & Preferences
- (none)

## Progress
### Done
- [x] The task

### In Progress
- (none)

### Blocked
- (none)

## Key Decisions
- **Kept it small**: the task needed no more

## Next Steps
1. Nothing left

## Critical Context
- (none)`;

export const SUMMARY_REPLY: ResponseSpec = { kind: 'message', content: [{ type: 'text', text: SUMMARY_TEXT }] };
