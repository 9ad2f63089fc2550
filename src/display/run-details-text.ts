// `orchestrate show <run>` as text: the run's status, every instance with its attempts, output,
// error class and usage, and the merged plan.
import { changesetsBlock } from './changesets-text.js';
import { boardTable } from './board-text.js';
import { trainBlock } from './train-text.js';
import { describePick, notPickedAttempt } from '../run/attempt-pick-record.js';
import { describeApproval } from '../run/approval-record.js';
import { providerCostLines } from './provider-costs.js';
import { cacheText } from './cache-text.js';
import { DISPLAY_DEFAULTS } from './defaults.js';
import { outputPreview, partialLine } from './final-summary.js';
import {
  formatCost,
  formatDateTime,
  formatDuration,
  formatTokens,
  plural,
  withoutClassPrefix,
} from './format-units.js';
import { describeHolder } from '../run/run-lease.js';
import type { RunFolder } from './run-folder.js';
import { controlLine } from './plain-log.js';
import {
  attemptUsage,
  controlsOf,
  countStatuses,
  instanceUsage,
  instancesInTaskOrder,
  runUsage,
  type InstanceState,
  type RunState,
} from '../run/run-fold.js';
import { attemptFacts } from '../run/run-queries.js';
import { clip, makePainter, oneLine, type Painter } from './terminal-text.js';

function usageLine(inst: InstanceState): string {
  const u = instanceUsage(inst);
  return (
    `${plural(u.turns ?? 0, 'turn')} · ${formatTokens(u.totalTokens)} tokens ` +
    `(in ${formatTokens(u.input)}, out ${formatTokens(u.output)}, cache read ${formatTokens(u.cacheRead)}, cache write ${formatTokens(u.cacheWrite)}) · ${formatCost(u.cost)}` +
    (cacheText(u) ? ` · ${cacheText(u)}` : '')
  );
}

function instanceBlock(s: RunState, inst: InstanceState, p: Painter): string[] {
  const out: string[] = [];
  const colour =
    inst.status === 'done'
      ? 'green'
      : inst.status === 'failed'
        ? 'red'
        : inst.status === 'cancelled'
          ? 'magenta'
          : 'yellow';
  const dur = inst.durationMs !== undefined ? ` in ${formatDuration(inst.durationMs)}` : '';
  // attempts: an attempt that lost to another one that landed is no failure of the run.
  const status = notPickedAttempt(s.picks, inst.key)
    ? p.paint('dim', `${inst.status}, not picked`)
    : p.paint(colour, inst.status);
  out.push(`  ${p.paint('bold', inst.label)}  ${status}${dur}`);
  out.push(`    usage: ${usageLine(inst)}`);
  const started = inst.attempts.filter((a) => a.startTs !== undefined);
  if (started.length > 1 || started.some((a) => a.outcome !== 'done' && a.outcome !== 'running')) {
    for (const a of started) {
      const u = attemptUsage(a);
      const len = a.endTs !== undefined && a.startTs !== undefined ? formatDuration(a.endTs - a.startTs) : 'open';
      const why = a.failure
        ? ` ${a.failure}: ${clip(oneLine(withoutClassPrefix(a.failure, a.error ?? '')), DISPLAY_DEFAULTS.errorPreviewChars)}`
        : '';
      const next = a.retryDelayMs !== undefined ? ` (retried after ${formatDuration(a.retryDelayMs)})` : '';
      const waited = a.waits.reduce((s, w) => s + ((w.end ?? w.start) - w.start), 0);
      const waits = waited > 0 ? `, waited ${formatDuration(waited)} for permits` : '';
      out.push(
        `    attempt ${a.attempt}: ${a.outcome} after ${len}, ${formatTokens(u.totalTokens)} tokens, ${formatCost(u.cost)}${waits}${why}${next}`,
      );
    }
  }
  if (inst.status === 'failed')
    out.push(
      `    ${p.paint('red', `error (${inst.failure ?? 'error'})`)}: ${oneLine(withoutClassPrefix(inst.failure, inst.error ?? ''))}`,
    );
  if (inst.status === 'skipped') out.push(`    skipped: ${oneLine(inst.skipReason ?? '')}`);
  for (const w of inst.warnings ?? []) out.push(`    ${p.paint('yellow', oneLine(w))}`);
  for (const f of inst.fallbacks ?? [])
    out.push(
      `    ${p.paint('yellow', `fallback: ${f.calls} call${f.calls === 1 ? '' : 's'} went to ${f.served} instead of ${f.primary}${f.failed ? ` (${f.failed} failed there too)` : ''}`)}: ${clip(oneLine(f.reason), DISPLAY_DEFAULTS.errorPreviewChars)}`,
    );
  // Who cancelled it, steered it or retried it (the run's control events).
  if (inst.status === 'cancelled') out.push(`    ${oneLine(inst.error ?? 'cancelled')}`);
  if (inst.workers?.length) out.push(`    worker${inst.workers.length > 1 ? 's' : ''}: ${inst.workers.join(', ')}`);
  // Its approval gate: who answered, how, when, with what note (or what it waits for).
  if (inst.approval) out.push(`    approval: ${oneLine(describeApproval(inst.approval))}`);
  for (const c of controlsOf(s, inst)) out.push(`    ${controlLine(c)}`);
  if (inst.output !== undefined || inst.text)
    out.push(`    output: ${outputPreview(inst.output ?? inst.text, DISPLAY_DEFAULTS.toolResultChars)}`);
  if (inst.modifiedFiles && inst.modifiedFiles.length > 0) out.push(`    modified: ${inst.modifiedFiles.join(', ')}`);
  if (inst.patchFile) out.push(`    patch: ${inst.patchFile}`);
  if (inst.branch) out.push(`    branch: ${inst.branch}`);
  if (inst.applied) out.push('    applied to the checkout');
  for (const v of inst.verify)
    out.push(
      `    verify \`${v.command}\`: ${v.ok ? 'passed' : `failed: ${clip(oneLine(v.output), DISPLAY_DEFAULTS.errorPreviewChars)}`}`,
    );
  if (inst.messages.length > 0)
    out.push(`    messages: ${inst.messages.length} (${inst.messages.map((m) => `${m.from} -> ${m.to}`).join(', ')})`);
  return out;
}

export function formatRunDetails(folder: RunFolder, painter: Painter = makePainter(false)): string {
  const s = folder.state;
  const p = painter;
  const out: string[] = [];
  out.push(`${p.paint('bold', `run ${s.runId}`)} · ${s.name} · ${s.recipe}`);
  const u = s.endUsage ?? runUsage(s);
  const dur = s.durationMs ?? s.lastTs - s.startTs;
  // The session's run_end wins over a lease its coordinator has not let go of yet.
  const status =
    s.status !== 'running'
      ? s.status.replace('_', ' ')
      : folder.holder
        ? `running (coordinator ${describeHolder(folder.holder)})`
        : 'interrupted (no run_end in the log)';
  out.push(
    `status: ${status} · started ${formatDateTime(s.startTs)} · ${formatDuration(Math.max(0, dur))} · ${formatTokens(u.totalTokens)} tokens · ${formatCost(u.cost)}`,
  );
  const cache = cacheText(u);
  if (cache) out.push(cache);
  out.push(...providerCostLines(s.providers));
  const c = countStatuses(s);
  out.push(
    `instances: ${c.total} (${c.done} done, ${c.failed} failed, ${c.cancelled > 0 ? `${c.cancelled} cancelled, ` : ''}${c.notPicked > 0 ? `${c.notPicked} attempts not picked, ` : ''}${c.skipped} skipped, ${c.total - c.done - c.failed - c.cancelled - c.notPicked - c.skipped} unfinished)`,
  );
  // Run-wide actions, and those aimed at a key no instance has (refused).
  const aimed = new Set(instancesInTaskOrder(s).flatMap((i) => controlsOf(s, i)));
  for (const r of s.controls.filter((x) => !aimed.has(x))) out.push(controlLine(r));
  if (s.status === 'partial') out.push(p.paint('yellow', partialLine(s)));
  if (s.budgetExhausted) out.push(p.paint('red', `budget exhausted: ${s.budgetExhausted}`));
  // Publish gates (publish.approve): what they wait for or who answered, then what was published.
  for (const [task, rec] of s.publishGates) out.push(`publish gate of ${task}: ${oneLine(describeApproval(rec))}`);
  for (const x of s.published) out.push(`  published ${x.key}: ${x.outcome}${x.detail ? ` ${oneLine(x.detail)}` : ''}`);
  if (folder.skipped.length > 0)
    out.push(
      `note: ${folder.skipped.length} unreadable line(s) in run.jsonl were skipped (${folder.skipped.map((k) => `line ${k.line}: ${k.reason}`).join('; ')})`,
    );
  out.push(`folder: ${folder.dir}`);
  out.push('');
  const board = boardTable(s.board);
  if (board.length) out.push(...board, '');
  // The merge train: each car landed, repairing or failed, with its verify result (train-text.ts).
  const train = trainBlock(s.train);
  if (train.length) out.push(...train, '');
  for (const [task, t] of s.tasks) {
    const needs = t.needs.length > 0 ? ` (needs ${t.needs.join(', ')})` : '';
    out.push(`${p.paint('bold', `task ${task}`)}${needs}`);
    const list = instancesInTaskOrder(s).filter((i) => i.task === task);
    if (list.length === 0) out.push(`  ${t.dynamic ? 'not expanded' : 'no instances'}`);
    for (const inst of list) out.push(...instanceBlock(s, inst, p));
    // attempts: which attempt of each instance was picked, and why (attempt-pick-record.ts).
    for (const pick of s.picks.values())
      if (pick.task === task) out.push(...describePick(pick, attemptFacts(s)).map((l) => `  ${l}`));
  }
  out.push('');
  out.push(...changesetsBlock(folder.dir, s));
  if (folder.planText !== undefined) {
    out.push(p.paint('bold', `plan (${folder.planFile})`));
    out.push(folder.planText.trimEnd());
  } else {
    out.push('plan: none yet (plan.md is written as tasks finish)');
  }
  return `${out.join('\n')}\n`;
}
