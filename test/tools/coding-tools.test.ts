import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_TOOL_NAMES,
  createCodingTools,
  createTool,
  READ_ONLY_TOOL_NAMES,
} from '../../src/tools/coding-tools.js';
import { errorOf, runTool, tempDir, textOf } from './harness.js';

describe('createCodingTools', () => {
  it('returns read, bash, edit, write by default and the read-only set on request', () => {
    expect(createCodingTools({ cwd: '/tmp' }).map((t) => t.name)).toEqual(['read', 'bash', 'edit', 'write']);
    expect(createCodingTools({ cwd: '/tmp' }, READ_ONLY_TOOL_NAMES).map((t) => t.name)).toEqual([
      'read',
      'grep',
      'find',
      'ls',
    ]);
  });

  it('refuses an unknown tool name, listing the built-ins', () => {
    expect(() => createTool('rm', { cwd: '/tmp' })).toThrow(
      'Unknown tool "rm". Built-in tools: read, bash, edit, write, grep, find, ls.',
    );
  });

  it('gives every tool a JSON Schema the model can use', () => {
    for (const tool of createCodingTools({ cwd: '/tmp' }, BUILTIN_TOOL_NAMES)) {
      const schema = z.toJSONSchema(tool.parameters, { io: 'input' }) as { type?: string; properties?: object };
      expect(schema.type).toBe('object');
      expect(Object.keys(schema.properties ?? {}).length).toBeGreaterThan(0);
      expect(tool.description.length).toBeGreaterThan(20);
    }
  });

  it('shares the workspace and the bash policy across the set', async () => {
    const dir = tempDir();
    const [read, bash] = createCodingTools({ cwd: dir, bash: { policy: { deny: ['curl *'] } } }, ['read', 'bash']);
    expect(await errorOf(read!, { path: '/etc/hostname' })).toMatch(/outside the workspace/);
    expect(await errorOf(bash!, { command: 'curl http://example.com' })).toMatch(/deny rule "curl \*"/);
    expect(textOf(await runTool(bash!, { command: 'pwd' }))).toBe(dir);
  });
});
