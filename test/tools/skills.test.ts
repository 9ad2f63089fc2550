import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFrontmatter } from '../../src/tools/frontmatter.js';
import { defaultSkillRoots, expandSkillCommand, formatSkillsForPrompt, loadSkills } from '../../src/tools/skills.js';
import { makeTree } from './fixtures-tree.js';

const skill = (name: string, description?: string, extra = ''): string =>
  `---\nname: ${name}\n${description !== undefined ? `description: ${description}\n` : ''}${extra}---\n# ${name}\nBody of ${name}.\n`;

describe('parseFrontmatter', () => {
  it('reads the YAML block and the body, tolerating a BOM and CRLF', () => {
    expect(parseFrontmatter('\uFEFF---\r\nname: x\r\nlist: [1, 2]\r\n---\r\nbody\r\n')).toEqual({
      data: { name: 'x', list: [1, 2] },
      body: 'body\n',
    });
  });

  it('returns the whole text as body without frontmatter', () => {
    expect(parseFrontmatter('# Title\n')).toEqual({ data: {}, body: '# Title\n' });
  });

  it('reports unclosed and invalid frontmatter', () => {
    expect(parseFrontmatter('---\nname: x\n').error).toMatch(/never closed/);
    expect(parseFrontmatter('---\nname: [x\n---\n').error).toMatch(/invalid YAML/);
    expect(parseFrontmatter('---\n- a\n---\n').error).toMatch(/must be a YAML mapping/);
  });
});

describe('loadSkills', () => {
  it('finds SKILL.md folders at any depth and root-level .md files', () => {
    const root = makeTree({
      'pdf-tools/SKILL.md': skill('pdf-tools', 'Work with PDF files'),
      'pdf-tools/nested/SKILL.md': skill('nested', 'never loaded: the parent is a skill'),
      'group/deploy/SKILL.md': skill('deploy', 'Deploy the app'),
      'quick.md': skill('quick', 'A root-level skill file'),
      '.hidden/SKILL.md': skill('hidden', 'skipped'),
      'node_modules/x/SKILL.md': skill('x', 'skipped'),
    });
    const { skills, diagnostics } = loadSkills([{ path: root, source: 'project' }]);
    expect(skills.map((s) => s.name).sort()).toEqual(['deploy', 'pdf-tools', 'quick']);
    const pdf = skills.find((s) => s.name === 'pdf-tools');
    expect(pdf).toMatchObject({
      description: 'Work with PDF files',
      filePath: join(root, 'pdf-tools/SKILL.md'),
      baseDir: join(root, 'pdf-tools'),
      source: 'project',
    });
    expect(diagnostics).toEqual([]);
  });

  it('drops a skill without a description, with a diagnostic', () => {
    const root = makeTree({ 'nodesc/SKILL.md': skill('nodesc') });
    const { skills, diagnostics } = loadSkills([{ path: root, source: 'user' }]);
    expect(skills).toEqual([]);
    expect(diagnostics).toEqual([
      { level: 'error', path: join(root, 'nodesc/SKILL.md'), message: expect.stringMatching(/no description/) },
    ]);
  });

  it('warns about names that break the naming rules but still loads them', () => {
    const root = makeTree({
      'Bad_Name/SKILL.md': skill('Bad_Name', 'ok'),
      'other/SKILL.md': skill('-x--y-', 'ok'),
      'long/SKILL.md': skill('a'.repeat(70), 'ok'),
    });
    const { skills, diagnostics } = loadSkills([{ path: root, source: 'user' }]);
    expect(skills).toHaveLength(3);
    const messages = diagnostics.map((d) => `${d.level}: ${d.message}`);
    expect(messages).toContain('warning: skill name "Bad_Name" should use only lowercase letters, digits and hyphens');
    expect(messages).toContain('warning: skill name "-x--y-" differs from its folder name "other"');
    expect(messages).toContain('warning: skill name "-x--y-" should not start or end with a hyphen or contain "--"');
    expect(messages.some((m) => m.includes('longer than 64'))).toBe(true);
  });

  it('keeps the first of two skills with the same name and dedupes symlinked copies silently', () => {
    const user = makeTree({ 'fmt/SKILL.md': skill('fmt', 'user version') });
    const project = makeTree({ 'fmt/SKILL.md': skill('fmt', 'project version') });
    symlinkSync(join(user, 'fmt'), join(user, 'fmt-link'));
    const { skills, diagnostics } = loadSkills([
      { path: user, source: 'user' },
      { path: project, source: 'project' },
    ]);
    expect(skills.map((s) => s.description)).toEqual(['user version']);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]?.message).toMatch(/already defined by/);
  });

  it('skips missing roots and names the default roots', () => {
    expect(loadSkills([{ path: '/definitely/not/here', source: 'user' }])).toEqual({ skills: [], diagnostics: [] });
    expect(defaultSkillRoots('/work/p', '/home/u')).toEqual([
      { path: '/home/u/.orchestrate/skills', source: 'user' },
      { path: '/work/p/.orchestrate/skills', source: 'project' },
    ]);
  });
});

describe('skills in prompts', () => {
  it('lists name, one-line description and absolute path, XML-escaped, hiding disabled skills', () => {
    const root = makeTree({
      'a/SKILL.md': skill('a', 'Use <this> & "that"\n  across lines'),
      'b/SKILL.md': skill('b', 'hidden one', 'disable-model-invocation: true\n'),
    });
    const { skills } = loadSkills([{ path: root, source: 'user' }]);
    const block = formatSkillsForPrompt(skills);
    expect(block).toContain(
      `<skill>\n    <name>a</name>\n    <description>Use &lt;this&gt; &amp; &quot;that&quot; across lines</description>\n    <location>${join(root, 'a/SKILL.md')}</location>\n  </skill>`,
    );
    expect(block).not.toContain('hidden one');
    expect(block).not.toContain('Body of a');
    expect(formatSkillsForPrompt(skills.filter((s) => s.name === 'b'))).toBe('');
  });

  it('expands /skill:name args into the body without frontmatter, then the args', () => {
    const root = makeTree({ 'deploy/SKILL.md': skill('deploy', 'Deploy') });
    const { skills } = loadSkills([{ path: root, source: 'user' }]);
    expect(expandSkillCommand('/skill:deploy to staging', skills)).toBe(
      `<skill name="deploy" location="${join(root, 'deploy/SKILL.md')}">\nReferences are relative to ${join(root, 'deploy')}.\n\n# deploy\nBody of deploy.\n</skill>\n\nto staging`,
    );
    expect(expandSkillCommand('/skill:unknown', skills)).toBeUndefined();
    expect(expandSkillCommand('plain text', skills)).toBeUndefined();
  });
});
