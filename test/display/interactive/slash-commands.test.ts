import { describe, expect, it } from 'vitest';
import { helpText, parseInput, SLASH_COMMANDS } from '../../../src/display/interactive/slash-commands.js';

describe('slash commands', () => {
  it('parses built-in commands with their arguments', () => {
    expect(parseInput('/compact keep the file list')).toEqual({
      kind: 'command',
      name: 'compact',
      args: 'keep the file list',
    });
    expect(parseInput('  /tree ')).toEqual({ kind: 'command', name: 'tree', args: '' });
    expect(parseInput('/model claude-haiku-4-5')).toEqual({ kind: 'command', name: 'model', args: 'claude-haiku-4-5' });
    expect(parseInput('/compact first line\nsecond line')).toEqual({
      kind: 'command',
      name: 'compact',
      args: 'first line\nsecond line',
    });
  });

  it('other /names are left to the session (extension commands, skills)', () => {
    expect(parseInput('/deploy now')).toEqual({ kind: 'other-command', name: 'deploy', args: 'now' });
    expect(parseInput('/skill:review src')).toEqual({ kind: 'other-command', name: 'skill:review', args: 'src' });
  });

  it('plain text is a prompt; // escapes a leading slash; a path is not a command', () => {
    expect(parseInput('hello')).toEqual({ kind: 'prompt', text: 'hello' });
    expect(parseInput('//tree is a word')).toEqual({ kind: 'prompt', text: '/tree is a word' });
    expect(parseInput('/usr/bin is a folder')).toEqual({ kind: 'prompt', text: '/usr/bin is a folder' });
    expect(parseInput('   ')).toEqual({ kind: 'empty' });
  });

  it('/help lists every command and fits 80 columns', () => {
    const text = helpText();
    for (const c of SLASH_COMMANDS) expect(text).toContain(`/${c.name}`);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});
