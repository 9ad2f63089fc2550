// Impossible paths in a recipe (a NUL byte in cwd:, writes:, an input default, a for_each item; an
// overlong folder name) are validate errors with file:line:col, and a run reports them the same
// way before any run folder exists (it used to create its folder and then fail every task).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { impossiblePath } from '../../src/recipe/path-checks.js';
import { hasStackTrace, runCli } from '../cli/run-cli.js';
import { tempDir } from '../tools/harness.js';

const RECIPE = `name: nul
provider: scripted
script: s.yaml
inputs:
  dir: { type: string, default: "x\\0y" }
agents:
  coder: { tools: [bash] }
tasks:
  - id: a
    agent: coder
    cwd: "a\\0b"
    writes: ["src/\\0*.ts"]
    prompt: hi
  - id: b
    agent: coder
    for_each: ["ok", "bad\\0item"]
    cwd: "\${{ inputs.dir }}"
    prompt: hi \${{ item }}
  - id: c
    agent: coder
    cwd: "${'n'.repeat(300)}"
    prompt: hi
`;

function recipe(): { dir: string; file: string } {
  const dir = tempDir('nul-');
  mkdirSync(join(dir, 'a'));
  writeFileSync(join(dir, 's.yaml'), '- text: done\n');
  writeFileSync(join(dir, 'r.yaml'), RECIPE);
  return { dir, file: join(dir, 'r.yaml') };
}

describe('impossible paths in a recipe', () => {
  it('are validate errors with file:line:col and a hint', async () => {
    const { dir, file } = recipe();
    const r = await runCli(['validate', file], { cwd: dir });
    expect(r.code).toBe(2);
    const text = r.stdout + r.stderr;
    expect(text).toMatch(/r\.yaml:5:\d+: the default of input "dir" contains a NUL byte/);
    expect(text).toMatch(/r\.yaml:11:\d+: task "a" cwd contains a NUL byte/);
    expect(text).toMatch(/r\.yaml:12:\d+: task "a" writes\[0\] contains a NUL byte/);
    expect(text).toMatch(/r\.yaml:16:\d+: task "b" for_each item 2 contains a NUL byte/);
    expect(text).toMatch(/r\.yaml:21:\d+: task "c" cwd has a folder or file name of 300 bytes/);
    expect(text).toContain('hint:');
    expect(hasStackTrace(text)).toBe(false);
  });

  it('stop a run before its run folder exists', async () => {
    const { dir, file } = recipe();
    const runs = join(dir, 'runs');
    const r = await runCli([file, '--run-dir', runs], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/r\.yaml:11:\d+: task "a" cwd contains a NUL byte/);
    expect(existsSync(runs)).toBe(false);
  });

  it('accepts ordinary paths', () => {
    expect(impossiblePath('src/app', true)).toBeUndefined();
    expect(impossiblePath('${{ inputs.dir }}/x', true)).toBeUndefined();
    expect(impossiblePath('a\0b', false)?.offset).toBe(1);
  });
});
