// Reading a session file (.jsonl) the way the resume tests check it: its lines, its entries, its
// messages, and a message as "role: text" (a tool call as call:<name>). One reader (issue #43)
// for the CLI and app tests of cut-off sessions; agent-cut-off-json can take it too.
import { readFileSync } from 'node:fs';
import type { AgentMessage } from '../../src/agent/types.js';

export interface SessionEntry {
  type: string;
  message?: AgentMessage;
}

/** The file's non-empty lines. */
export const sessionFileLines = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');

/** Every entry of the file (each line parsed). */
export const sessionEntries = (file: string): SessionEntry[] =>
  sessionFileLines(file).map((l) => JSON.parse(l) as SessionEntry);

/** The messages of the file's message entries, in order. */
export const sessionMessages = (file: string): AgentMessage[] =>
  sessionEntries(file).flatMap((e) => (e.type === 'message' && e.message ? [e.message] : []));

/** A message's text blocks joined, a tool call as call:<name>. */
export const messageText = (m: AgentMessage): string =>
  'content' in m && Array.isArray(m.content)
    ? m.content.map((b) => ('text' in b ? b.text : b.type === 'toolCall' ? `call:${b.name}` : '')).join('')
    : '';
