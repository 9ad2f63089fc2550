import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attachRunDisplay } from '../../src/display/attach-run-display.js';
import { PlainLog } from '../../src/display/plain-log.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { RunStore } from '../../src/run/run-store.js';
import { syntheticSteps } from './fixtures/synthetic-run.js';

class Capture {
  text = '';
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

function replay(mode: 'plain' | 'live', isTTY: boolean, budgetUsd?: number, changesets?: string) {
  const store = RunStore.create(mkdtempSync(join(tmpdir(), 'plain-log-')), 'run-1');
  if (changesets !== undefined) writeFileSync(join(store.dir, 'changesets.json'), changesets);
  const err = new Capture();
  const out = new Capture();
  const display = attachRunDisplay(store, { stream: err, stdout: out, isTTY, color: true, budgetUsd, mode });
  let events = 0;
  for (const step of syntheticSteps()) {
    if ('phase' in step) continue;
    store.append(step.event);
    events++;
  }
  display.finish();
  return { display, err: err.text, out: out.text, events, lines: err.text.trimEnd().split('\n') };
}

/** What a plain (non-TTY) run display prints on stdout at its end for `events` (and a changesets.json). */
function plainSummary(events: readonly RunEvent[], changesets?: string): string {
  const store = RunStore.create(mkdtempSync(join(tmpdir(), 'plain-log-')), 'run-1');
  if (changesets !== undefined) writeFileSync(join(store.dir, 'changesets.json'), changesets);
  const out = new Capture();
  const display = attachRunDisplay(store, {
    stream: new Capture(),
    stdout: out,
    isTTY: false,
    color: false,
    mode: 'plain',
  });
  for (const e of events) store.append(e);
  display.finish();
  return out.text;
}

describe('plain log (non-TTY progress)', () => {
  it('prints one timestamped line per state change, never per token', () => {
    const { lines, events } = replay('plain', false);
    for (const l of lines) expect(l).toMatch(/^\d\d:\d\d:\d\d \S/);
    // 80-odd events (most of them agent events) become a couple of dozen lines.
    expect(lines.length).toBeLessThan(events / 2);
    expect(lines.join('\n')).not.toMatch(/message_update|Let me| look/);
  });

  it('reports starts, completions with turns/tokens/cost, retries with delay, final failures with class, rate limits and skips', () => {
    const text = replay('plain', false)
      .lines.map((l) => l.slice(9))
      .join('\n');
    expect(text).toContain('plan: started (attempt 1)');
    expect(text).toMatch(/plan: done in 900ms, 2 turns, 2,300 tokens, \$0\.0022/);
    expect(text).toContain('apply.repo-a: rate limited by scripted-1 (429), retrying in 2.0s');
    expect(text).toContain('apply.repo-b: attempt 1 failed (overloaded): provider overloaded (529); retrying in 0.3s');
    expect(text).toContain('apply.repo-b: started (attempt 2, continuing its session)');
    expect(text).toMatch(/apply\.repo-c: failed \(timeout\) after 1\.2s, 1,540 tokens, \$0\.0015: no progress for 10m/);
    expect(text).toContain('review: skipped (needs apply');
    expect(text).toMatch(/run run-1 failed in 5\.0s/);
  });

  it('a failure reported by instance_failed (not final) and then instance_retry is said once', () => {
    const store = RunStore.create(mkdtempSync(join(tmpdir(), 'plain-log-')), 'run-2');
    const err = new Capture();
    const display = attachRunDisplay(store, {
      stream: err,
      stdout: new Capture(),
      isTTY: false,
      color: false,
      mode: 'plain',
    });
    const ref = { task: 't', key: 't', attempt: 1 };
    store.append({ type: 'instance_start', ...ref });
    store.append({
      type: 'instance_failed',
      ...ref,
      failure: 'crashed',
      error: 'worker exited',
      final: false,
      durationMs: 10,
    });
    store.append({ type: 'instance_retry', ...ref, failure: 'crashed', error: 'worker exited', delayMs: 1500 });
    display.finish();
    const lines = err.text
      .trimEnd()
      .split('\n')
      .map((l) => l.slice(9));
    expect(lines).toEqual([
      't: started (attempt 1)',
      't: attempt 1 failed (crashed) after 10ms: worker exited',
      't: retrying in 1.5s (attempt 2)',
    ]);
  });

  it("says where an attempt's work is kept when it ends without landing (attempts:)", () => {
    const store = RunStore.create(mkdtempSync(join(tmpdir(), 'plain-log-')), 'run-3');
    const err = new Capture();
    const display = attachRunDisplay(store, {
      stream: err,
      stdout: new Capture(),
      isTTY: false,
      color: false,
      mode: 'plain',
    });
    const one = { task: 'fix', key: 'fix.attempt-1', attempt: 1 };
    const two = { task: 'fix', key: 'fix.attempt-2', attempt: 1 };
    store.append({ type: 'instance_start', ...one });
    store.append({ type: 'instance_start', ...two });
    const end = { final: true, durationMs: 10 };
    store.append({
      type: 'instance_failed',
      ...one,
      ...end,
      failure: 'verify_failed',
      error: 'npm test failed',
      patchFile: 'patches/fix.attempt-1.diff',
    });
    store.append({
      type: 'instance_failed',
      ...two,
      ...end,
      failure: 'cancelled',
      error: 'cancelled by pick: first (fix.attempt-3 passed)',
      patchFile: 'patches/fix.attempt-2.diff',
    });
    display.finish();
    const text = err.text;
    expect(text).toContain(
      'fix.attempt-1: failed (verify_failed) after 10ms: npm test failed; its work is kept in patches/fix.attempt-1.diff',
    );
    expect(text).toContain(
      'fix.attempt-2: cancelled by pick: first (fix.attempt-3 passed) after 10ms; its work is kept in patches/fix.attempt-2.diff',
    );
  });

  it('notes the budget as spending crosses milestones', () => {
    const { lines } = replay('plain', false, 0.01);
    const budget = lines.filter((l) => / budget: /.test(l));
    expect(budget.length).toBeGreaterThanOrEqual(2);
    expect(budget[0]).toMatch(/budget: \$0\.\d{4} of \$0\.0100 spent \(\d+%\)/);
  });

  it('writes no colour codes and no cursor movement, and the final summary goes to stdout', () => {
    const { err, out } = replay('plain', false);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) starts every ANSI colour sequence
    expect(err).not.toMatch(/\x1b/);
    expect(out).toMatch(/^run run-1 \(rename-logger\): failed in 5\.0s/);
    expect(out).toMatch(/apply\.repo-c\s+failed .*timeout: no progress/);
    expect(out).toMatch(/3 done, 1 failed, 1 skipped/);
    expect(out).toMatch(/\nreport: orchestrate report \/.*\/run-1\nresume: orchestrate resume \/.*\/run-1\n$/);
  });

  it('live mode on a non-TTY falls back to the plain log', () => {
    const r = replay('live', false);
    expect(r.display.mode).toBe('plain');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) starts every ANSI colour sequence
    expect(r.err).not.toMatch(/\x1b/);
    expect(r.lines[0]).toMatch(/^\d\d:\d\d:\d\d run run-1 started/);
  });
});

describe('approval gates in the plain log', () => {
  it('says the instance waits, until when, and the command that answers it; then who answered', () => {
    const lines: string[] = [];
    const log = new PlainLog({
      write: (t: string) => {
        lines.push(t);
        return true;
      },
    });
    const at = (e: Record<string, unknown>) => ({ v: 1, runId: 'r1', ts: 1_000, ...e }) as RunEvent;
    log.handle(
      at({
        type: 'approval_requested',
        task: 'publish',
        key: 'publish.a',
        prompt: 'Open the PRs?',
        deadline: Date.UTC(2026, 0, 2, 3, 4, 5),
        onTimeout: 'reject',
      }),
    );
    log.handle(
      at({
        type: 'approval_given',
        task: 'publish',
        key: 'publish.a',
        decision: 'approved',
        by: 'ana',
        via: 'cli',
        offline: true,
        note: 'ok',
      }),
    );
    log.handle(
      at({
        type: 'approval_given',
        task: 'publish',
        key: 'publish.b',
        decision: 'rejected',
        by: 'timeout',
        via: 'timeout',
      }),
    );
    expect(lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''))).toEqual([
      'publish.a: waiting for approval: Open the PRs? (until 2026-01-02T03:04:05.000Z, then rejected); answer with: orchestrate approve|reject r1 --task publish\n',
      'publish.a: approved by ana via cli (offline): ok\n',
      'publish.b: rejected on timeout\n',
    ]);
  });

  it("a follow-up round's gate names its round and the --follow-up answer, not the task's gate", () => {
    const lines: string[] = [];
    const log = new PlainLog({ write: (t: string) => lines.push(t) > 0 });
    log.handle({
      v: 1,
      runId: 'r1',
      ts: 1_000,
      type: 'approval_requested',
      gate: 'follow_up',
      task: 'change',
      key: 'change.repo-a',
      round: 2,
      prompt: 'Push it?',
      onTimeout: 'reject',
    } as RunEvent);
    expect(lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''))).toEqual([
      'change.repo-a: follow-up round 2 waiting for approval: Push it?; answer with: orchestrate approve|reject r1 --follow-up --instance change.repo-a\n',
    ]);
  });

  it("a picked attempt's landing names where its work went: a branch, the checkout, or its patch (merge: patch)", () => {
    const where = (fields: Record<string, unknown>) => {
      const lines: string[] = [];
      const log = new PlainLog({ write: (t: string) => lines.push(t) > 0 });
      const base = { v: 1, runId: 'r1', ts: 1_000, task: 'fix', group: 'fix', key: 'fix.attempt-1', ok: true };
      log.handle({ ...base, type: 'attempt_landed', patchFile: 'patches/fix.attempt-1.diff', ...fields } as RunEvent);
      return lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, '').trimEnd());
    };
    expect(where({ branch: 'orchestrate/r1/fix' })).toEqual([
      'fix.attempt-1: picked attempt landed on orchestrate/r1/fix',
    ]);
    expect(where({ applied: true })).toEqual(['fix.attempt-1: picked attempt landed in the checkout']);
    expect(where({})).toEqual([
      'fix.attempt-1: picked attempt landed as its patch, patches/fix.attempt-1.diff (merge: patch)',
    ]);
  });

  it('a run that wrote changesets ends by saying how to publish them (nothing is pushed by the run itself)', () => {
    const two = JSON.stringify({ version: 1, runId: 'run-1', changesets: [{ key: 'a' }, { key: 'b' }] });
    const withTwo = replay('plain', false, undefined, two).out;
    expect(withTwo).toMatch(/^publish: orchestrate publish \S+run-1 previews the 2 changesets; --apply pushes$/m);
    const none = replay('plain', false, undefined, JSON.stringify({ version: 1, runId: 'run-1', changesets: [] })).out;
    expect(none).toMatch(/^publish: no changesets \(no repository changed\)$/m);
    // No task publishes (no changesets.json), or a damaged one (show reports it): no publish line.
    expect(replay('plain', false).out).not.toContain('publish:');
    expect(replay('plain', false, undefined, '{"changesets": [').out).not.toContain('publish:');
  });

  it('with a publish gate, the summary says what its answer did instead of the preview command', () => {
    const runOf = (decision?: 'approved' | 'rejected') => {
      const base = { v: 1, runId: 'run-1', ts: 1_000, task: 'fix', key: 'fix', gate: 'publish' } as const;
      const events = [{ ...base, type: 'approval_requested', prompt: 'Push?', onTimeout: 'reject' } as RunEvent];
      if (decision) events.push({ ...base, type: 'approval_given', decision, by: 'ana', via: 'cli' } as RunEvent);
      const out = plainSummary(events, JSON.stringify({ changesets: [{ key: 'a' }] }));
      return out.split('\n').find((l) => l.startsWith('publish:'));
    };
    expect(runOf()).toMatch(
      /^publish: its publish gate waits for an answer: orchestrate approve\|reject \S+ --publish$/,
    );
    expect(runOf('approved')).toMatch(
      /^publish: its publish gate was approved and the run published; orchestrate status \S+ tracks/,
    );
    expect(runOf('rejected')).toMatch(
      /^publish: its publish gate was rejected, nothing was pushed; orchestrate publish \S+ previews the changeset/,
    );
  });

  it('a budget-exhausted run says how to resume it: with a total above what it spent, not a plain resume', () => {
    const out = plainSummary(
      syntheticSteps().flatMap((step) =>
        'phase' in step
          ? []
          : [step.event.type === 'run_end' ? { ...step.event, status: 'budget_exhausted' } : step.event],
      ) as RunEvent[],
    );
    expect(out).toMatch(
      /^resume: orchestrate resume \S+ --budget-usd N \| --budget-tokens N \(a total above what the run spent: \$0\.0120, 12,340 tokens\)$/m,
    );
  });
});
