// A structured summary built from the conversation itself, without a model call. Used when there
// is no real model to write one (the scripted provider, offline recipes). Same fixed sections as
// a model-written summary (the session layer's renderSummary), so everything downstream (context
// rebuild, summary merging, the next incremental compaction) works alike:
//   Goal              the first user request (later requests listed under In Progress)
//   Done              successful tool calls, one line each
//   Blocked           failed tool calls with the first line of their error
//   Critical Context  the last assistant text
// Read and modified files come from the tool calls, accumulated across compactions.
// A compaction's focus ("Additional focus" of a manual /compact, the orchestrator's handoff
// request) is an instruction for a model; with no model here it is not followed, and it is not
// written into the summary either, where people read it (plans, pull request bodies).
import type { AgentMessage } from '../agent/types.js';
import type { TextContent, ToolCall } from '../ai/types.js';
import {
  collectFileOperations,
  createFileOperations,
  fileListsOf,
  type FileOperations,
} from '../session/file-operations.js';
import { emptySummary, parseSummary, renderSummary } from '../session/parse-summary.js';
import type { FileLists } from '../session/types.js';
import { RUNTIME_DEFAULTS } from './defaults.js';
import { contentText } from '../ai/content-text.js';

export interface ExtractiveSummaryInput {
  /** The messages to summarize, oldest first (history, then a split turn's prefix). */
  messages: readonly AgentMessage[];
  /** The previous compaction's summary: its items are kept and extended. */
  previousSummary?: string;
  /** File operations so far (seeded from the previous compaction); the messages' calls are added. */
  fileOps?: FileOperations;
}

export interface ExtractiveSummary {
  /** Sections, then the file-list tags. */
  summary: string;
  details: FileLists;
}

/** One line, at most `max` characters. */
function quote(text: string, max: number = RUNTIME_DEFAULTS.extractiveQuoteChars): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** `edit src/a.ts`, `bash: npm test`: the argument that identifies the call. */
function describeCall(call: ToolCall): string {
  const a = call.arguments;
  const key = ['path', 'file_path', 'command', 'pattern', 'query', 'url'].find((k) => typeof a[k] === 'string');
  if (key === 'command') return `${call.name}: ${quote(String(a[key]), 160)}`;
  if (key) return `${call.name} ${quote(String(a[key]), 160)}`;
  const args = JSON.stringify(a);
  return args === '{}' ? call.name : `${call.name} ${quote(args, 160)}`;
}

function pushUnique(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item);
}

/** Builds the summary. Pure: the same input gives the same text. */
export function buildExtractiveSummary(input: ExtractiveSummaryInput): ExtractiveSummary {
  const s = input.previousSummary ? parseSummary(input.previousSummary) : emptySummary();
  const maxItems = RUNTIME_DEFAULTS.extractiveMaxItems;

  // Tool results by call id, to tell done from failed.
  const results = new Map<string, { isError: boolean; text: string }>();
  for (const m of input.messages)
    if (m.role === 'toolResult') results.set(m.toolCallId, { isError: m.isError, text: contentText(m.content) });

  const requests: string[] = [];
  let lastText: string | undefined;
  let pendingCalls = 0;
  for (const m of input.messages) {
    if (m.role === 'user') {
      const t = contentText(m.content).trim();
      if (t) requests.push(quote(t));
    } else if (m.role === 'peer') {
      requests.push(quote(`Message from ${m.from}: ${m.text}`));
    } else if (m.role === 'assistant') {
      const text = m.content
        .filter((b): b is TextContent => b.type === 'text')
        .map((b) => b.text)
        .join('\n')
        .trim();
      if (text) lastText = text;
      for (const block of m.content) {
        if (block.type !== 'toolCall') continue;
        const r = results.get(block.id);
        const what = describeCall(block);
        if (!r) pendingCalls++;
        else if (r.isError) pushUnique(s.blocked, `${what}: ${quote(r.text.split('\n')[0] ?? '', 200)}`);
        else pushUnique(s.done, what);
      }
    }
  }

  if (!s.goal && requests.length > 0) s.goal = requests.shift()!;
  for (const r of requests) pushUnique(s.inProgress, `Later request: ${r}`);
  if (pendingCalls > 0) pushUnique(s.inProgress, `${pendingCalls} tool call(s) had no result yet when this part ended`);
  if (lastText) s.criticalContext = [quote(lastText, RUNTIME_DEFAULTS.extractiveQuoteChars * 2)];
  if (s.nextSteps.length === 0)
    s.nextSteps = [
      'Continue from the most recent messages (if any follow this summary); do not redo what is listed under Done.',
    ];
  // Keep the newest items when lists grow past the cap (the oldest are the most settled).
  s.done = s.done.slice(-maxItems);
  s.blocked = s.blocked.slice(-maxItems);
  s.inProgress = s.inProgress.slice(-maxItems);
  delete s.turnContext;

  // The previous summary's lists count even when it came from a hook (then fileOps is unseeded).
  const ops = input.fileOps ?? createFileOperations();
  for (const p of s.readFiles) ops.read.add(p);
  for (const p of s.modifiedFiles) ops.edited.add(p);
  collectFileOperations(input.messages, ops);
  const details = fileListsOf(ops);
  s.readFiles = details.readFiles;
  s.modifiedFiles = details.modifiedFiles;
  return { summary: renderSummary(s), details };
}
