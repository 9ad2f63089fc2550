import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  plainSystemPrompt,
  splitSystemPrompt,
  SYSTEM_PROMPT_SESSION_MARKER,
} from '../../src/ai/system-prompt-parts.js';
import { createCodingTools, READ_ONLY_TOOL_NAMES } from '../../src/tools/coding-tools.js';
import { loadContextFiles } from '../../src/tools/context-files.js';
import type { Skill } from '../../src/tools/skills.js';
import { buildSystemPrompt } from '../../src/tools/system-prompt.js';
import { tempDir } from './harness.js';

const skill: Skill = {
  name: 'deploy',
  description: 'Deploy the app',
  filePath: '/s/deploy/SKILL.md',
  baseDir: '/s/deploy',
  source: 'user',
  disableModelInvocation: false,
};

describe('loadContextFiles', () => {
  it('walks from cwd up, outermost first, preferring AGENTS.md over CLAUDE.md', () => {
    const root = tempDir();
    mkdirSync(join(root, 'a/b/c'), { recursive: true });
    writeFileSync(join(root, 'AGENTS.md'), 'root rules');
    writeFileSync(join(root, 'a/CLAUDE.md'), 'a rules');
    writeFileSync(join(root, 'a/b/AGENTS.md'), 'b agents');
    writeFileSync(join(root, 'a/b/CLAUDE.md'), 'b claude (not used)');
    const files = loadContextFiles({ cwd: join(root, 'a/b/c'), stopDir: root });
    expect(files).toEqual([
      { path: join(root, 'AGENTS.md'), content: 'root rules' },
      { path: join(root, 'a/CLAUDE.md'), content: 'a rules' },
      { path: join(root, 'a/b/AGENTS.md'), content: 'b agents' },
    ]);
  });

  it('stops at the stop folder and puts a global file first', () => {
    const root = tempDir();
    const global = tempDir('global-');
    mkdirSync(join(root, 'p'));
    writeFileSync(join(root, 'AGENTS.md'), 'above stop');
    writeFileSync(join(root, 'p/AGENTS.md'), 'project');
    writeFileSync(join(global, 'AGENTS.md'), 'mine');
    const files = loadContextFiles({ cwd: join(root, 'p'), stopDir: join(root, 'p'), globalDir: global });
    expect(files.map((f) => f.content)).toEqual(['mine', 'project']);
  });
});

describe('buildSystemPrompt', () => {
  const cwd = '/work/project';

  it('lists the active tools with guidelines that depend on them, then date and cwd', () => {
    const tools = createCodingTools({ cwd });
    const prompt = buildSystemPrompt({ cwd, tools, date: '2025-01-02' });
    expect(prompt).toContain(
      'Available tools:\n- read: Read file contents (text, or images as attachments)\n- bash: Execute bash commands',
    );
    expect(prompt).toContain('- Use bash for exploring files (ls, grep, find).');
    expect(prompt).toContain('- Read a file before editing it.');
    expect(prompt).toContain("- edit's oldText must match the file exactly");
    expect(prompt).toContain('- Use write only for new files or complete rewrites.');
    expect(prompt.endsWith('Current date: 2025-01-02\nCurrent working directory: /work/project')).toBe(true);
  });

  it('adapts guidelines to a read-only set and adds tool-contributed ones once', () => {
    const tools = [
      ...createCodingTools({ cwd }, READ_ONLY_TOOL_NAMES),
      {
        name: 'deploy',
        description: 'Deploy now\nmore text',
        promptGuidelines: ['Deploy only from main.', 'Be concise in your responses.'],
      },
    ];
    const prompt = buildSystemPrompt({ cwd, tools });
    expect(prompt).toContain('- Prefer grep/find/ls over bash for exploring files');
    expect(prompt).not.toContain('Read a file before editing it');
    expect(prompt).not.toContain('Use write only');
    expect(prompt).toContain('- deploy: Deploy now\n');
    expect(prompt).toContain('- Deploy only from main.');
    expect(prompt.split('Be concise in your responses.')).toHaveLength(2);
  });

  it('adds context files under Project Context and skills only when read is active', () => {
    const contextFiles = [{ path: '/work/AGENTS.md', content: 'Use tabs.' }];
    const withRead = buildSystemPrompt({
      cwd,
      tools: createCodingTools({ cwd }, ['read']),
      contextFiles,
      skills: [skill],
    });
    expect(withRead).toContain(
      '# Project Context\n\nProject-specific instructions and guidelines:\n\n## /work/AGENTS.md\n\nUse tabs.',
    );
    expect(withRead).toContain('<location>/s/deploy/SKILL.md</location>');
    // Skills belong to the agent (shared part), context files to the folder (per-session part).
    expect(withRead.indexOf('<available_skills>')).toBeLessThan(withRead.indexOf(SYSTEM_PROMPT_SESSION_MARKER));
    expect(withRead.indexOf(SYSTEM_PROMPT_SESSION_MARKER)).toBeLessThan(withRead.indexOf('# Project Context'));
    const noRead = buildSystemPrompt({ cwd, tools: createCodingTools({ cwd }, ['bash']), skills: [skill] });
    expect(noRead).not.toContain('available_skills');
  });

  it('lets a custom prompt replace the body but still appends context, skills, date and cwd', () => {
    const prompt = buildSystemPrompt({
      cwd,
      tools: createCodingTools({ cwd }),
      customPrompt: 'You are a reviewer.',
      appendPrompt: 'Extra rule.',
      contextFiles: [{ path: '/w/AGENTS.md', content: 'ctx' }],
      skills: [skill],
      date: '2025-05-06',
    });
    expect(prompt.startsWith('You are a reviewer.\n\nExtra rule.\n\n')).toBe(true);
    expect(splitSystemPrompt(prompt).session.startsWith('# Project Context')).toBe(true);
    expect(prompt).not.toContain('Available tools:');
    expect(prompt).not.toContain('Guidelines:');
    expect(prompt).toContain('<name>deploy</name>');
    expect(prompt).toMatch(/Current date: 2025-05-06\nCurrent working directory: \/work\/project$/);
  });

  it('puts what differs per session (context files, date, cwd) after the marker: sessions of one agent share the first part byte for byte', () => {
    const tools = createCodingTools({ cwd });
    const a = buildSystemPrompt({
      cwd: '/repos/a',
      tools,
      appendPrompt: 'You rename loggers.',
      skills: [skill],
      contextFiles: [{ path: '/repos/a/AGENTS.md', content: 'A rules' }],
      date: '2025-01-01',
    });
    const b = buildSystemPrompt({
      cwd: '/repos/b',
      tools,
      appendPrompt: 'You rename loggers.',
      skills: [skill],
      date: '2025-01-02',
    });
    expect(a).not.toBe(b);
    expect(splitSystemPrompt(a).shared).toBe(splitSystemPrompt(b).shared);
    expect(splitSystemPrompt(a).shared).toContain('You rename loggers.');
    expect(splitSystemPrompt(a).shared).not.toMatch(/repos|2025/);
    expect(splitSystemPrompt(a).session).toBe(
      '# Project Context\n\nProject-specific instructions and guidelines:\n\n## /repos/a/AGENTS.md\n\nA rules\n\nCurrent date: 2025-01-01\nCurrent working directory: /repos/a',
    );
    // The model never reads the marker: providers send the parts as blocks or as plain text.
    expect(plainSystemPrompt(b)).not.toContain('orchestrate: per-session');
    expect(plainSystemPrompt(b)).toMatch(
      /You rename loggers\.\n\n[\s\S]*\n\nCurrent date: 2025-01-02\nCurrent working directory: \/repos\/b$/,
    );
  });

  it('formats a Date as YYYY-MM-DD', () => {
    expect(buildSystemPrompt({ cwd, tools: [], date: new Date(2024, 1, 9) })).toContain('Current date: 2024-02-09');
  });
});

describe('a workspace wider than the working directory', () => {
  it('is named in the per-session part of the prompt, so the bash description stays one text for every instance (their shared cache prefix)', async () => {
    const { createBashTool } = await import('../../src/tools/bash.js');
    const make = (root: string) => createBashTool({ cwd: join(root, 'pkg'), root, sandbox: { mode: 'workspace' } });
    const [a, b] = [make('/repos/one'), make('/repos/two')];
    try {
      expect(a.description).toBe(b.description);
      expect(a.description).not.toContain('/repos/');
      const prompt = buildSystemPrompt({ cwd: '/repos/one/pkg', workspaceRoot: '/repos/one', tools: [a] });
      const { shared, session } = splitSystemPrompt(prompt);
      expect(session).toContain('Current working directory: /repos/one/pkg\nWorkspace root: /repos/one');
      expect(shared).not.toContain('/repos/');
      // The same folder: no second line.
      expect(buildSystemPrompt({ cwd: '/repos/one', workspaceRoot: '/repos/one', tools: [] })).not.toContain(
        'Workspace root',
      );
    } finally {
      a.dispose();
      b.dispose();
    }
  });
});
