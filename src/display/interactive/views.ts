// How the interactive mode looks, as ink components written with React.createElement (no JSX,
// so the build needs no JSX settings). Everything here is a function of the controller's state
// and the terminal size. Finished conversation items are printed once into the terminal's
// scrollback (ink's Static) and never redrawn; the live part below them (the reply being
// streamed, running tools, queued messages, editor, status line) is redrawn and kept shorter than
// the screen: ink clears the whole terminal, scrollback included, to redraw a frame as tall as it.
// Each item is laid out here as rows already fitted to the width, so its height is known.
import { Box, Static, Text } from 'ink';
import React from 'react';
import { cursorPosition, type EditorState } from './editor-state.js';
import type { InteractiveState, Picker, PrintedEntry, QueuedMessage, SeparatorItem } from './controller.js';
import { statusParts } from './status-line.js';
import type { Theme, ThemeRole } from './theme.js';
import { markdownLines } from './markdown-lines.js';
import { expandedResult, resultSummary, toolCallText } from './tool-text.js';
import type { TranscriptItem } from './transcript.js';
import { oneLine, truncateToWidth, wrapToWidth } from '../terminal-text.js';

const h = React.createElement;

/** Lines of the editor shown (a longer text scrolls with the cursor). */
export const EDITOR_LINES = 6;
/** Rows of a picker shown. */
export const PICKER_ROWS = 10;

const TOOL_MARK = { pending: '·', running: '▸', done: '✓', error: '✗' } as const;

/** One terminal row of an item: text at most `width` cells wide, '' for a blank row. */
export interface Row {
  text: string;
  role?: ThemeRole;
}

/** Rows of one item, a blank row first (the space between items). */
function layoutItem(item: TranscriptItem | SeparatorItem, expanded: boolean, width: number, color: boolean): Row[] {
  const rows: Row[] = [{ text: '' }];
  const wrapped = (text: string, role?: ThemeRole) => {
    for (const text2 of wrapToWidth(text, width)) rows.push({ text: text2, role });
  };
  const cut = (text: string, role?: ThemeRole) => rows.push({ text: truncateToWidth(text, width), role });
  switch (item.kind) {
    case 'user':
      wrapped(`› ${item.text}`, 'user');
      break;
    case 'assistant':
      if (item.thinking !== '') {
        if (expanded) wrapped(item.thinking, 'thinking');
        else cut(`thinking: ${oneLine(item.thinking)}`, 'thinking');
      }
      if (item.text !== '')
        for (const line of markdownLines(item.text, { width, color, streaming: item.streaming }))
          rows.push({ text: line, role: 'assistant' });
      else if (item.streaming && item.thinking === '') rows.push({ text: '…', role: 'status' });
      if (item.error && item.stopReason === 'error') wrapped(`✗ ${item.error}`, 'error');
      break;
    case 'tool': {
      cut(
        `${TOOL_MARK[item.state]} ${toolCallText(item.name, item.args)}`,
        item.state === 'error' ? 'toolError' : 'tool',
      );
      const role = item.state === 'error' ? 'toolError' : 'status';
      if (item.state === 'running' || item.state === 'pending')
        cut(`  ⎿ ${item.state === 'running' ? 'running…' : 'waiting…'}`, 'status');
      else if (expanded)
        for (const [i, l] of expandedResult(item.result).entries()) cut(`  ${i === 0 ? '⎿' : ' '} ${l}`, role);
      else cut(`  ⎿ ${resultSummary(item.result)}`, role);
      break;
    }
    case 'summary': {
      const lines = item.text.split('\n').filter((l) => l.trim() !== '');
      cut(`── ${item.label} ──`, 'summary');
      for (const l of expanded ? lines : lines.slice(0, 2)) {
        if (expanded) wrapped(l, 'status');
        else cut(l, 'status');
      }
      if (!expanded && lines.length > 2)
        cut(`… ${lines.length - 2} more lines (Ctrl+O prints summaries in full from then on)`, 'status');
      break;
    }
    case 'notice':
      wrapped(item.text, item.tone === 'info' ? 'notice' : item.tone);
      break;
    case 'separator':
      cut(item.text, 'border');
      break;
  }
  return rows;
}

/** Layouts of live items by item object: the screen redraws on every delta and keystroke, and only the streamed item has changed. */
const layoutCache = new WeakMap<object, { expanded: boolean; width: number; color: boolean; rows: Row[] }>();

export function itemRows(
  item: TranscriptItem | SeparatorItem,
  expanded: boolean,
  width: number,
  color: boolean,
): Row[] {
  const hit = layoutCache.get(item);
  if (hit && hit.expanded === expanded && hit.width === width && hit.color === color) return hit.rows;
  const rows = layoutItem(item, expanded, width, color);
  layoutCache.set(item, { expanded, width, color, rows });
  return rows;
}

function RowsView(props: { rows: Row[]; theme: Theme }): React.ReactElement {
  const { rows, theme } = props;
  return h(
    Box,
    { flexDirection: 'column', flexShrink: 0 },
    // A Text with no text has no height: a blank row is an empty box one row tall.
    ...rows.map((r, i) =>
      r.text === ''
        ? h(Box, { key: i, height: 1 })
        : h(Text, { key: i, ...(r.role ? theme.style(r.role) : {}), wrap: 'truncate-end' }, r.text),
    ),
  );
}

/** One printed item, drawn once into the scrollback. */
export function PrintedItemView(props: { entry: PrintedEntry; theme: Theme; width: number }): React.ReactElement {
  const { entry, theme, width } = props;
  return h(RowsView, { rows: itemRows(entry.item, entry.expanded, width, theme.color), theme });
}

/** The editor: "> " on the first line, the cursor as an inverted cell. */
export function EditorView(props: { editor: EditorState; theme: Theme; placeholder: string }): React.ReactElement {
  const { editor, theme } = props;
  const lines = editor.text.split('\n');
  const { row, col } = cursorPosition(editor);
  const first = Math.max(0, Math.min(row - EDITOR_LINES + 1, lines.length - EDITOR_LINES));
  const shown = lines.slice(first, first + EDITOR_LINES);
  return h(
    Box,
    { flexDirection: 'column' },
    ...shown.map((line, i) => {
      const at = first + i;
      const prefix = at === 0 ? '> ' : '  ';
      if (editor.text === '' && at === 0) {
        return h(
          Text,
          { key: at },
          prefix,
          h(Text, { inverse: true }, ' '),
          h(Text, { ...theme.style('status') }, props.placeholder),
        );
      }
      if (at !== row) return h(Text, { key: at, wrap: 'wrap' }, prefix + line);
      const under = line[col] ?? ' ';
      return h(
        Text,
        { key: at, wrap: 'wrap' },
        prefix + line.slice(0, col),
        h(Text, { inverse: true }, under),
        line.slice(col + 1),
      );
    }),
  );
}

export function QueueView(props: { queued: QueuedMessage[]; theme: Theme; width: number }): React.ReactElement | null {
  if (props.queued.length === 0) return null;
  return h(
    Box,
    { flexDirection: 'column' },
    ...props.queued.map((q, i) =>
      h(
        Text,
        { key: i, ...props.theme.style('warn'), wrap: 'truncate-end' },
        truncateToWidth(
          `${q.kind === 'steer' ? 'queued steering' : 'queued follow-up'}: ${oneLine(q.text)}`,
          props.width,
        ),
      ),
    ),
  );
}

export function PickerView(props: { picker: Picker; theme: Theme; width: number }): React.ReactElement {
  const { picker, theme, width } = props;
  const start = Math.max(0, Math.min(picker.index - Math.floor(PICKER_ROWS / 2), picker.rows.length - PICKER_ROWS));
  const rows = picker.rows.slice(start, start + PICKER_ROWS);
  const title =
    picker.kind === 'tree'
      ? 'Rewind to (↑/↓, Enter; Esc cancels; * = current path):'
      : 'Fork from prompt (↑/↓, Enter; Esc cancels):';
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { ...theme.style('notice') }, truncateToWidth(title, width)),
    ...rows.map((r, i) => {
      const selected = start + i === picker.index;
      const mark = `${selected ? '>' : ' '}${r.onPath ? '*' : ' '} `;
      const text = truncateToWidth(`${mark}${'  '.repeat(r.depth)}${r.text}${r.isLeaf ? ' (here)' : ''}`, width);
      return h(Text, { key: r.id, ...(selected ? theme.style('selected') : {}), wrap: 'truncate-end' }, text);
    }),
  );
}

export function StatusLineView(props: { state: InteractiveState; theme: Theme; width: number }): React.ReactElement {
  const s = props.state;
  const { left, right } = statusParts({
    model: s.model,
    stats: s.stats,
    activity: s.activity,
    queued: s.queued.length,
    confirmExit: s.confirmExit,
  });
  const room = props.width - right.length - 1;
  const l = truncateToWidth(left, Math.max(0, room));
  const gap = Math.max(1, props.width - l.length - right.length);
  return h(
    Text,
    { ...props.theme.style('status'), wrap: 'truncate-end' },
    truncateToWidth(`${l}${' '.repeat(gap)}${right}`, props.width),
  );
}

export interface ScreenProps {
  state: InteractiveState;
  theme: Theme;
  width: number;
  /** Rows the live part may take at most (less than the terminal's). */
  height: number;
}

/** Rows the editor takes: its shown lines, each wrapped at the width. */
function editorRows(editor: EditorState, placeholder: string, width: number): number {
  const lines = editor.text.split('\n');
  const { row } = cursorPosition(editor);
  const first = Math.max(0, Math.min(row - EDITOR_LINES + 1, lines.length - EDITOR_LINES));
  let rows = 0;
  lines.slice(first, first + EDITOR_LINES).forEach((line, i) => {
    const text = editor.text === '' ? `>  ${placeholder}` : `${first + i === 0 ? '> ' : '  '}${line} `;
    rows += wrapToWidth(text, width).length;
  });
  return rows;
}

/**
 * The screen: the printed conversation (Static: each entry is drawn once, when it is new), then
 * the live part: the items not printed yet (their last rows, if they are taller than the room
 * left), queued messages, picker or editor, status line.
 */
export function Screen(props: ScreenProps): React.ReactElement {
  const { state, theme, width, height } = props;
  const placeholder =
    state.activity === 'working' ? ' Enter: steer · Alt+Enter: follow-up · Esc: abort' : ' Type a prompt, or /help';
  const below =
    state.queued.length +
    1 +
    (state.picker
      ? 1 + Math.min(PICKER_ROWS, state.picker.rows.length)
      : editorRows(state.editor, placeholder, width)) +
    1;
  // One row to spare: the editor's rows are counted with our wrapping, ink wraps it with its own.
  const room = Math.max(1, height - below - 1);
  const live = state.transcript.items
    .slice(state.printedUpTo)
    .flatMap((item) => itemRows(item, state.expanded, width, theme.color));
  let shown = live;
  if (live.length > room) {
    const hidden = live.length - room + 1;
    shown = [
      { text: truncateToWidth(`… ${hidden} rows above (printed in full once finished)`, width), role: 'status' },
      ...live.slice(hidden),
    ];
  }
  return h(
    Box,
    { flexDirection: 'column', width },
    h(Static<PrintedEntry>, {
      items: state.printed,
      children: (entry: PrintedEntry) => h(PrintedItemView, { key: entry.key, entry, theme, width }),
    }),
    h(RowsView, { rows: shown, theme }),
    h(QueueView, { queued: state.queued, theme, width }),
    h(Text, { ...theme.style('border') }, '─'.repeat(width)),
    state.picker
      ? h(PickerView, { picker: state.picker, theme, width })
      : h(EditorView, { editor: state.editor, theme, placeholder }),
    h(StatusLineView, { state, theme, width }),
  );
}
