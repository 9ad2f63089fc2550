// What a pull request says about its change: the Goal, Progress (done, in progress, blocked) and
// Files sections of the instance's handoff summary, parsed with the session layer's summary
// parser. The other sections are the agent's notes to itself (constraints, next steps, context
// to carry on), and the product's own instructions to the model (the handoff focus the summary
// was asked with, which a model, or an offline summary of an older run, may have written into
// it) are not for a reviewer: a line that repeats one is left out.
import { parseSummary } from '../session/parse-summary.js';
import { HANDOFF_FOCUS } from '../orchestrator/schedule/handoff-focus.js';

/**
 * Lower-case marks of an instruction to the model: the handoff focus (its lead, before the
 * colon, so a paraphrased rest still matches) and the labels the summary prompt and the older
 * offline summaries put before a focus.
 */
const INSTRUCTION_MARKS = [
  HANDOFF_FOCUS.slice(0, HANDOFF_FOCUS.indexOf(':')).toLowerCase(),
  'focus of this summary:',
  'additional focus:',
];

function isInstruction(text: string): boolean {
  const flat = text.replace(/\s+/g, ' ').toLowerCase();
  return INSTRUCTION_MARKS.some((mark) => flat.includes(mark));
}

const SECTIONED = /^\s{0,3}#{1,4}\s+\**\s*(goals?|progress|done)\b/im;

function list(heading: string, items: readonly string[], bullet: string): string[] {
  return items.length === 0 ? [] : [heading, ...items.map((i) => `${bullet}${i}`)];
}

/**
 * The pull request's account of a summary. A summary without the fixed sections (an agent's
 * plain answer, a hook's own text) is kept as written, less the lines that are instructions.
 * `task` stands in for the summary's Goal when that goal is not the task: the session of a
 * `publish --rebase` was asked to redo the change, and its first request (the Goal of an offline
 * summary) is the product's explanation of the rebase.
 */
export function pullRequestSummary(summary: string, task?: string): string {
  if (!SECTIONED.test(summary))
    return summary
      .split('\n')
      .filter((line) => !isInstruction(line))
      .join('\n')
      .trim();
  const s = parseSummary(summary);
  const keep = (items: readonly string[]): string[] => items.filter((i) => !isInstruction(i));
  const goal = (task ?? s.goal)
    .split('\n')
    .filter((line) => !isInstruction(line))
    .join('\n')
    .trim();
  const progress = [
    ...list('### Done', keep(s.done), '- [x] '),
    ...list('### In Progress', keep(s.inProgress), '- [ ] '),
    ...list('### Blocked', keep(s.blocked), '- '),
  ];
  const sections: string[] = [];
  if (goal) sections.push(`## Goal\n${goal}`);
  if (progress.length > 0) sections.push(['## Progress', ...progress].join('\n'));
  if (s.modifiedFiles.length > 0) sections.push(['## Files', ...s.modifiedFiles.map((f) => `- \`${f}\``)].join('\n'));
  return sections.join('\n\n');
}
