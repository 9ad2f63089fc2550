// One-line text of a tool call (name and arguments) and of its result, for the compact view;
// the full result is shown when tool results are expanded (Ctrl+O).
import { oneLine } from '../terminal-text.js';

/** Lines of a result shown when expanded. */
export const EXPANDED_RESULT_LINES = 20;

function valueText(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === undefined) return 'undefined';
  return JSON.stringify(v) ?? String(v);
}

/** `bash $ ls -la`, `read README.md`, else `name key=value, ...`. */
export function toolCallText(name: string, args: unknown): string {
  const a = (args && typeof args === 'object' ? args : {}) as Record<string, unknown>;
  if (name === 'bash' && typeof a.command === 'string') return `bash $ ${oneLine(a.command)}`;
  if ((name === 'read' || name === 'write' || name === 'edit' || name === 'ls') && typeof a.path === 'string') {
    const rest = Object.entries(a).filter(([k]) => k !== 'path' && k !== 'content' && k !== 'edits');
    const extra = rest.map(([k, v]) => `${k}=${valueText(v)}`).join(' ');
    return oneLine(`${name} ${a.path}${extra ? ` ${extra}` : ''}`);
  }
  const parts = Object.entries(a).map(([k, v]) => `${k}=${valueText(v)}`);
  return oneLine(`${name} ${parts.join(', ')}`.trim());
}

/** Collapsed result: "12 lines: first line". */
export function resultSummary(result: string): string {
  const lines = result.replace(/\n+$/, '').split('\n');
  const first = lines.find((l) => l.trim() !== '') ?? '';
  if (lines.length <= 1) return first === '' ? '(no output)' : oneLine(first);
  return `${lines.length} lines: ${oneLine(first)}`;
}

/** Expanded result: the first lines, and how many more there are. */
export function expandedResult(result: string): string[] {
  const lines = result.replace(/\n+$/, '').split('\n');
  if (lines.length <= EXPANDED_RESULT_LINES) return lines;
  return [...lines.slice(0, EXPANDED_RESULT_LINES), `… ${lines.length - EXPANDED_RESULT_LINES} more lines`];
}
