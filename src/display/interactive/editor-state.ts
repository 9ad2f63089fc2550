// The prompt editor as plain state and pure transitions, so its behaviour (continuation lines,
// history, cursor moves) is tested without a terminal. The component maps keys to these.

export interface EditorState {
  /** The text being edited; "\n" separates lines. */
  text: string;
  /** Cursor position, an index into text (0..text.length). */
  cursor: number;
  /** Sent texts, oldest first. */
  history: readonly string[];
  /** Position while browsing history (history.length = the draft). */
  historyIndex: number;
  /** The unsent text, kept while browsing history. */
  draft: string;
}

/** How many sent texts the editor remembers. */
export const EDITOR_HISTORY_LIMIT = 200;

export function emptyEditor(history: readonly string[] = []): EditorState {
  const h = history.slice(-EDITOR_HISTORY_LIMIT);
  return { text: '', cursor: 0, history: h, historyIndex: h.length, draft: '' };
}

export function insertText(s: EditorState, input: string): EditorState {
  // Pasted text arrives as one chunk; terminals send line breaks as "\r".
  const clean = input.replace(/\r\n?/g, '\n');
  const text = s.text.slice(0, s.cursor) + clean + s.text.slice(s.cursor);
  return { ...s, text, cursor: s.cursor + clean.length };
}

export function backspace(s: EditorState): EditorState {
  if (s.cursor === 0) return s;
  return { ...s, text: s.text.slice(0, s.cursor - 1) + s.text.slice(s.cursor), cursor: s.cursor - 1 };
}

export function deleteForward(s: EditorState): EditorState {
  if (s.cursor >= s.text.length) return s;
  return { ...s, text: s.text.slice(0, s.cursor) + s.text.slice(s.cursor + 1) };
}

export function moveLeft(s: EditorState): EditorState {
  return { ...s, cursor: Math.max(0, s.cursor - 1) };
}

export function moveRight(s: EditorState): EditorState {
  return { ...s, cursor: Math.min(s.text.length, s.cursor + 1) };
}

export function lineStart(s: EditorState): EditorState {
  return { ...s, cursor: s.text.lastIndexOf('\n', s.cursor - 1) + 1 };
}

export function lineEnd(s: EditorState): EditorState {
  const next = s.text.indexOf('\n', s.cursor);
  return { ...s, cursor: next === -1 ? s.text.length : next };
}

/** Row and column of the cursor. */
export function cursorPosition(s: EditorState): { row: number; col: number } {
  const before = s.text.slice(0, s.cursor).split('\n');
  return { row: before.length - 1, col: before[before.length - 1]!.length };
}

function withHistoryEntry(s: EditorState, index: number): EditorState {
  const text = index === s.history.length ? s.draft : s.history[index]!;
  return { ...s, historyIndex: index, text, cursor: text.length };
}

/** Up: the line above in a multi-line text, else the previous sent text. */
export function moveUp(s: EditorState): EditorState {
  const { row, col } = cursorPosition(s);
  if (row > 0) {
    const lines = s.text.split('\n');
    const start = lines.slice(0, row - 1).reduce((n, l) => n + l.length + 1, 0);
    return { ...s, cursor: start + Math.min(col, lines[row - 1]!.length) };
  }
  if (s.historyIndex === 0 || s.history.length === 0) return s;
  const draft = s.historyIndex === s.history.length ? s.text : s.draft;
  return withHistoryEntry({ ...s, draft }, s.historyIndex - 1);
}

/** Down: the line below in a multi-line text, else the next sent text (then the draft). */
export function moveDown(s: EditorState): EditorState {
  const { row, col } = cursorPosition(s);
  const lines = s.text.split('\n');
  if (row < lines.length - 1) {
    const start = lines.slice(0, row + 1).reduce((n, l) => n + l.length + 1, 0);
    return { ...s, cursor: start + Math.min(col, lines[row + 1]!.length) };
  }
  if (s.historyIndex >= s.history.length) return s;
  return withHistoryEntry(s, s.historyIndex + 1);
}

/** A new line at the cursor (Shift+Enter, or Enter after a trailing "\"). */
export function newline(s: EditorState): EditorState {
  return insertText(s, '\n');
}

export type EnterResult = { kind: 'edit'; state: EditorState } | { kind: 'submit'; text: string; state: EditorState };

/**
 * Enter: a "\" right before the cursor at the end of a line continues the text on a new line
 * (the "\" is dropped); otherwise the text is sent and remembered, and the editor empties.
 */
export function pressEnter(s: EditorState): EnterResult {
  const atLineEnd = s.cursor === s.text.length || s.text[s.cursor] === '\n';
  if (atLineEnd && s.cursor > 0 && s.text[s.cursor - 1] === '\\') {
    const text = `${s.text.slice(0, s.cursor - 1)}\n${s.text.slice(s.cursor)}`;
    return { kind: 'edit', state: { ...s, text, cursor: s.cursor } };
  }
  return { kind: 'submit', text: s.text, state: remember(s, s.text) };
}

/** Empties the editor, keeping `sent` (when not blank, and not a repeat of the last) in history. */
export function remember(s: EditorState, sent: string): EditorState {
  const keep = sent.trim() !== '' && s.history[s.history.length - 1] !== sent;
  const history = keep ? [...s.history, sent].slice(-EDITOR_HISTORY_LIMIT) : s.history;
  return { text: '', cursor: 0, history, historyIndex: history.length, draft: '' };
}

/** Replaces the text (e.g. a rewound prompt handed back for editing). */
export function setText(s: EditorState, text: string): EditorState {
  return { ...s, text, cursor: text.length, historyIndex: s.history.length, draft: '' };
}
