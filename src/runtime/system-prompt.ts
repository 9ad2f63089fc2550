// System prompt assembly for a session: the tools layer builds the text; this file gathers its
// inputs (skills from the default and given folders, context files from cwd upward).
import { join } from 'node:path';
import type { AnyAgentTool } from '../agent/types.js';
import { loadContextFiles, type ContextFile } from '../tools/context-files.js';
import { defaultSkillRoots, loadSkills, type Skill, type SkillDiagnostic, type SkillRoot } from '../tools/skills.js';
import { buildSystemPrompt } from '../tools/system-prompt.js';

export interface AssembleSystemPromptOptions {
  cwd: string;
  /** The tools' workspace root when wider than cwd; named in the per-session part of the prompt. */
  workspaceRoot?: string;
  /** Settings home: user skills live in <home>/skills, a user-wide AGENTS.md in <home>. */
  home: string;
  tools: readonly AnyAgentTool[];
  systemPrompt?: string;
  appendSystemPrompt?: string;
  skillsDirs?: string[];
  defaultSkills?: boolean;
  contextFiles?: boolean;
}

export interface AssembledSystemPrompt {
  prompt: string;
  skills: Skill[];
  contextFiles: ContextFile[];
  diagnostics: SkillDiagnostic[];
}

export function assembleSystemPrompt(o: AssembleSystemPromptOptions): AssembledSystemPrompt {
  const roots: SkillRoot[] = [];
  if (o.defaultSkills !== false) {
    // The user root lives under the orchestrate home (ORCHESTRATE_HOME), not the raw home folder.
    const [, project] = defaultSkillRoots(o.cwd);
    roots.push({ path: join(o.home, 'skills'), source: 'user' });
    if (project) roots.push(project);
  }
  for (const dir of o.skillsDirs ?? []) roots.push({ path: dir, source: 'path' });
  const { skills, diagnostics } = roots.length > 0 ? loadSkills(roots) : { skills: [], diagnostics: [] };
  const contextFiles = o.contextFiles === false ? [] : loadContextFiles({ cwd: o.cwd, globalDir: o.home });
  const prompt = buildSystemPrompt({
    cwd: o.cwd,
    ...(o.workspaceRoot !== undefined ? { workspaceRoot: o.workspaceRoot } : {}),
    tools: [...o.tools],
    customPrompt: o.systemPrompt,
    appendPrompt: o.appendSystemPrompt,
    skills,
    contextFiles,
  });
  return { prompt, skills, contextFiles, diagnostics };
}
