// Whether runs can be recorded in a folder (run-dir-access.ts): a folder that cannot be made is a
// message naming it, never a hang or a stack trace; missing parents are made.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runsDirWriteProblem } from '../../src/run/run-dir-access.js';

describe('runsDirWriteProblem', () => {
  it('makes the missing folders of a runs folder, level by level', () => {
    const root = mkdtempSync(join(tmpdir(), 'run-dir-'));
    const dir = join(root, 'a', 'b', 'runs');
    expect(runsDirWriteProblem(dir)).toBeUndefined();
    expect(existsSync(dir)).toBe(true);
    expect(runsDirWriteProblem(dir)).toBeUndefined(); // there already: fine
  });

  it('a file in the way is named', () => {
    const root = mkdtempSync(join(tmpdir(), 'run-dir-'));
    writeFileSync(join(root, 'f'), '');
    expect(runsDirWriteProblem(join(root, 'f', 'runs'))).toMatch(/cannot be a folder: .*\/f is a file/);
  });

  it.runIf(existsSync('/proc/self'))(
    'a runs folder under /proc is refused with a message (recursive mkdir never returns there)',
    () => {
      // In a process of its own: the old code never returned, and a hang here must not stall the suite.
      const module = pathToFileURL(join(import.meta.dirname, '../../src/run/run-dir-access.ts')).href;
      const code = `const { runsDirWriteProblem } = await import(${JSON.stringify(module)});
process.stdout.write(String(runsDirWriteProblem('/proc/orchestrate-test/runs')));`;
      const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
        encoding: 'utf8',
        timeout: 60_000, // a hang bound only
      });
      expect(r.error, 'the check returned').toBeUndefined();
      expect(r.stdout).toMatch(/^cannot record runs in \/proc\/orchestrate-test\/runs: the folder cannot be created/);
    },
  );
});
