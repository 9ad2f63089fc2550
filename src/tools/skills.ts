// Skills: folders holding a SKILL.md (frontmatter name + description, then instructions).
// Only name, description and path go into the system prompt; the model reads the file with
// the read tool when a task matches (progressive disclosure).
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { TOOL_DEFAULTS } from './defaults.js';
import { parseFrontmatter } from './frontmatter.js';
import { isDirectory } from '../util/path-kind.js';

export interface Skill {
  name: string;
  /** One line: when to use the skill. */
  description: string;
  /** Absolute path of the skill file. */
  filePath: string;
  /** The skill's folder (relative references in the file resolve against it). */
  baseDir: string;
  /** Where it was found ("user", "project", "path", ...). */
  source: string;
  /** Listed nowhere for the model; only explicit `/skill:name` invokes it. */
  disableModelInvocation: boolean;
}

export interface SkillDiagnostic {
  level: 'warning' | 'error';
  path: string;
  message: string;
}

export interface SkillRoot {
  /** A folder to search, or one skill file. */
  path: string;
  source: string;
}

export interface LoadSkillsResult {
  skills: Skill[];
  diagnostics: SkillDiagnostic[];
}

/** The default places: the user's skills, then the project's. */
export function defaultSkillRoots(cwd: string, home: string = homedir()): SkillRoot[] {
  return [
    { path: join(home, TOOL_DEFAULTS.userSkillsDir), source: 'user' },
    { path: join(resolve(cwd), TOOL_DEFAULTS.projectSkillsDir), source: 'project' },
  ];
}

/** Skill files under one root: a SKILL.md ends the descent; *.md directly in the root count too. */
function findSkillFiles(dir: string, isRoot: boolean, seenDirs: Set<string>, out: string[]): void {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return;
  }
  if (seenDirs.has(real)) return; // symlink loops
  seenDirs.add(real);
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  if (names.includes(TOOL_DEFAULTS.skillFileName)) {
    out.push(join(dir, TOOL_DEFAULTS.skillFileName));
    return;
  }
  for (const name of names) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const path = join(dir, name);
    if (isDirectory(path)) findSkillFiles(path, false, seenDirs, out);
    else if (isRoot && name.endsWith('.md')) out.push(path);
  }
}

function validateName(name: string, file: string, diagnostics: SkillDiagnostic[]): void {
  const warn = (message: string): void => {
    diagnostics.push({ level: 'warning', path: file, message });
  };
  if (basename(file) === TOOL_DEFAULTS.skillFileName && name !== basename(dirname(file))) {
    warn(`skill name "${name}" differs from its folder name "${basename(dirname(file))}"`);
  }
  if (name.length > TOOL_DEFAULTS.skillNameMaxLength)
    warn(`skill name "${name}" is longer than ${TOOL_DEFAULTS.skillNameMaxLength} characters`);
  if (!/^[a-z0-9-]+$/.test(name)) warn(`skill name "${name}" should use only lowercase letters, digits and hyphens`);
  if (/^-|-$|--/.test(name)) warn(`skill name "${name}" should not start or end with a hyphen or contain "--"`);
}

function loadSkillFile(file: string, source: string, diagnostics: SkillDiagnostic[]): Skill | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    diagnostics.push({
      level: 'error',
      path: file,
      message: `cannot read skill file: ${err instanceof Error ? err.message : String(err)}`,
    });
    return undefined;
  }
  const fm = parseFrontmatter(text);
  if (fm.error) {
    diagnostics.push({ level: 'error', path: file, message: `skill not loaded: ${fm.error}` });
    return undefined;
  }
  const rawDescription = fm.data.description;
  if (typeof rawDescription !== 'string' || rawDescription.trim() === '') {
    diagnostics.push({
      level: 'error',
      path: file,
      message: 'skill not loaded: its frontmatter has no description (add "description: when to use this skill")',
    });
    return undefined;
  }
  const description = rawDescription.trim().replace(/\s+/g, ' ');
  const fallbackName = basename(file) === TOOL_DEFAULTS.skillFileName ? basename(dirname(file)) : basename(file, '.md');
  const name = typeof fm.data.name === 'string' && fm.data.name.trim() !== '' ? fm.data.name.trim() : fallbackName;
  validateName(name, file, diagnostics);
  if (description.length > TOOL_DEFAULTS.skillDescriptionMaxLength) {
    diagnostics.push({
      level: 'warning',
      path: file,
      message: `skill description is longer than ${TOOL_DEFAULTS.skillDescriptionMaxLength} characters`,
    });
  }
  return {
    name,
    description,
    filePath: resolve(file),
    baseDir: dirname(resolve(file)),
    source,
    disableModelInvocation: fm.data['disable-model-invocation'] === true,
  };
}

/**
 * Loads skills from the roots in order. Missing roots are skipped; on a name collision the
 * first one wins (with a diagnostic); the same file reached twice through links loads once.
 */
export function loadSkills(roots: SkillRoot[]): LoadSkillsResult {
  const skills: Skill[] = [];
  const diagnostics: SkillDiagnostic[] = [];
  const byName = new Map<string, Skill>();
  const realFiles = new Set<string>();
  for (const root of roots) {
    const files: string[] = [];
    if (isDirectory(root.path)) findSkillFiles(root.path, true, new Set(), files);
    else if (root.path.endsWith('.md')) {
      try {
        statSync(root.path);
        files.push(root.path);
      } catch {
        diagnostics.push({ level: 'error', path: root.path, message: 'skill file not found' });
      }
    }
    for (const file of files) {
      let real = file;
      try {
        real = realpathSync(file);
      } catch {
        // unreadable; loadSkillFile reports it
      }
      if (realFiles.has(real)) continue;
      realFiles.add(real);
      const skill = loadSkillFile(file, root.source, diagnostics);
      if (!skill) continue;
      const existing = byName.get(skill.name);
      if (existing) {
        diagnostics.push({
          level: 'warning',
          path: file,
          message: `skill "${skill.name}" is already defined by ${existing.filePath}; this one is ignored`,
        });
        continue;
      }
      byName.set(skill.name, skill);
      skills.push(skill);
    }
  }
  return { skills, diagnostics };
}

function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** The system prompt block listing skills (empty when none is model-invocable). */
export function formatSkillsForPrompt(skills: Skill[]): string {
  const visible = skills.filter((s) => !s.disableModelInvocation);
  if (visible.length === 0) return '';
  const lines = [
    'The following skills hold specialized instructions for specific tasks.',
    "When a task matches a skill's description, load its file with the read tool before starting.",
    "Resolve relative paths mentioned in a skill file against the skill's folder.",
    '',
    '<available_skills>',
  ];
  for (const s of visible) {
    lines.push('  <skill>');
    lines.push(`    <name>${escapeXml(s.name)}</name>`);
    lines.push(`    <description>${escapeXml(s.description)}</description>`);
    lines.push(`    <location>${escapeXml(s.filePath)}</location>`);
    lines.push('  </skill>');
  }
  lines.push('</available_skills>');
  return lines.join('\n');
}

/**
 * Expands `/skill:<name> [args]` typed by a user into the skill's instructions followed by the
 * arguments. Returns undefined when the input is not such a command or the skill is unknown.
 */
export function expandSkillCommand(input: string, skills: Skill[]): string | undefined {
  const m = /^\/skill:(\S+)(?:\s+([\s\S]*))?$/.exec(input.trim());
  if (!m) return undefined;
  const skill = skills.find((s) => s.name === m[1]);
  if (!skill) return undefined;
  let body: string;
  try {
    body = parseFrontmatter(readFileSync(skill.filePath, 'utf8')).body.trim();
  } catch {
    return undefined;
  }
  const block = `<skill name="${escapeXml(skill.name)}" location="${escapeXml(skill.filePath)}">\nReferences are relative to ${skill.baseDir}.\n\n${body}\n</skill>`;
  const args = m[2]?.trim();
  return args ? `${block}\n\n${args}` : block;
}
