// How the interactive mode looks, as ink components written with React.createElement (no JSX,
// so the build needs no JSX settings). Everything here is a function of the controller's state
// and the terminal size: the conversation fills the space above the editor and shows its tail.
import { Box, Text } from 'ink';
import React, { useMemo } from 'react';
import { cursorPosition, type EditorState } from './editor-state.js';
import type { InteractiveState, Picker, QueuedMessage } from './controller.js';
import { statusParts } from './status-line.js';
import type { Theme } from './theme.js';
import { markdownLines } from './markdown-lines.js';
import { expandedResult, resultSummary, toolCallText } from './tool-text.js';
import type { TranscriptItem } from './transcript.js';
import { oneLine, truncateToWidth } from '../terminal-text.js';

const h = React.createElement;

/** The most items laid out at once: more than any screen shows, few enough to lay out fast. */
export const RENDERED_ITEMS = 60;
/** Lines of the editor shown (a longer text scrolls with the cursor). */
export const EDITOR_LINES = 6;
/** Rows of a picker shown. */
export const PICKER_ROWS = 10;

const TOOL_MARK = { pending: '·', running: '▸', done: '✓', error: '✗' } as const;

export function TranscriptItemView(props: { item: TranscriptItem; theme: Theme; expanded: boolean; width: number }): React.ReactElement {
  const { item, theme, expanded, width } = props;
  switch (item.kind) {
    case 'user':
      return h(Box, { marginTop: 1, flexShrink: 0 }, h(Text, { ...theme.style('user'), wrap: 'wrap' }, `› ${item.text}`));
    case 'assistant': {
      const parts: React.ReactElement[] = [];
      if (item.thinking !== '') {
        const thinking = expanded ? item.thinking : truncateToWidth(`thinking: ${oneLine(item.thinking)}`, width);
        parts.push(h(Text, { key: 't', ...theme.style('thinking'), wrap: expanded ? 'wrap' : 'truncate-end' }, thinking));
      }
      if (item.text !== '') parts.push(h(AssistantText, { key: 'x', text: item.text, streaming: item.streaming, theme, width }));
      else if (item.streaming && item.thinking === '') parts.push(h(Text, { key: 'x', ...theme.style('status') }, '…'));
      if (item.error && item.stopReason === 'error') parts.push(h(Text, { key: 'e', ...theme.style('error'), wrap: 'wrap' }, `✗ ${item.error}`));
      return h(Box, { flexDirection: 'column', marginTop: 1, flexShrink: 0 }, ...parts);
    }
    case 'tool': {
      const head = truncateToWidth(`${TOOL_MARK[item.state]} ${toolCallText(item.name, item.args)}`, width);
      const role = item.state === 'error' ? 'toolError' : 'tool';
      const body: React.ReactElement[] = [];
      if (item.state === 'running' || item.state === 'pending') {
        body.push(h(Text, { key: 'r', ...theme.style('status') }, `  ⎿ ${item.state === 'running' ? 'running…' : 'waiting…'}`));
      } else if (expanded) {
        expandedResult(item.result).forEach((l, i) => body.push(h(Text, { key: `r${i}`, ...theme.style(item.state === 'error' ? 'toolError' : 'status'), wrap: 'truncate-end' }, `  ${i === 0 ? '⎿' : ' '} ${l}`)));
      } else {
        body.push(h(Text, { key: 'r', ...theme.style(item.state === 'error' ? 'toolError' : 'status'), wrap: 'truncate-end' }, truncateToWidth(`  ⎿ ${resultSummary(item.result)}`, width)));
      }
      return h(Box, { flexDirection: 'column', marginTop: 1, flexShrink: 0 }, h(Text, { ...theme.style(role), wrap: 'truncate-end' }, head), ...body);
    }
    case 'summary': {
      const lines = item.text.split('\n').filter((l) => l.trim() !== '');
      const shown = expanded ? lines : lines.slice(0, 2);
      return h(
        Box,
        { flexDirection: 'column', marginTop: 1, flexShrink: 0 },
        h(Text, { ...theme.style('summary') }, truncateToWidth(`── ${item.label} ──`, width)),
        ...shown.map((l, i) => h(Text, { key: i, ...theme.style('status'), wrap: expanded ? 'wrap' : 'truncate-end' }, l)),
        ...(expanded || lines.length <= 2 ? [] : [h(Text, { key: 'm', ...theme.style('status') }, `… ${lines.length - 2} more lines (Ctrl+O)`)]),
      );
    }
    case 'notice':
      return h(Box, { marginTop: 1, flexShrink: 0 }, h(Text, { ...theme.style(item.tone === 'info' ? 'notice' : item.tone), wrap: 'wrap' }, item.text));
  }
}

/**
 * The reply's text rendered from markdown (markdown-lines), its lines already fitted to the width
 * (so ink's wrap changes nothing). Memoized: the screen redraws every visible item on each delta,
 * but only the streaming one has changed.
 */
function AssistantText(props: { text: string; streaming: boolean; theme: Theme; width: number }): React.ReactElement {
  const { text, streaming, theme, width } = props;
  const lines = useMemo(() => markdownLines(text, { width, color: theme.color, streaming }), [text, streaming, theme.color, width]);
  return h(Text, { ...theme.style('assistant'), wrap: 'wrap' }, lines.join('\n'));
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
        return h(Text, { key: at }, prefix, h(Text, { inverse: true }, ' '), h(Text, { ...theme.style('status') }, props.placeholder));
      }
      if (at !== row) return h(Text, { key: at, wrap: 'wrap' }, prefix + line);
      const under = line[col] ?? ' ';
      return h(Text, { key: at, wrap: 'wrap' }, prefix + line.slice(0, col), h(Text, { inverse: true }, under), line.slice(col + 1));
    }),
  );
}

export function QueueView(props: { queued: QueuedMessage[]; theme: Theme; width: number }): React.ReactElement | null {
  if (props.queued.length === 0) return null;
  return h(
    Box,
    { flexDirection: 'column' },
    ...props.queued.map((q, i) =>
      h(Text, { key: i, ...props.theme.style('warn'), wrap: 'truncate-end' }, truncateToWidth(`${q.kind === 'steer' ? 'queued steering' : 'queued follow-up'}: ${oneLine(q.text)}`, props.width)),
    ),
  );
}

export function PickerView(props: { picker: Picker; theme: Theme; width: number }): React.ReactElement {
  const { picker, theme, width } = props;
  const start = Math.max(0, Math.min(picker.index - Math.floor(PICKER_ROWS / 2), picker.rows.length - PICKER_ROWS));
  const rows = picker.rows.slice(start, start + PICKER_ROWS);
  const title = picker.kind === 'tree' ? 'Rewind to (↑/↓, Enter; Esc cancels; * = current path):' : 'Fork from prompt (↑/↓, Enter; Esc cancels):';
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
  const { left, right } = statusParts({ model: s.model, stats: s.stats, activity: s.activity, queued: s.queued.length, confirmExit: s.confirmExit });
  const room = props.width - right.length - 1;
  const l = truncateToWidth(left, Math.max(0, room));
  const gap = Math.max(1, props.width - l.length - right.length);
  return h(Text, { ...props.theme.style('status'), wrap: 'truncate-end' }, truncateToWidth(`${l}${' '.repeat(gap)}${right}`, props.width));
}

export interface ScreenProps {
  state: InteractiveState;
  theme: Theme;
  width: number;
  height: number;
}

/** The whole screen: conversation (its tail), queued messages, picker or editor, status line. */
export function Screen(props: ScreenProps): React.ReactElement {
  const { state, theme, width, height } = props;
  const items = state.transcript.items;
  const end = Math.max(0, items.length - state.scroll);
  const visible = items.slice(Math.max(0, end - RENDERED_ITEMS), end);
  const placeholder = state.activity === 'working' ? ' Enter: steer · Alt+Enter: follow-up · Esc: abort' : ' Type a prompt, or /help';
  return h(
    Box,
    { flexDirection: 'column', height, width },
    h(
      Box,
      // Basis 0: the conversation gets exactly the rows the rest leaves, and shows its tail.
      { flexDirection: 'column', flexGrow: 1, flexShrink: 1, flexBasis: 0, justifyContent: 'flex-end', overflow: 'hidden' },
      ...visible.map((item) => h(Box, { key: item.key, flexShrink: 0, flexDirection: 'column' }, h(TranscriptItemView, { item, theme, expanded: state.expanded, width }))),
    ),
    // Everything below the conversation keeps its height whatever the conversation holds.
    h(
      Box,
      { flexDirection: 'column', flexShrink: 0 },
      state.scroll > 0 ? h(Text, { ...theme.style('status') }, `↓ ${state.scroll} more below (PageDown)`) : null,
      h(QueueView, { queued: state.queued, theme, width }),
      h(Text, { ...theme.style('border') }, '─'.repeat(width)),
      state.picker ? h(PickerView, { picker: state.picker, theme, width }) : h(EditorView, { editor: state.editor, theme, placeholder }),
      h(StatusLineView, { state, theme, width }),
    ),
  );
}
