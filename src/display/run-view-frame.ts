// The frames of the run view you can drive (run-view.ts), as plain lines from the run state and
// the view's own state, so layout is testable without a terminal:
//
//   list:          header (3 lines), one row per instance with the selection marked ">", scrolled
//                  so the selection stays in view, then the footer (keys, or the last action's
//                  result, or the steer prompt) with the position "12/100".
//   conversation:  the instance's title line, its conversation (session file + control actions,
//                  in time order, then the reply being written, if any) following the end unless
//                  scrolled back, then the footer.
import { DISPLAY_DEFAULTS } from './defaults.js';
import { conversationItemText } from './conversation-text.js';
import { formatClock } from './format-units.js';
import { frameHeader, instanceRow, type FrameOptions } from './live-frame.js';
import {
  controlsOf,
  currentToolText,
  instancesInTaskOrder,
  isFinished,
  type ControlRecord,
  type InstanceState,
  type RunState,
} from '../run/run-fold.js';
import type { Conversation } from './session-conversation.js';
import { displayWidth, makePainter, oneLine, truncateToWidth, wrapToWidth } from './terminal-text.js';

export type RunViewMode = 'list' | 'conversation';

/** What the user has done to the view: which row, which screen, the prompt being typed. */
export interface RunViewModel {
  mode: RunViewMode;
  selected?: InstanceState;
  /** First instance row shown (list mode); adjusted by the frame to keep the selection visible. */
  listTop: number;
  /**
   * The conversation's first line shown once the user scrolled back; undefined: follow the end.
   * Pinned to a line (not a distance from the end) so new turns do not move what is being read.
   */
  pinnedTop?: number;
  /** Set by the last conversation frame: its body's length and the lines it had room for. */
  bodyLines: number;
  bodyRoom: number;
  /** The steer prompt while it is open. */
  input?: { instance: InstanceState; text: string };
  /** The last action's outcome, shown in the footer until the next key. */
  status?: string;
  /** Why actions are unavailable (a finished run, no coordinator); undefined when they work. */
  readOnly?: string;
  /** `watch` quits with q; the run's own view does not (Ctrl-C interrupts the run). */
  canQuit: boolean;
}

/** Instances in the order the list shows them (plan order, then as they appeared). */
export function listOrder(state: RunState): InstanceState[] {
  return instancesInTaskOrder(state);
}

const cut = (s: string, o: FrameOptions) => truncateToWidth(s, o.width - 1);

function footer(model: RunViewModel, o: FrameOptions, position: string): string {
  const p = o.painter;
  if (model.input) {
    // The cursor is hidden while the view is live: an underscore marks where typing goes.
    const head = `steer ${model.input.instance.label}> `;
    const room = Math.max(1, o.width - 2 - displayWidth(head));
    let text = model.input.text;
    while (displayWidth(text) > room) text = text.slice(1); // keep the end in view while typing
    return cut(`${p.paint('bold', head)}${text}_`, o);
  }
  // The position stays whole at the right end; the text before it is cut to fit.
  const right = position ? `  ${position}` : '';
  const left = (text: string) => truncateToWidth(text, Math.max(1, o.width - 1 - displayWidth(right))) + right;
  if (model.status) return left(model.status);
  const keys =
    model.mode === 'list'
      ? [
          '↑↓ select',
          'Enter open',
          ...(model.selected?.approval?.state === 'waiting' ? ['a approve', 'x reject'] : []),
          's steer',
          'c cancel',
          'r retry',
          model.canQuit ? 'q quit' : '^C stop run',
        ]
      : ['Esc back', '↑↓ scroll', 's steer', 'c cancel', 'r retry'];
  const text = model.readOnly
    ? `read-only: ${model.readOnly} · ${model.mode === 'list' ? `↑↓ Enter${model.canQuit ? ' · q quit' : ''}` : 'Esc back'}`
    : keys.join(' · ');
  return left(p.paint('dim', text));
}

/** The list screen. Mutates `model.listTop` so the selected row stays within the window. */
export function listFrame(state: RunState, model: RunViewModel, o: FrameOptions): string[] {
  const header = [...frameHeader(state, o), ...publishGateLines(state, o)];
  const all = listOrder(state);
  const usable = Math.max(header.length + 2, o.height - DISPLAY_DEFAULTS.reservedRows);
  const room = Math.max(1, usable - header.length - 1);
  let index = model.selected ? all.indexOf(model.selected) : -1;
  if (index < 0 && all.length > 0) {
    model.selected = all[0];
    index = 0;
  }
  if (index < model.listTop) model.listTop = index;
  if (index >= model.listTop + room) model.listTop = index - room + 1;
  model.listTop = Math.max(0, Math.min(model.listTop, Math.max(0, all.length - room)));
  const rowOptions: FrameOptions = { ...o, width: o.width - 2, runEnded: state.status !== 'running' };
  const rows = all.slice(model.listTop, model.listTop + room).map((inst) => {
    const row = instanceRow(inst, rowOptions);
    return inst === model.selected ? `${o.painter.paint('bold', '>')} ${o.painter.paint('inverse', row)}` : `  ${row}`;
  });
  if (all.length === 0) rows.push(o.painter.paint('dim', '  (no instances yet)'));
  const position = all.length > room ? `${index + 1}/${all.length}` : '';
  return [...header, ...rows, footer(model, o, position)];
}

/** A publish gate waiting (publish.approve): its prompt with the changeset preview, and the keys that answer it. */
function publishGateLines(state: RunState, o: FrameOptions): string[] {
  if (state.endTs !== undefined) return [];
  return [...state.publishGates]
    .filter(([, g]) => g.state === 'waiting')
    .map(([task, g]) =>
      cut(o.painter.paint('yellow', `publish gate of ${task}: ${oneLine(g.prompt)} · a approve · x reject`), o),
    );
}

function controlText(c: ControlRecord): string {
  const what = c.action === 'steer' ? `steer: "${oneLine(c.text ?? '')}"` : c.action;
  return `⚑ ${formatClock(c.ts)} ${what} by ${c.by}: ${c.ok ? 'ok' : 'refused'}${c.message ? ` (${oneLine(c.message)})` : ''}`;
}

/** The heading of the reply the agent is writing now (not in the session file yet). */
export const WRITING_HEADING = 'assistant (writing…)';

/**
 * The conversation as wrapped lines: session items and the control actions on the instance,
 * merged by time, then `writing` (the reply being written, from a peek) last. No colour in the
 * body: a wrapped coloured line would lose its style on the next line, and redraws rewrite
 * single lines.
 */
export function conversationLines(
  conv: Conversation | undefined,
  controls: readonly ControlRecord[],
  width: number,
  writing?: string,
): string[] {
  const plain = makePainter(false);
  const blocks: { ts: number; order: number; text: string }[] = [];
  (conv?.items ?? []).forEach((item, i) => {
    const ts = Date.parse(item.ts);
    blocks.push({ ts: Number.isFinite(ts) ? ts : 0, order: i, text: conversationItemText(item, plain) });
  });
  for (const [i, c] of controls.entries()) blocks.push({ ts: c.ts, order: 1e9 + i, text: controlText(c) });
  blocks.sort((a, b) => a.ts - b.ts || a.order - b.order);
  const lines: string[] = [];
  if (conv && !conv.exists) lines.push('(no session file yet: the instance has not had its first model reply)');
  for (const w of conv?.warnings ?? []) lines.push(`warning: ${w}`);
  for (const b of blocks) {
    if (lines.length > 0) lines.push('');
    lines.push(...wrapToWidth(b.text, width));
  }
  if (writing) {
    if (lines.length > 0) lines.push('');
    lines.push(
      ...wrapToWidth(
        `${WRITING_HEADING}\n${writing
          .split('\n')
          .map((l) => `  ${l}`)
          .join('\n')}`,
        width,
      ),
    );
  }
  return lines;
}

/** What the instance is doing now, for the title line. */
function liveActivity(inst: InstanceState): string {
  if (inst.status === 'running' || inst.status === 'waiting')
    return currentToolText(inst) ?? inst.activity ?? 'working';
  if (inst.status === 'failed' || inst.status === 'cancelled')
    return `${inst.failure ?? inst.status}: ${oneLine(inst.error ?? '')}`;
  return '';
}

/**
 * The conversation screen. Records the body's size in the model (the keys scroll within it).
 * `writing`: the text the agent is writing now (shown under the last message).
 */
export function conversationFrame(
  state: RunState,
  inst: InstanceState,
  conv: Conversation | undefined,
  model: RunViewModel,
  o: FrameOptions,
  writing?: string,
): string[] {
  const p = o.painter;
  const stopped = state.status !== 'running' && !isFinished(inst);
  const activity = stopped ? '' : liveActivity(inst);
  const status = stopped ? 'interrupted' : inst.status;
  const title = cut(
    `${p.paint('bold', inst.label)} · ${status}${activity ? ` · ${activity}` : ''} · run ${state.runId}`,
    o,
  );
  const body = conversationLines(conv, controlsOf(state, inst), o.width - 1, writing);
  const usable = Math.max(3, o.height - DISPLAY_DEFAULTS.reservedRows);
  const room = usable - 2;
  const lastTop = Math.max(0, body.length - room);
  model.bodyLines = body.length;
  model.bodyRoom = room;
  // Never unpinned here: a conversation read while its file is being written can look short
  // for a moment; only the keys (End, scrolling down to the end) go back to following.
  const top = model.pinnedTop === undefined ? lastTop : Math.min(model.pinnedTop, lastTop);
  const shown = body.slice(top, top + room).map((l) => cut(l, o));
  const below = body.length - (top + shown.length);
  const position = model.pinnedTop !== undefined && below > 0 ? `${below} more below` : '';
  return [title, ...shown, footer(model, o, position)];
}
