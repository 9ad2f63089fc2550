import { describe, expect, it } from 'vitest';
import {
  backspace,
  cursorPosition,
  emptyEditor,
  insertText,
  moveDown,
  moveLeft,
  moveUp,
  newline,
  pressEnter,
  type EditorState,
} from '../../../src/display/interactive/editor-state.js';

const typed = (text: string, history: string[] = []): EditorState => insertText(emptyEditor(history), text);

describe('editor state', () => {
  it('Enter after a trailing backslash continues on a new line (the backslash is dropped)', () => {
    const r = pressEnter(typed('first line\\'));
    expect(r.kind).toBe('edit');
    const s = r.kind === 'edit' ? insertText(r.state, 'second line') : emptyEditor();
    expect(s.text).toBe('first line\nsecond line');
    const sent = pressEnter(s);
    expect(sent).toMatchObject({ kind: 'submit', text: 'first line\nsecond line' });
    expect(sent.state.text).toBe('');
    expect(sent.state.history).toEqual(['first line\nsecond line']);
  });

  it('a backslash that is not at the end of a line is text, and Enter sends', () => {
    const s = moveLeft(moveLeft(typed('a\\bc')));
    expect(pressEnter(s)).toMatchObject({ kind: 'submit', text: 'a\\bc' });
  });

  it('Shift+Enter (newline) splits the line at the cursor', () => {
    const s = newline(moveLeft(typed('ab')));
    expect(s.text).toBe('a\nb');
    expect(cursorPosition(s)).toEqual({ row: 1, col: 0 });
  });

  it('Up and Down walk the history and come back to the unsent draft', () => {
    let s = emptyEditor(['one', 'two']);
    s = insertText(s, 'draft');
    s = moveUp(s);
    expect(s.text).toBe('two');
    s = moveUp(s);
    expect(s.text).toBe('one');
    expect(moveUp(s).text).toBe('one'); // the oldest stays
    s = moveDown(moveDown(s));
    expect(s.text).toBe('draft');
    expect(moveDown(s).text).toBe('draft');
  });

  it('in a multi-line text Up and Down move between lines before reaching the history', () => {
    let s = typed('line one\nline two', ['old']);
    expect(cursorPosition(s)).toEqual({ row: 1, col: 8 });
    s = moveUp(s);
    expect(s.text).toBe('line one\nline two');
    expect(cursorPosition(s)).toEqual({ row: 0, col: 8 });
    s = moveUp(s);
    expect(s.text).toBe('old');
  });

  it('a sent text is remembered once; blank texts and repeats are not', () => {
    let s = pressEnter(typed('same')).state;
    s = pressEnter(insertText(s, 'same')).state;
    s = pressEnter(insertText(s, '   ')).state;
    expect(s.history).toEqual(['same']);
  });

  it('pasted text keeps its line breaks; backspace joins lines', () => {
    const s = typed('a\r\nb\rc');
    expect(s.text).toBe('a\nb\nc');
    expect(backspace(moveLeft(s)).text).toBe('a\nbc');
  });
});
