// Colours of the interactive mode, or none: with NO_COLOR (or FORCE_COLOR=0) every role maps to
// no style at all, so ink writes plain text. The decision is terminal-text's shouldUseColor.
export type ThemeRole =
  | 'user'
  | 'assistant'
  | 'thinking'
  | 'tool'
  | 'toolError'
  | 'toolOk'
  | 'notice'
  | 'warn'
  | 'error'
  | 'status'
  | 'border'
  | 'summary'
  | 'selected';

/** Props for ink's <Text> per role. */
export type TextStyle = { color?: string; bold?: boolean; dimColor?: boolean; inverse?: boolean };

export interface Theme {
  readonly color: boolean;
  style(role: ThemeRole): TextStyle;
}

const COLORS: Record<ThemeRole, TextStyle> = {
  user: { color: 'cyan', bold: true },
  assistant: {},
  thinking: { color: 'magenta', dimColor: true },
  tool: { color: 'yellow' },
  toolError: { color: 'red' },
  toolOk: { color: 'green' },
  notice: { color: 'blue' },
  warn: { color: 'yellow' },
  error: { color: 'red' },
  status: { dimColor: true },
  border: { color: 'gray' },
  summary: { color: 'green' },
  selected: { color: 'cyan', bold: true },
};

export function makeTheme(color: boolean): Theme {
  return { color, style: (role) => (color ? COLORS[role] : {}) };
}
