// Bad input of every kind gives a clear message and never a crash:
// - the broken-recipe corpus and seeded text mutations of every recipe (truncation, stray
//   characters, dropped or doubled lines) through the CLI: exit 0 or 2, never a stack trace;
// - malformed RPC input to `orchestrate agent --mode rpc` (garbage, partial JSON, huge lines,
//   wrong types, unknown commands, random bytes): one error response each, the process serves on;
// - malformed tool arguments from the model (wrong types, missing fields, JSON in strings, huge
//   strings): an error tool result with actionable text (or a repaired call), the run goes on;
// - a session file with garbage lines and a torn last line: it opens, continues, and warns.
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { exited, printSummary, ROOT, spawnCli } from './helpers/reliability-fixtures.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

const temp: string[] = [];
afterAll(() => {
  for (const d of temp.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-badin-'));
  temp.push(d);
  return d;
}

const BAD = join(ROOT, 'test/fixtures/recipes/bad');
const hasStack = (text: string) => /\n\s+at .+[:(]\d+/.test(text);

async function cli(argv: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    cwd,
    env: { PATH: process.env.PATH, ORCHESTRATE_HOME: join(cwd, '.home') },
    isTTY: false,
  });
  return { code, out, err };
}

/** One random text mutation: the kinds of damage an editor, a bad merge or a copy-paste does. */
function mutateText(text: string, random: () => number): string {
  const lines = text.split('\n');
  const at = (n: number) => Math.floor(random() * n);
  const junk = [
    ':',
    '- ',
    '{',
    '}',
    '[',
    '"',
    "'",
    '\t',
    '  ',
    '${{',
    '}}',
    '&x',
    '*x',
    '!!int',
    '#',
    '\u0000',
    '\uFEFF',
    'é',
    '\r',
    '|',
    '>',
    '%',
  ];
  switch (at(6)) {
    case 0:
      return text.slice(0, at(text.length));
    case 1: {
      const i = at(text.length);
      return text.slice(0, i) + junk[at(junk.length)] + text.slice(i);
    }
    case 2:
      lines.splice(at(lines.length), 1);
      return lines.join('\n');
    case 3: {
      const i = at(lines.length);
      lines.splice(i, 0, lines[i] ?? '');
      return lines.join('\n');
    }
    case 4: {
      const i = at(lines.length);
      lines[i] = ' '.repeat(at(5)) + (lines[i] ?? '').trimStart();
      return lines.join('\n');
    }
    default: {
      const i = at(text.length);
      return text.slice(0, i) + text.slice(i + 1 + at(20));
    }
  }
}

describe('bad recipes through the CLI', { timeout: 120_000 }, () => {
  it('the corpus and 200 seeded mutations of every recipe: exit 0 or 2 with a message, never a stack trace', async () => {
    const corpus = readdirSync(BAD)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(corpus.length).toBeGreaterThanOrEqual(50);
    let corpusRuns = 0;
    for (const file of corpus) {
      // A case may name its own command line (default: validate <file>), as in test/cli/bad-recipes.
      const argsLine = readFileSync(join(BAD, file.replace(/\.yaml$/, '.expected')), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('args: '));
      const argv = (argsLine ? argsLine.slice(6) : 'validate {file}')
        .split(' ')
        .map((a) => (a === '{file}' ? file : a));
      const r = await cli(argv, BAD);
      expect(r.code, file).toBe(2);
      expect(hasStack(r.err), `${file}\n${r.err}`).toBe(false);
      expect(r.err).not.toMatch(/internal error/);
      corpusRuns++;
    }

    // Mutations of the shipped examples (with their script and agent files) and of the corpus.
    const work = tempDir();
    for (const ex of ['fan-out', 'planner-worker', 'batch-refactor'])
      cpSync(join(ROOT, 'recipes', ex), join(work, ex), { recursive: true });
    const sources = [
      ...['fan-out', 'planner-worker', 'batch-refactor'].map((ex) => join(work, ex, 'recipe.yaml')),
      ...corpus.slice(0, 20).map((f) => join(BAD, f)),
    ];
    const random = seededRandom(4242);
    const codes: Record<number, number> = {};
    for (let n = 0; n < 200; n++) {
      const src = sources[n % sources.length]!;
      const dir = src.startsWith(work) ? join(src, '..') : work;
      const target = join(dir, `mutant-${n}.yaml`);
      let text = readFileSync(src, 'utf8');
      for (let k = 1 + Math.floor(random() * 2); k > 0; k--) text = mutateText(text, random);
      writeFileSync(target, text);
      const args = n % 2 === 0 ? ['validate', target] : [target, '--dry-run'];
      const r = await cli(args, dir);
      codes[r.code] = (codes[r.code] ?? 0) + 1;
      expect([0, 2], `${args.join(' ')} exited ${r.code}\n${text}\n${r.err}`).toContain(r.code);
      expect(hasStack(r.err) || /internal error/.test(r.err), `${args.join(' ')}\n${text}\n${r.err}`).toBe(false);
      if (r.code === 2) expect(r.err.trim().length, `${args.join(' ')} failed without a message`).toBeGreaterThan(0);
    }

    // And the real program (exit codes set by the entry, not only by main()).
    for (const file of corpus.slice(0, 2)) {
      const r = await exited(spawnCli(['validate', file], {}, BAD));
      expect(r.code).toBe(2);
      expect(hasStack(r.stderr)).toBe(false);
    }
    printSummary('bad-input/recipes', {
      corpus: corpusRuns,
      mutations: 200,
      exit0: codes[0] ?? 0,
      exit2: codes[2] ?? 0,
      crashes: 0,
      real_process_runs: 2,
    });
  });
});

describe('malformed RPC input (real process)', { timeout: 120_000 }, () => {
  it('every bad line gets one error response with the id it could read, and the process keeps serving', async () => {
    const random = seededRandom(99);
    const bytes = (n: number) =>
      Array.from({ length: n }, () => String.fromCharCode(1 + Math.floor(random() * 0x2fff)))
        .join('')
        .replace(/\n/g, ' ');
    const bad: string[] = [
      'garbage',
      '{',
      '{"id":"p1","type":"prompt","message":"unterminated',
      '{"id":"p2","type":"prompt"}',
      '{"id":"p3","type":"prompt","message":42}',
      '{"id":"p4","type":"prompt","message":["a"]}',
      '{"id":"p5","type":"prompt","message":"x","streamingBehavior":"sideways"}',
      '{"id":"n1","type":"navigate"}',
      '{"id":"t1","type":"set_thinking_level","level":"extreme"}',
      '{"id":"m1","type":"set_model","modelId":7}',
      '{"id":"u1","type":"teleport"}',
      '{"id":"u2","type":""}',
      '{"id":"u3","type":null}',
      '{"id":"u4"}',
      '{"id":{"nested":true},"type":"get_state"}',
      '{"id":"pp","type":"__proto__"}',
      '{"id":"pc","type":"constructor"}',
      '{"__proto__":{"polluted":1},"id":"pr","type":"toString"}',
      '[]',
      '[{"id":"arr","type":"get_state"}]',
      'null',
      '42',
      '"get_state"',
      'true',
      `{"id":"big","type":"prompt","message":42,"pad":"${'x'.repeat(4_000_000)}"}`,
      '{"id":"dup","type":"get_state","type":"warp"}',
      ...Array.from({ length: 10 }, () => bytes(200)),
    ];
    const dir = tempDir();
    const child = spawn(
      process.execPath,
      [
        ...CLI_NODE_ARGS,
        'agent',
        '--mode',
        'rpc',
        '--no-session',
        '--provider',
        'scripted',
        '--script',
        join(ROOT, 'test/fixtures/agent/rpc.yaml'),
        '--cwd',
        dir,
      ],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, ORCHESTRATE_HOME: join(dir, '.home') },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const done = exited(child);
    child.stdin!.on('error', () => undefined); // a crashed server shows in the exit code, not as EPIPE here
    for (const line of bad) child.stdin!.write(`${line}\n`);
    // Odd but valid: a deeply nested extra field is ignored.
    child.stdin!.write(`{"id":"deep","type":"get_state","x":${'['.repeat(50_000)}${']'.repeat(50_000)}}\n`);
    child.stdin!.write('{"id":"ok1","type":"prompt","message":"still there?"}\n');
    // Wait for the prompt's run to end, then ask for state and close stdin.
    let seen = '';
    child.stdout!.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('"agent_end"') && !seen.includes('"ok2"') && !child.stdin!.writableEnded) {
        child.stdin!.write('{"id":"ok2","type":"get_last_assistant_text"}\n');
        child.stdin!.end();
      }
    });
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(hasStack(r.stderr)).toBe(false);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            id?: unknown;
            success?: boolean;
            error?: string;
            data?: unknown;
            command?: string;
          },
      );
    const responses = lines.filter((l) => l.type === 'response');
    const errors = responses.filter((l) => l.success === false);
    // One error per bad line (the "dup" line's last type wins and is unknown), nothing else failed.
    expect(errors).toHaveLength(bad.length);
    for (const e of errors) expect(String(e.error).length, JSON.stringify(e).slice(0, 200)).toBeGreaterThan(10);
    for (const id of ['p1', 'p2', 'p3', 'u1', 'big', 'dup'])
      expect(
        errors.some((e) => e.id === id),
        id,
      ).toBe(true);
    expect(String(errors.find((e) => e.id === 'p3')?.error)).toMatch(/message/);
    expect(String(errors.find((e) => e.id === 'u1')?.error)).toMatch(/Valid commands/);
    expect(responses.find((l) => l.id === 'deep')).toMatchObject({ success: true });
    expect(responses.find((l) => l.id === 'ok1')).toMatchObject({ success: true });
    expect(responses.find((l) => l.id === 'ok2')).toMatchObject({ success: true, data: { text: 'first answer' } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    printSummary('bad-input/rpc', {
      bad_lines: bad.length,
      error_responses: errors.length,
      crashes: 0,
      served_after: 2,
    });
  });
});

describe('malformed tool arguments from the model', { timeout: 120_000 }, () => {
  it('wrong types, missing fields, JSON in strings and huge strings: error results that say how to fix, and the run goes on', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.txt'), 'hello\n');
    const calls: [string, Record<string, unknown>][] = [
      ['read', { path: 42 }],
      ['read', {}],
      ['read', { path: 'a.txt', offset: 'five' }],
      ['edit', { path: 'a.txt', edits: '[{"oldText":"hello","newText":"bye"}]' }],
      ['edit', { path: 'a.txt', edits: [{ oldText: 5 }] }],
      ['write', { path: 'b.txt' }],
      ['write', { path: ['x'], content: 'y'.repeat(1_000_000) }],
      ['bash', { command: ['ls'] }],
      ['bash', { command: 'echo hi', timeout: 'soon' }],
      ['ls', { path: null }],
      ['find', { pattern: 12 }],
      ['grep', { pattern: '(' }],
      ['read', { path: 'y'.repeat(100_000) }],
      ['nosuchtool', { a: 1 }],
      ['write', { path: 'big.txt', content: 'z'.repeat(2_000_000) }],
    ];
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({ turns: [...calls.map(([name, args]) => ({ tools: [{ name, args }] })), { text: 'survived' }] }),
    );
    const r = await cli(
      [
        'agent',
        '--mode',
        'json',
        '--no-session',
        '--provider',
        'scripted',
        '--script',
        script,
        '--cwd',
        dir,
        '--tools',
        'read,bash,edit,write,ls,grep,find',
        'go',
      ],
      dir,
    );
    expect(r.code, r.err).toBe(0);
    const events = r.out
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            toolName?: string;
            isError?: boolean;
            result?: { content: { text?: string }[] };
            message?: { role: string; content: { type: string; text?: string }[] };
          },
      );
    const ends = events.filter((e) => e.type === 'tool_execution_end');
    expect(ends).toHaveLength(calls.length);
    const texts = ends.map((e) => (e.result?.content ?? []).map((c) => c.text ?? '').join(''));
    let errorsWithFix = 0;
    ends.forEach((e, i) => {
      const [name] = calls[i]!;
      const text = texts[i]!;
      // Bounded: a huge bad argument is never echoed back whole.
      expect(text.length, name).toBeLessThan(64_000);
      if (e.isError) {
        errorsWithFix++;
        expect(text.length, `${name}: empty error`).toBeGreaterThan(10);
      }
    });
    const at = (i: number) => texts[i]!;
    expect(at(0)).toMatch(/path: expected string, received number 42[\s\S]*Call "read" again/);
    expect(at(1)).toMatch(/path: expected string, received undefined \(missing\)/);
    expect(ends[3]!.isError).toBe(false); // JSON in a string: repaired
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('bye\n');
    expect(at(6)).toMatch(/path: expected string, received array/);
    expect(at(6)).toMatch(/truncated/);
    expect(at(13)).toMatch(/not found\. Available tools/);
    expect(ends[14]!.isError).toBe(false);
    const last = events.filter((e) => e.type === 'message_end' && e.message?.role === 'assistant').at(-1);
    expect(last?.message?.content.map((c) => c.text ?? '').join('')).toBe('survived');
    printSummary('bad-input/tool-args', {
      bad_calls: calls.length,
      error_results: errorsWithFix,
      repaired: calls.length - errorsWithFix,
      runs_continued: 1,
      crashes: 0,
    });
  });
});

describe('a session file with garbage lines', { timeout: 120_000 }, () => {
  it('opens and continues with warnings; lines already there are kept as they were', async () => {
    const dir = tempDir();
    const file = join(dir, 's.jsonl');
    const first = await cli(
      [
        'agent',
        '--provider',
        'scripted',
        '--script',
        join(ROOT, 'test/fixtures/agent/rpc.yaml'),
        '--cwd',
        dir,
        '--session',
        file,
        'first question',
      ],
      dir,
    );
    expect(first.code, first.err).toBe(0);
    const good = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    // Garbage between the entries, a line of binary junk, and a torn last line.
    const damaged = `${[
      good[0],
      'not json at all',
      ...good.slice(1, 2),
      '{"type":"message","id":',
      '\u0000\u0001\u0002',
      ...good.slice(2),
    ].join('\n')}\n{"type":"message","id":"torn`;
    writeFileSync(file, damaged);
    const r = await cli(
      [
        'agent',
        '--provider',
        'scripted',
        '--script',
        join(ROOT, 'test/fixtures/agent/rpc.yaml'),
        '--cwd',
        dir,
        '--session',
        file,
        '--continue',
        'second question',
      ],
      dir,
    );
    expect(r.code, r.err).toBe(0);
    expect(hasStack(r.err)).toBe(false);
    expect(r.err).toMatch(/line/i);
    expect(r.out).toBe('second answer\n');
    const after = readFileSync(file, 'utf8');
    expect(after.startsWith(damaged)).toBe(true);
    // Once more: still opens, still continues.
    appendFileSync(file, 'trailing junk\n');
    const again = await cli(
      [
        'agent',
        '--provider',
        'scripted',
        '--script',
        join(ROOT, 'test/fixtures/agent/rpc.yaml'),
        '--cwd',
        dir,
        '--session',
        file,
        '--continue',
        'third question',
      ],
      dir,
    );
    expect(again.code, again.err).toBe(0);
    expect(again.out).toBe('third answer\n');
    printSummary('bad-input/session', {
      garbage_lines: 5,
      opened: 2,
      continued: 2,
      warnings: r.err.split('\n').filter(Boolean).length,
      entries_lost: 0,
    });
  });
});
