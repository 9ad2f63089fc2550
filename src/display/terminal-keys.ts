// Keys from a terminal in raw mode: the bytes of one stdin chunk as key presses. Small on purpose:
// the run view needs arrows, page keys, Enter, Esc, Backspace, Ctrl-C and typed text. A lone ESC
// byte in a chunk is the Esc key (a terminal sends an escape sequence in one write).

export type KeyName =
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'pageup'
  | 'pagedown'
  | 'home'
  | 'end'
  | 'enter'
  | 'escape'
  | 'backspace'
  | 'tab'
  | 'ctrl-c'
  | 'ctrl-d'
  | 'ctrl-z'
  | 'char';

export interface Key {
  name: KeyName;
  /** The character typed, for 'char'. */
  ch?: string;
}

// CSI / SS3 sequences a terminal sends for the keys we use (xterm, tmux, the Linux console).
const SEQUENCES: readonly [string, KeyName][] = [
  ['\x1b[A', 'up'],
  ['\x1b[B', 'down'],
  ['\x1b[C', 'right'],
  ['\x1b[D', 'left'],
  ['\x1bOA', 'up'],
  ['\x1bOB', 'down'],
  ['\x1bOC', 'right'],
  ['\x1bOD', 'left'],
  ['\x1b[5~', 'pageup'],
  ['\x1b[6~', 'pagedown'],
  ['\x1b[H', 'home'],
  ['\x1b[F', 'end'],
  ['\x1bOH', 'home'],
  ['\x1bOF', 'end'],
  ['\x1b[1~', 'home'],
  ['\x1b[4~', 'end'],
  ['\x1b[7~', 'home'],
  ['\x1b[8~', 'end'],
];

// Any other CSI sequence (F-keys, modified arrows) is swallowed whole rather than typed as text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\x1b) starts every CSI sequence
const OTHER_CSI = /^\x1b\[[0-9;?]*[ -/]*[@-~]/;

export function parseKeys(chunk: string): Key[] {
  const keys: Key[] = [];
  let i = 0;
  while (i < chunk.length) {
    const rest = chunk.slice(i);
    if (rest[0] === '\x1b') {
      const seq = SEQUENCES.find(([s]) => rest.startsWith(s));
      if (seq) {
        keys.push({ name: seq[1] });
        i += seq[0].length;
        continue;
      }
      const other = OTHER_CSI.exec(rest);
      if (other) {
        i += other[0].length;
        continue;
      }
      keys.push({ name: 'escape' });
      i += 1;
      continue;
    }
    const cp = rest.codePointAt(0)!;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    if (ch === '\r' || ch === '\n') keys.push({ name: 'enter' });
    else if (ch === '\x7f' || ch === '\b') keys.push({ name: 'backspace' });
    else if (ch === '\t') keys.push({ name: 'tab' });
    else if (ch === '\x03') keys.push({ name: 'ctrl-c' });
    else if (ch === '\x04') keys.push({ name: 'ctrl-d' });
    else if (ch === '\x1a') keys.push({ name: 'ctrl-z' });
    else if (cp >= 0x20) keys.push({ name: 'char', ch });
    // Other control bytes mean nothing here.
  }
  return keys;
}
