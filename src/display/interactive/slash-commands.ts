// The slash commands of the interactive mode: what the editor's text means when it starts with
// "/". Parsing is separate from running so the table (and /help) is one list.

export const SLASH_COMMANDS = [
  { name: 'compact', args: '[text]', help: 'summarize the conversation to free context' },
  { name: 'model', args: '[id]', help: 'show the model, or switch to another one' },
  { name: 'tree', args: '', help: 'rewind to an entry (the branch left is summarized)' },
  { name: 'fork', args: '', help: 'go on from an earlier prompt in a new session file' },
  { name: 'new', args: '', help: 'start a new session' },
  { name: 'session', args: '', help: 'session file, tokens and cost' },
  { name: 'help', args: '', help: 'commands and keys' },
  { name: 'exit', args: '', help: 'quit (also Ctrl+C twice)' },
] as const;

export type SlashCommandName = (typeof SLASH_COMMANDS)[number]['name'];

export type ParsedInput =
  | { kind: 'prompt'; text: string }
  | { kind: 'command'; name: SlashCommandName; args: string }
  /** "/name" that is not built in: an extension command, or a typo (the session decides). */
  | { kind: 'other-command'; name: string; args: string }
  | { kind: 'empty' };

const NAMES = new Set<string>(SLASH_COMMANDS.map((c) => c.name));

/** What a submitted editor text asks for. "//x" sends the prompt "/x" (an escape for slashes). */
export function parseInput(raw: string): ParsedInput {
  const text = raw.trim();
  if (text === '') return { kind: 'empty' };
  if (text.startsWith('//')) return { kind: 'prompt', text: text.slice(1) };
  const m = /^\/([A-Za-z][\w:.-]*)(?:\s+([\s\S]*))?$/.exec(text);
  if (!m) return { kind: 'prompt', text };
  const name = m[1]!;
  const args = (m[2] ?? '').trim();
  if (NAMES.has(name)) return { kind: 'command', name: name as SlashCommandName, args };
  return { kind: 'other-command', name, args };
}

/** Keys of the interactive mode, for /help and the README. */
export const KEY_HELP: readonly [string, string][] = [
  ['Enter', 'send; while the agent works: queue a steering message'],
  ['Alt+Enter', 'while the agent works: queue a follow-up'],
  ['\\ then Enter', 'new line (Shift+Enter too, in kitty-protocol terminals)'],
  ['Up / Down', 'previous / next prompt (or line of a multi-line text)'],
  ['Esc', 'abort the run or /compact; cancel a /tree rewind'],
  ['Ctrl+O', 'expand / collapse tool results and summaries, on screen'],
  ['', 'and in what is printed next (the scrollback stays as is)'],
  ['Ctrl+A/E/U/D', 'line start / line end / clear editor / delete forward'],
  ['Ctrl+C twice', 'quit'],
];

export function helpText(): string {
  const cmds = SLASH_COMMANDS.map((c) => `  ${`/${c.name} ${c.args}`.trim().padEnd(21)} ${c.help}`);
  const keys = KEY_HELP.map(([k, v]) => `  ${k.padEnd(21)} ${v}`);
  return [
    'Commands:',
    ...cmds,
    'Keys:',
    ...keys,
    '  (//text sends a prompt that starts with "/")',
    'The conversation is printed into the terminal: scroll, search, copy it there.',
  ].join('\n');
}
