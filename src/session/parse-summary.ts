// Summaries as data. The orchestrator merges the summaries of many agents into one plan, so the
// sectioned text a model wrote is parsed back into fields, tolerating missing sections, extra
// prose, other bullet styles and "(none)" placeholders. renderSummary writes the canonical text;
// parseSummary(renderSummary(s)) gives s back.

export interface KeyDecision {
  decision: string;
  rationale: string;
}

export interface StructuredSummary {
  goal: string;
  constraints: string[];
  done: string[];
  inProgress: string[];
  blocked: string[];
  keyDecisions: KeyDecision[];
  nextSteps: string[];
  criticalContext: string[];
  readFiles: string[];
  modifiedFiles: string[];
  /** The prefix summary of a split turn, when the compaction cut inside a turn. */
  turnContext?: string;
}

/** A summary with every field empty: what parsing starts from, and what a first compaction adds to. */
export function emptySummary(): StructuredSummary {
  return {
    goal: '',
    constraints: [],
    done: [],
    inProgress: [],
    blocked: [],
    keyDecisions: [],
    nextSteps: [],
    criticalContext: [],
    readFiles: [],
    modifiedFiles: [],
  };
}

type Section =
  | 'goal'
  | 'constraints'
  | 'progress'
  | 'done'
  | 'inProgress'
  | 'blocked'
  | 'keyDecisions'
  | 'nextSteps'
  | 'criticalContext';

const HEADINGS: Record<string, Section> = {
  goal: 'goal',
  goals: 'goal',
  'constraints & preferences': 'constraints',
  'constraints and preferences': 'constraints',
  constraints: 'constraints',
  progress: 'progress',
  done: 'done',
  'in progress': 'inProgress',
  blocked: 'blocked',
  'key decisions': 'keyDecisions',
  decisions: 'keyDecisions',
  'next steps': 'nextSteps',
  'critical context': 'criticalContext',
};

const TURN_CONTEXT_MARK = /\n-{3,}\s*\n+\*\*Turn Context \(split turn\):\*\*\s*\n/;
const BULLET = /^\s*(?:[-*+]|\d+[.)])\s+/;
const CHECKBOX = /^\[([ xX])\]\s*/;
const NONE = /^\(?none\)?\.?$/i;

function lastTagBlock(text: string, tag: string): { items: string[]; rest: string } {
  const re = new RegExp(`\\n*<${tag}>\\n?([\\s\\S]*?)\\n?</${tag}>`, 'g');
  let items: string[] = [];
  for (const m of text.matchAll(re))
    items = (m[1] ?? '')
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
  return { items, rest: text.replace(re, '') };
}

function parseDecision(item: string): KeyDecision {
  const bold = /^\*\*(.+?)\*\*\s*(?:[:\-–—]\s*)?(.*)$/.exec(item);
  if (bold) return { decision: bold[1]!.replace(/:$/, '').trim(), rationale: bold[2]!.trim() };
  const colon = item.indexOf(': ');
  if (colon > 0) return { decision: item.slice(0, colon).trim(), rationale: item.slice(colon + 2).trim() };
  return { decision: item.trim(), rationale: '' };
}

export function parseSummary(text: string): StructuredSummary {
  const read = lastTagBlock(text.replace(/\r\n/g, '\n'), 'read-files');
  const modified = lastTagBlock(read.rest, 'modified-files');
  let body = modified.rest;
  let turnContext: string | undefined;
  const mark = TURN_CONTEXT_MARK.exec(body);
  if (mark) {
    turnContext = body.slice(mark.index + mark[0].length).trim();
    body = body.slice(0, mark.index);
  }

  const out: StructuredSummary = { ...emptySummary(), readFiles: read.items, modifiedFiles: modified.items };
  const goal: string[] = [];
  const lists: Record<Exclude<Section, 'goal' | 'keyDecisions' | 'progress'> | 'keyDecisions', string[]> = {
    constraints: out.constraints,
    done: out.done,
    inProgress: out.inProgress,
    blocked: out.blocked,
    keyDecisions: [],
    nextSteps: out.nextSteps,
    criticalContext: out.criticalContext,
  };
  let section: Section | undefined;
  let last: { list: string[]; index: number } | undefined;

  for (const raw of body.split('\n')) {
    const heading = /^\s{0,3}#{1,4}\s+(.+?)\s*#*\s*$/.exec(raw);
    if (heading) {
      section = HEADINGS[heading[1]!.toLowerCase().replace(/[*:]/g, '').trim()];
      last = undefined;
      continue;
    }
    const line = raw.trim();
    if (!section || !line) continue;
    if (section === 'goal') {
      if (!NONE.test(line)) goal.push(line);
      continue;
    }
    const isItem = BULLET.test(raw);
    let item = line.replace(BULLET, '');
    if (NONE.test(item)) continue;
    const box = CHECKBOX.exec(item);
    if (box) item = item.slice(box[0].length);
    if (!isItem && last) {
      // A wrapped line continues the previous item.
      last.list[last.index] += ` ${line}`;
      continue;
    }
    let target: string[];
    if (section === 'progress') target = box && box[1] !== ' ' ? out.done : out.inProgress;
    else target = lists[section];
    target.push(item);
    last = { list: target, index: target.length - 1 };
  }
  out.goal = goal.join('\n');
  out.keyDecisions = lists.keyDecisions.map(parseDecision);
  if (turnContext) out.turnContext = turnContext;
  return out;
}

function bullets(items: readonly string[], prefix: (i: number) => string): string {
  return items.length === 0 ? '(none)' : items.map((s, i) => `${prefix(i)}${s}`).join('\n');
}

/** Canonical text of a summary (the format the summarizer is asked for). */
export function renderSummary(s: StructuredSummary): string {
  const decisions = s.keyDecisions.map((d) =>
    d.rationale ? `**${d.decision}**: ${d.rationale}` : `**${d.decision}**`,
  );
  let text = [
    '## Goal',
    s.goal || '(none)',
    '',
    '## Constraints & Preferences',
    bullets(s.constraints, () => '- '),
    '',
    '## Progress',
    '### Done',
    bullets(s.done, () => '- [x] '),
    '',
    '### In Progress',
    bullets(s.inProgress, () => '- [ ] '),
    '',
    '### Blocked',
    bullets(s.blocked, () => '- '),
    '',
    '## Key Decisions',
    bullets(decisions, () => '- '),
    '',
    '## Next Steps',
    bullets(s.nextSteps, (i) => `${i + 1}. `),
    '',
    '## Critical Context',
    bullets(s.criticalContext, () => '- '),
  ].join('\n');
  if (s.turnContext) text += `\n\n---\n\n**Turn Context (split turn):**\n\n${s.turnContext}`;
  if (s.readFiles.length > 0) text += `\n\n<read-files>\n${s.readFiles.join('\n')}\n</read-files>`;
  if (s.modifiedFiles.length > 0) text += `\n\n<modified-files>\n${s.modifiedFiles.join('\n')}\n</modified-files>`;
  return text;
}
