// One frame of the live view as lines of text, from the run state alone (no terminal here, so
// the layout is testable as plain strings):
//
//   orchestrate · rename-logger · run 20260101-120000-ab12 · 42s
//   [██████████░░░░░░░░░░░░░░] 5/12 · 5 done · 3 running · 3 queued · 1 failed
//   budget [████░░░░░░░░] $1.23 of $5.00 (25%) · 123,456 tokens
//   ✓ plan                   done              3 turns  12,345 tok  $0.0123   4.2s
//   ✗ apply/repo-e           timeout: no pro…  2 turns   3,456 tok  $0.0040    10s
//   ▸ apply/repo-c           read src/a.ts     3 turns  12,345 tok  $0.0120    12s
//   · 3 queued: apply/repo-f, apply/repo-g, apply/repo-h
//
// Every line is cut to the width; when the frame would be taller than the terminal, finished
// rows collapse first, then running rows are cut with a "… N more" line.
import { boardHeaderLine } from './board-text.js';
import { notPickedAttempt } from '../run/attempt-pick-record.js';
import { pickSummaries } from './pick-text.js';
import { trainSummaries } from './train-text.js';
import { DISPLAY_DEFAULTS } from './defaults.js';
import { formatCost, formatDuration, formatTokens, withoutClassPrefix } from './format-units.js';
import {
  countStatuses,
  currentAttempt,
  currentToolText,
  instanceUsage,
  isFinished,
  runUsage,
  type InstanceState,
  type RunState,
} from '../run/run-fold.js';
import { bar, fitToWidth, oneLine, padStartToWidth, truncateToWidth, type Painter } from './terminal-text.js';

export interface FrameOptions {
  width: number;
  height: number;
  now: number;
  budgetUsd?: number;
  painter: Painter;
  /** The run is over: an unfinished instance reads "interrupted" (or "never started"), not live. */
  runEnded?: boolean;
}

const ICONS: Record<string, string> = {
  done: '✓',
  failed: '✗',
  cancelled: '⊘',
  skipped: '-',
  running: '▸',
  waiting: '…',
  retrying: '↻',
  queued: '·',
  pending: '·',
} as const;

function icon(inst: InstanceState, p: Painter): string {
  // A status this build does not know yet (a newer log) shows its first letter.
  const i = ICONS[inst.status] ?? String(inst.status).slice(0, 1);
  switch (inst.status) {
    case 'done':
      return p.paint('green', i);
    case 'failed':
      return p.paint('red', i);
    case 'cancelled':
      return p.paint('magenta', i);
    case 'running':
      return p.paint('cyan', i);
    case 'waiting':
    case 'retrying':
      return p.paint('yellow', i);
    default:
      return p.paint('dim', i);
  }
}

/** Right-hand columns shared by every instance row: turns, tokens, cost, elapsed. */
function numbers(inst: InstanceState, now: number, p: Painter): string {
  const u = instanceUsage(inst);
  const rec = currentAttempt(inst);
  let elapsed: number | undefined;
  if (isFinished(inst))
    elapsed =
      inst.durationMs ?? (rec?.startTs !== undefined && rec.endTs !== undefined ? rec.endTs - rec.startTs : undefined);
  else if (rec?.startTs !== undefined) elapsed = (rec.endTs ?? now) - rec.startTs;
  const turns = padStartToWidth(`${u.turns ?? 0} turn${u.turns === 1 ? ' ' : 's'}`, 9);
  const tokens = padStartToWidth(`${formatTokens(u.totalTokens)} tok`, 12);
  const cost = padStartToWidth(formatCost(u.cost), 9);
  const time = padStartToWidth(elapsed === undefined ? '' : formatDuration(elapsed), 7);
  return p.paint('dim', `${turns}${tokens}${cost}`) + time;
}

function activityText(inst: InstanceState): string {
  switch (inst.status) {
    case 'done':
      return 'done';
    case 'failed':
      return `${inst.failure ?? 'error'}: ${oneLine(withoutClassPrefix(inst.failure, inst.error ?? ''))}`;
    case 'cancelled': {
      // The coordinator's text already says it ("cancelled by watch (pid 12, ana)").
      const why = oneLine(withoutClassPrefix(inst.failure, inst.error ?? ''));
      return why.startsWith('cancelled') ? why : `cancelled${why ? `: ${why}` : ''}`;
    }
    case 'skipped':
      return `skipped: ${oneLine(inst.skipReason ?? '')}`;
    case 'queued':
    case 'pending':
      return 'queued';
    default: {
      const tool = currentToolText(inst);
      const attempt = currentAttempt(inst)?.attempt ?? 1;
      const base = tool ?? inst.activity ?? 'working';
      return attempt > 1 ? `#${attempt} ${base}` : base;
    }
  }
}

/** `notPicked`: an attempt that lost to another attempt that landed (attempts:), no failure. */
export function instanceRow(inst: InstanceState, o: FrameOptions, notPicked = false): string {
  const p = o.painter;
  const right = numbers(inst, o.now, p);
  const label = fitToWidth(inst.label, DISPLAY_DEFAULTS.labelWidth);
  // Row = icon, space, label, space, activity, numbers; the activity column takes what is left.
  const fixed = 2 + DISPLAY_DEFAULTS.labelWidth + 1 + 9 + 12 + 9 + 7;
  const activityWidth = Math.max(8, o.width - 1 - fixed);
  const stopped = o.runEnded === true && !isFinished(inst);
  const text = stopped
    ? inst.attempts.some((a) => a.startTs !== undefined)
      ? 'interrupted'
      : 'never started'
    : notPicked
      ? `not picked: ${activityText(inst)}`
      : activityText(inst);
  let activity = fitToWidth(text, activityWidth);
  if (notPicked) activity = p.paint('dim', activity);
  else if (inst.status === 'failed') activity = p.paint('red', activity);
  else if (inst.status === 'waiting' || inst.status === 'retrying') activity = p.paint('yellow', activity);
  const mark = stopped || notPicked ? p.paint('dim', ICONS.queued!) : icon(inst, p);
  return truncateToWidth(`${mark} ${p.paint('bold', label)} ${activity}${right}`, o.width - 1);
}

/** The three header lines: title, progress, money. */
export function frameHeader(state: RunState, o: FrameOptions): string[] {
  const p = o.painter;
  const c = countStatuses(state);
  const finished = c.done + c.failed + c.cancelled + c.notPicked + c.skipped;
  const span = state.durationMs ?? (state.endTs ?? o.now) - state.startTs;
  const elapsed = state.startTs ? formatDuration(Math.max(0, span)) : '';
  const status = state.status === 'running' ? '' : ` · ${state.status.replace('_', ' ')}`;
  const title = `${p.paint('bold', 'orchestrate')} · ${state.name || 'run'} · run ${state.runId} · ${elapsed}${status}`;

  const parts = [`${finished}/${c.total}${c.unexpandedTasks > 0 ? '+' : ''}`, p.paint('green', `${c.done} done`)];
  // Once the run has ended, zero running/queued counts are noise.
  if (state.status === 'running' || c.running > 0) parts.push(p.paint('cyan', `${c.running} running`));
  if (state.status === 'running' || c.queued > 0) parts.push(`${c.queued} queued`);
  if (c.awaitingApproval > 0) parts.push(p.paint('yellow', `${c.awaitingApproval} awaiting approval`));
  if (c.failed > 0) parts.push(p.paint('red', `${c.failed} failed`));
  if (c.cancelled > 0) parts.push(p.paint('magenta', `${c.cancelled} cancelled`));
  if (c.notPicked > 0) parts.push(`${c.notPicked} not picked`);
  if (c.skipped > 0) parts.push(`${c.skipped} skipped`);
  const progress = `[${bar(c.total === 0 ? 0 : finished / c.total, DISPLAY_DEFAULTS.progressBarCells)}] ${parts.join(' · ')}`;

  const u = runUsage(state);
  const budget = o.budgetUsd ?? state.budgetUsd;
  let money: string;
  if (budget && budget > 0) {
    const f = u.cost / budget;
    const colour = f >= 0.8 ? 'red' : f >= 0.5 ? 'yellow' : 'green';
    money = `budget [${p.paint(colour, bar(f, DISPLAY_DEFAULTS.budgetBarCells))}] ${formatCost(u.cost)} of ${formatCost(budget)} (${Math.round(f * 100)}%)`;
  } else {
    money = `spent ${formatCost(u.cost)} (no budget set)`;
  }
  money += ` · ${formatTokens(u.totalTokens)} tokens`;
  if (state.budgetExhausted) money += ` · ${p.paint('red', 'budget exhausted')}`;
  const board = state.board.size > 0 ? [boardHeaderLine(state.board)] : [];
  // The merge train: landed / repairing / failed per repository (train-text.ts); best-of-N picks per task (pick-text.ts).
  return [title, progress, money, ...board, ...trainSummaries(state.train), ...pickSummaries(state.picks)].map((l) =>
    truncateToWidth(l, o.width - 1),
  );
}

/** The whole frame: header, finished rows (or a count), running rows, a queued line. */
export function buildFrame(state: RunState, o: FrameOptions): string[] {
  const p = o.painter;
  const lines = frameHeader(state, o);
  const all = [...state.instances.values()];
  const finished = all.filter(isFinished).sort((a, b) => a.lastTs - b.lastTs);
  const active = all.filter((i) => i.status === 'running' || i.status === 'waiting' || i.status === 'retrying');
  const queued = all.filter((i) => i.status === 'queued' || i.status === 'pending');
  const budget = Math.max(lines.length + 1, o.height - DISPLAY_DEFAULTS.reservedRows) - lines.length;

  const queuedLine =
    queued.length > 0
      ? [
          truncateToWidth(
            p.paint('dim', `· ${queued.length} queued: ${queued.map((q) => q.label).join(', ')}`),
            o.width - 1,
          ),
        ]
      : [];
  let activeRows = active.map((i) => instanceRow(i, o));
  const finishedRow = (i: InstanceState) => instanceRow(i, o, notPickedAttempt(state.picks, i.key));
  let finishedRows: string[];
  const failedOrSkipped = finished.filter((i) => i.status !== 'done');
  const countLine = () => {
    const done = finished.length - failedOrSkipped.length;
    const text = `${ICONS.done} ${done} done${failedOrSkipped.length > 0 ? `, ${failedOrSkipped.length} failed or skipped` : ''} (finished rows collapsed)`;
    return truncateToWidth(p.paint('dim', text), o.width - 1);
  };
  if (finished.length <= DISPLAY_DEFAULTS.maxFinishedRows) {
    finishedRows = finished.map((i) => finishedRow(i));
  } else {
    // Many finished: keep the failures visible (most recent last) and count the rest.
    const shownFailures = failedOrSkipped.slice(-Math.max(0, DISPLAY_DEFAULTS.maxFinishedRows - 1));
    const hidden = finished.length - shownFailures.length;
    const word = hidden === finished.length - failedOrSkipped.length ? 'done' : 'finished';
    finishedRows = [
      truncateToWidth(p.paint('dim', `${ICONS.done} ${hidden} ${word} (rows collapsed)`), o.width - 1),
      ...shownFailures.map((i) => finishedRow(i)),
    ];
  }
  // Too tall for the terminal: collapse finished rows to one line, then cut the running rows.
  if (finishedRows.length + activeRows.length + queuedLine.length > budget && finished.length > 0)
    finishedRows = [countLine()];
  const room = budget - finishedRows.length - queuedLine.length;
  if (activeRows.length > room) {
    const keep = Math.max(0, room - 1);
    const hidden = activeRows.length - keep;
    activeRows = [
      ...activeRows.slice(0, keep),
      truncateToWidth(p.paint('dim', `… ${hidden} more running`), o.width - 1),
    ];
  }
  const body = [...finishedRows, ...activeRows, ...queuedLine];
  return [...lines, ...body].slice(0, Math.max(1, o.height - DISPLAY_DEFAULTS.reservedRows));
}
