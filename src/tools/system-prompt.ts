// The system prompt: who the agent is, which tools it has and how to use them, skills; then,
// after the per-session marker, project context files, the date and the working folder. The
// first part is the same for every session of one agent definition, so a fan-out shares one
// cached prefix (tools + that part); what differs per instance comes after it.
import type { AgentTool } from '../agent/types.js';
import { joinSystemPrompt } from '../ai/system-prompt-parts.js';
import type { ContextFile } from './context-files.js';
import { formatSkillsForPrompt, type Skill } from './skills.js';

export type PromptTool = Pick<AgentTool, 'name' | 'description' | 'promptSnippet' | 'promptGuidelines'>;

export interface BuildSystemPromptOptions {
  cwd: string;
  /** The workspace the tools keep to, when it is wider than cwd (a repository root above it). */
  workspaceRoot?: string;
  /** The active tools. */
  tools: PromptTool[];
  /** Replaces the default body (identity, tool list, guidelines); the rest is still appended. */
  customPrompt?: string;
  /** Added after the body. */
  appendPrompt?: string;
  skills?: Skill[];
  contextFiles?: ContextFile[];
  /** Defaults to today; a string is used as written. */
  date?: Date | string;
}

const IDENTITY =
  'You are an expert coding assistant running inside orchestrate, an agent runtime. ' +
  'You help with software tasks by reading files, running commands, editing code and writing new files with the tools below.';

function oneLine(tool: PromptTool): string {
  const line = tool.promptSnippet ?? tool.description.split('\n')[0] ?? '';
  return line.trim();
}

function guidelines(tools: PromptTool[]): string[] {
  const has = (name: string): boolean => tools.some((t) => t.name === name);
  const out: string[] = [];
  const explorers = ['grep', 'find', 'ls'].filter(has);
  if (has('bash') && explorers.length === 0) out.push('Use bash for exploring files (ls, grep, find).');
  if (explorers.length > 0)
    out.push(`Prefer ${explorers.join('/')} over bash for exploring files: they are faster and respect .gitignore.`);
  if (has('read') && has('edit')) out.push('Read a file before editing it. Use read to look at files, not cat or sed.');
  if (has('edit'))
    out.push(
      "edit's oldText must match the file exactly, including whitespace; include enough surrounding lines to make it unique.",
    );
  if (has('write')) out.push('Use write only for new files or complete rewrites.');
  if (has('edit') || has('write'))
    out.push(
      'When you summarize your work, describe the changes in plain text; do not print files with cat to show them.',
    );
  const extra = [
    ...tools.flatMap((t) => t.promptGuidelines ?? []),
    'Be concise in your responses.',
    'Show file paths clearly when you work with files.',
  ];
  for (const g of extra) if (!out.includes(g)) out.push(g);
  return out;
}

function formatDate(date: Date | string | undefined): string {
  if (typeof date === 'string') return date;
  const d = date ?? new Date();
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export function buildSystemPrompt(options: BuildSystemPromptOptions): string {
  const sections: string[] = [];
  if (options.customPrompt !== undefined) {
    sections.push(options.customPrompt.trim());
  } else {
    const toolLines = options.tools.length > 0 ? options.tools.map((t) => `- ${t.name}: ${oneLine(t)}`) : ['(none)'];
    sections.push(IDENTITY);
    sections.push(['Available tools:', ...toolLines].join('\n'));
    sections.push('Other tools may be available as well; use them as their descriptions say.');
    sections.push(['Guidelines:', ...guidelines(options.tools).map((g) => `- ${g}`)].join('\n'));
  }
  if (options.appendPrompt?.trim()) sections.push(options.appendPrompt.trim());

  // Skills are loaded with read, so they are only listed when read is available.
  if (options.tools.some((t) => t.name === 'read')) {
    const block = formatSkillsForPrompt(options.skills ?? []);
    if (block) sections.push(block);
  }

  const session: string[] = [];
  const files = options.contextFiles ?? [];
  if (files.length > 0) {
    const parts = ['# Project Context', 'Project-specific instructions and guidelines:'];
    for (const f of files) parts.push(`## ${f.path}\n\n${f.content.trim()}`);
    session.push(parts.join('\n\n'));
  }
  const root = options.workspaceRoot?.replace(/\\/g, '/');
  const cwd = options.cwd.replace(/\\/g, '/');
  session.push(
    `Current date: ${formatDate(options.date)}\nCurrent working directory: ${cwd}${root !== undefined && root !== cwd ? `\nWorkspace root: ${root}` : ''}`,
  );
  return joinSystemPrompt(sections.join('\n\n'), session.join('\n\n'));
}
