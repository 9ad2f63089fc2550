import { describe, expect, it } from 'vitest';
import { parseAgentFile } from '../../src/recipe/agent-file.js';

describe('agent files', () => {
  it('reads name, description, tools (comma list or YAML list), model and the body', () => {
    const r = parseAgentFile(
      '---\nname: w\ndescription: works\ntools: read, bash\nmodel: claude-haiku-4-5\ncolor: blue\n---\n\nYou work.\n',
      'w.md',
    );
    expect(r).toEqual({
      ok: true,
      agent: {
        name: 'w',
        description: 'works',
        tools: ['read', 'bash'],
        model: 'claude-haiku-4-5',
        modelPosition: { line: 5, col: 8 },
        body: 'You work.',
        toolPositions: [
          { name: 'read', line: 4, col: 8 },
          { name: 'bash', line: 4, col: 14 },
        ],
        notes: [],
      },
    });
    const list = parseAgentFile('---\ntools:\n  - read\n  - grep\n---\nbody', 'l.md');
    expect(list.ok && list.agent.toolPositions).toEqual([
      { name: 'read', line: 3, col: 5 },
      { name: 'grep', line: 4, col: 5 },
    ]);
  });

  it("a hook warning of the frontmatter is worded from the parser's data, even when the file's path holds a ':'", () => {
    const text =
      '---\nname: h\nhooks:\n  Notification:\n    - hooks:\n        - { type: command, command: echo }\n---\nbody\n';
    for (const file of ['agents/h.md', 'C:/team:a/agents/h.md']) {
      const r = parseAgentFile(text, file);
      expect(r.ok && r.agent.notes.map((n) => n.message)).toEqual([
        expect.stringMatching(/^frontmatter hooks\.Notification: this event is not fired by orchestrate; /),
      ]);
    }
  });

  it('a file without frontmatter is all body', () => {
    expect(parseAgentFile('Just a prompt.\n', 'p.md')).toEqual({
      ok: true,
      agent: { body: 'Just a prompt.', toolPositions: [], notes: [] },
    });
  });

  it('frontmatter problems point into the markdown file', () => {
    const r = parseAgentFile('---\nname: [oops\n---\nbody', 'bad.md');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.problems[0]).toMatchObject({
        file: 'bad.md',
        code: 'agent_file',
        message: expect.stringContaining('frontmatter: invalid YAML'),
      });
    const typed = parseAgentFile('---\nname: 5\ntools: { a: 1 }\n---\nbody', 'typed.md');
    expect(typed.ok ? [] : typed.problems.map((p) => `${p.line}:${p.col} ${p.message}`)).toEqual([
      '2:7 frontmatter "name" must be text',
      '3:8 frontmatter "tools" must be a comma-separated list or a YAML list',
    ]);
  });
});
