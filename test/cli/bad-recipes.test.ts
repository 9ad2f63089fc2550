// The corpus of broken recipes in test/fixtures/recipes/bad: each file has a sibling .expected
// listing `file:line:col: message` fragments (and hint fragments) that the CLI must print, and
// optionally `args:` for the command line (default: validate {file}).
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from './run-cli.js';

const BAD = resolve(import.meta.dirname, '../fixtures/recipes/bad');
const cases = readdirSync(BAD)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((file) => {
    const lines = readFileSync(join(BAD, file.replace(/\.yaml$/, '.expected')), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const argsLine = lines.find((l) => l.startsWith('args: '));
    const argv = (argsLine ? argsLine.slice(6) : 'validate {file}').split(' ').map((a) => (a === '{file}' ? file : a));
    const expected = lines.filter((l) => !l.startsWith('args: ')).map((l) => l.replaceAll('{file}', file));
    return { file, argv, expected };
  });

describe('broken recipes', () => {
  it('the corpus holds at least 30 cases, each with an expected position', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
    for (const c of cases)
      expect(
        c.expected.some((l) => /:\d+:\d+: /.test(l)),
        c.file,
      ).toBe(true);
  });

  it.each(cases)(
    '$file: reports the expected file:line:col and exits 2 without a stack trace',
    async ({ argv, expected }) => {
      const { code, stdout, stderr } = await runCli(argv, { cwd: BAD });
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(hasStackTrace(stderr)).toBe(false);
      for (const line of expected) {
        if (line.startsWith('hint: ')) {
          const fragment = line.slice(6);
          expect(
            stderr.split('\n').some((l) => l.trimStart().startsWith('hint: ') && l.includes(fragment)),
            `expected a hint with: ${fragment}\ngot:\n${stderr}`,
          ).toBe(true);
        } else
          expect(
            stderr.split('\n').some((l) => l.startsWith(line)),
            `expected a line starting with:\n${line}\ngot:\n${stderr}`,
          ).toBe(true);
      }
    },
  );

  it('validate --json reports the same positions as data', async () => {
    const validateCases = cases.filter((c) => c.argv[0] === 'validate');
    for (const c of validateCases.slice(0, 12)) {
      const { code, stdout } = await runCli([...c.argv, '--json'], { cwd: BAD });
      expect(code).toBe(2);
      const out = JSON.parse(stdout) as {
        ok: boolean;
        problems: { file: string; line: number; col: number; message: string }[];
      };
      expect(out.ok).toBe(false);
      const first = /^(.*):(\d+):(\d+): (.*)$/.exec(c.expected.find((l) => !l.startsWith('hint: '))!)!;
      expect(
        out.problems.some(
          (p) =>
            p.file === first[1] &&
            p.line === Number(first[2]) &&
            p.col === Number(first[3]) &&
            p.message.startsWith(first[4]!),
        ),
        c.file,
      ).toBe(true);
    }
  });
});
