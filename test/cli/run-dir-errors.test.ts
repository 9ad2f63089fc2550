// --run-dir that cannot hold runs (a file, a path inside a file, a folder that cannot be created or
// written) is a usage error for every command that takes it: exit 2, a message naming the path and
// saying how to fix it, no stack trace. Tests run as root in CI, where permission bits do not stop
// writes: /sys (sysfs) is the folder nobody may create in or write to.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-run-dir-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, 'recipe.yaml'),
  `name: tiny
provider: scripted
script: script.yaml
tasks:
  - id: hello
    prompt: "Say hello"
`,
);
writeFileSync(join(dir, 'script.yaml'), 'turns:\n  - text: "hello"\n');
const aFile = join(dir, 'afile');
writeFileSync(aFile, 'not a folder\n');

/** /sys is a folder on Linux that even root cannot write or create folders in. */
const sysfs = process.platform === 'linux' && existsSync('/sys') && statSync('/sys').isDirectory();

const COMMANDS: { name: string; argv: string[] }[] = [
  { name: 'run', argv: ['recipe.yaml'] },
  { name: 'resume', argv: ['resume', 'some-run'] },
  { name: 'runs', argv: ['runs'] },
  { name: 'show', argv: ['show', 'some-run'] },
  { name: 'report', argv: ['report', 'some-run'] },
];

const BAD: { name: string; path: string; says: RegExp }[] = [
  { name: 'a file', path: aFile, says: /is a file, not a folder/ },
  { name: 'a path inside a file', path: join(aFile, 'runs'), says: /afile is a file/ },
];

async function expectUsageError(argv: string[], path: string, says: RegExp): Promise<void> {
  const r = await runCli([...argv, '--run-dir', path], { cwd: dir });
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toContain(path);
  expect(r.stderr).toMatch(says);
  expect(r.stderr).toMatch(/hint: pass --run-dir/);
  expect(r.stderr).not.toMatch(/internal error/);
  expect(hasStackTrace(r.stderr + r.stdout)).toBe(false);
}

describe('--run-dir that cannot hold runs', { timeout: 60_000 }, () => {
  for (const c of COMMANDS) {
    for (const bad of BAD) {
      it(`${c.name} --run-dir <${bad.name}>: exit 2 naming the path, no stack trace`, async () => {
        await expectUsageError(c.argv, bad.path, bad.says);
      });
    }
  }

  it.skipIf(!sysfs)(
    'run --run-dir <a folder that cannot be created>: exit 2 naming the path, nothing recorded',
    async () => {
      await expectUsageError(['recipe.yaml'], '/sys/orchestrate-test-runs', /cannot be created/);
      expect(existsSync('/sys/orchestrate-test-runs')).toBe(false);
    },
  );

  it.skipIf(!sysfs)('run --run-dir <a folder that cannot be written>: exit 2 naming the path', async () => {
    await expectUsageError(['recipe.yaml'], '/sys', /cannot be written/);
  });

  it('the file given as --run-dir is left as it was, and a good --run-dir still works', async () => {
    await runCli(['recipe.yaml', '--run-dir', aFile], { cwd: dir });
    expect(statSync(aFile).isFile()).toBe(true);
    const ok = await runCli(['recipe.yaml', '--run-dir', join(dir, 'runs')], { cwd: dir });
    expect(ok.code, ok.stderr).toBe(0);
    const listed = await runCli(['runs', '--run-dir', join(dir, 'runs')], { cwd: dir });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/tiny/);
  });
});
