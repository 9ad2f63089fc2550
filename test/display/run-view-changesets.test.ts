// The run view of a campaign: under the instance list, the changesets (key, repo, branch, state,
// checks, review, mergeable, diffstat, pull request) as changesets.json and changesets-status.jsonl
// say, and the burndown (merged/total and merged over time as a sparkline). A new observation shows
// on the next look; frames in between read no file; no colour without colour. `watch` without a
// terminal prints the same table and burndown as plain text after the run's log. A follow-up
// round waiting at its gate (publish.follow_up.approve) is named under the rows until answered.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RunView } from '../../src/display/run-view.js';
import { watchRun } from '../../src/display/watch-run.js';
import { appendObservations } from '../../src/run/changesets.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { publishedChangeset, writeCampaignChangesets } from '../helpers/campaign.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const T0 = 1_700_000_000_000;
const ev = (e: Record<string, unknown>, ts: number) => ({ v: 1, runId: 'r1', ts, ...e }) as RunEvent;
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
const events = [
  ev({ type: 'run_start', recipe: 'r.yaml', name: 'campaign', recipeHash: 'h', inputs: {}, plan: [] }, T0),
  ev({ type: 'run_end', status: 'succeeded', durationMs: 1, usage }, T0 + 1),
];

const changeset = (repo: string) => publishedChangeset(repo, { doneTs: T0 });

function campaignRunDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'run-view-changesets-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'run.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  writeCampaignChangesets(dir, T0, [changeset('repo-a'), changeset('repo-b')]);
  appendObservations(dir, [
    {
      ts: T0,
      key: 'change.repo-a',
      state: 'open',
      url: changeset('repo-a').pr!.url,
      checks: 'pending',
      review: 'none',
      mergeable: 'mergeable',
    },
    {
      ts: T0,
      key: 'change.repo-b',
      state: 'draft',
      url: changeset('repo-b').pr!.url,
      checks: 'failing',
      review: 'review_required',
      mergeable: 'needs_rebase',
    },
  ]);
  return dir;
}

function view(runDir: string, now: () => number, color = false) {
  const out = { writes: [] as string[], columns: 160, rows: 30, write: (s: string) => out.writes.push(s) > 0 };
  const input = { on() {}, off() {}, resume() {}, pause() {} };
  const v = new RunView(out, { color, now, restoreOnExit: false, input, runDir, by: 'test', onInterrupt() {} });
  for (const e of events) v.absorb(e);
  return v;
}

describe('run view: changesets and burndown', () => {
  it('shows each changeset and the burndown; a new observation shows on the next look, frames between read nothing', () => {
    const runDir = campaignRunDir();
    let now = T0 + 60_000;
    const v = view(runDir, () => now);
    let frame = v.frame().join('\n');
    expect(frame).toMatch(/changesets 0\/2 merged \[\.{20}\] {2}▁{20}/);
    expect(frame).toMatch(/CHANGESET\s+REPO\s+BRANCH\s+STATE\s+CHECKS\s+REVIEW\s+MERGEABLE\s+DIFF\s+PULL REQUEST/);
    expect(frame).toMatch(
      /change\.repo-a\s+repo-a\s+campaign\/repo-a\s+open\s+pending\s+none\s+mergeable\s+2 files \+5 -1\s+https:\/\/github\.example\/acme\/repo-a\/pull\/7/,
    );
    expect(frame).toMatch(
      /change\.repo-b\s+repo-b\s+campaign\/repo-b\s+draft\s+failing\s+review_required\s+needs_rebase/,
    );
    // The footer (keys) stays the last line, under the section.
    expect(v.frame().at(-1)).toContain('read-only');
    expect(frame).not.toContain('\x1b[');

    // `orchestrate status` saw repo-a merged just after half way to now: the count and the sparkline's second half rise.
    const reads = (v as unknown as { changesets: { reads: number } }).changesets.reads;
    appendObservations(runDir, [{ ts: T0 + 61_000, key: 'change.repo-a', state: 'merged', url: 'u' }]);
    now = T0 + 120_000;
    frame = v.frame().join('\n');
    expect(frame).toMatch(/changesets 1\/2 merged \[#{10}\.{10}\] {2}▁{10}▅{10}/);
    expect(frame).toMatch(/change\.repo-a\s+repo-a\s+campaign\/repo-a\s+merged/);
    const after = (v as unknown as { changesets: { reads: number } }).changesets.reads;
    expect(after).toBe(reads + 1);
    // Nothing changed: further frames (within the half second and after it) read no file.
    v.frame();
    now += 1_000;
    v.frame();
    expect((v as unknown as { changesets: { reads: number } }).changesets.reads).toBe(after);
  });

  it('a run without changesets shows no section; with colour, merged rows are painted', () => {
    const plain = mkdtempSync(join(tmpdir(), 'run-view-changesets-'));
    dirs.push(plain);
    expect(
      view(plain, () => T0)
        .frame()
        .join('\n'),
    ).not.toContain('changesets');
    const runDir = campaignRunDir();
    appendObservations(runDir, [{ ts: T0 + 1, key: 'change.repo-a', state: 'merged', url: 'u' }]);
    const coloured = view(runDir, () => T0 + 2, true)
      .frame()
      .join('\n');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) starts every ANSI colour sequence
    expect(coloured).toMatch(/\x1b\[32m {2}change\.repo-a/);
  });

  it('names a follow-up round waiting at its gate under the rows, with the command that answers it', () => {
    const runDir = campaignRunDir();
    const v = view(runDir, () => T0 + 60_000);
    const ref = { task: 'change', key: 'repo-a', parent: 'change' };
    v.absorb(ev({ type: 'instance_start', ...ref, attempt: 1 }, T0 + 2));
    v.absorb(
      ev(
        {
          type: 'instance_followup_start',
          ...ref,
          attempt: 2,
          round: 1,
          reason: 'ci_failed',
          evidence: 'ci:abc',
          fromCommit: 'abc',
          sessionFile: 's',
        },
        T0 + 3,
      ),
    );
    v.absorb(
      ev(
        {
          type: 'instance_followup_end',
          ...ref,
          attempt: 2,
          round: 1,
          evidence: 'ci:abc',
          ok: true,
          patchFile: 'p.diff',
          usage,
          durationMs: 1,
        },
        T0 + 4,
      ),
    );
    expect(v.frame().join('\n')).not.toContain('waiting for approval');
    const deadline = T0 + 8 * 3_600_000; // 2023-11-15T06:13:20.000Z
    v.absorb(
      ev(
        {
          type: 'approval_requested',
          gate: 'follow_up',
          task: 'change',
          key: 'repo-a',
          round: 1,
          prompt: 'Push it?',
          deadline,
          onTimeout: 'reject',
        },
        T0 + 5,
      ),
    );
    expect(v.frame().join('\n')).toContain(
      // The line is cut at the frame's width (160 columns here), after the command.
      'change.repo-a: round 1 waiting for approval: orchestrate approve r1 --follow-up --task change --instance repo-a (or reject); on timeout at 2023-11-15T06:13:',
    );
    v.absorb(
      ev(
        {
          type: 'approval_given',
          gate: 'follow_up',
          task: 'change',
          key: 'repo-a',
          round: 1,
          decision: 'approved',
          by: 'ana',
          via: 'cli',
        },
        T0 + 6,
      ),
    );
    expect(v.frame().join('\n')).not.toContain('waiting for approval');
  });

  it('watch without a terminal prints the changesets and the burndown after the log', async () => {
    const runDir = campaignRunDir();
    let text = '';
    const code = await watchRun(runDir, {
      stream: {
        write: (s: string) => {
          text += s;
          return true;
        },
      },
      interactive: false,
      color: false,
      connect: () => {
        throw new Error('a finished run is not connected to');
      },
      by: 'test',
    });
    expect(code).toBe(0);
    expect(text).toMatch(/changesets \(2; orchestrate status <run> asks the forge\)/);
    expect(text).toMatch(/change\.repo-b\s+draft\s+failing\s+review_required\s+needs_rebase/);
    expect(text).toContain('burndown: 0/2 merged [....................]');
    expect(text).not.toContain('\x1b[');
  });
});
