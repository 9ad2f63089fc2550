// The agent makes a real change in a real git repository with read, edit and bash (scripted
// turns), the session file holds the whole exchange, and --continue picks it up again.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, runAgentCli } from '../runtime/helpers/agent-cli.js';

let root: string;
let repo: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'orch-git-'));
  repo = join(root, 'repo');
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
  execFileSync('git', ['init', '-q', repo]);
  git('config', 'user.email', 'agent@example.com');
  git('config', 'user.name', 'Test Agent');
  git('config', 'commit.gpgsign', 'false');
  writeFileSync(join(repo, 'README.md'), '# Demo\n\nHello wrold\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'Initial commit');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Entry {
  type: string;
  message?: { role: string; content: unknown; isError?: boolean; toolName?: string };
}

function readSession(file: string): Entry[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Entry);
}

describe('orchestrate agent on a git repository', () => {
  it('fixes a file with read/edit/bash, commits it, and --continue resumes the same session', async () => {
    const session = join(root, 'session.jsonl');
    const env = { ORCHESTRATE_HOME: join(root, 'home') };
    const common = [
      '--script',
      join(FIXTURES, 'git-fix.yaml'),
      '--cwd',
      repo,
      '--tools',
      'read,edit,bash',
      '--session',
      session,
    ];

    const first = await runAgentCli([...common, 'Fix the typo in README.md and commit it'], { env });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('Fixed the typo in README.md and committed it.\n');

    // The change is real: file content and git history.
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('# Demo\n\nHello world\n');
    const log = execFileSync('git', ['log', '--format=%s'], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
    expect(log).toEqual(['Fix typo in README', 'Initial commit']);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' })).toBe('');

    // The session file holds the whole exchange, in order, with successful tool results.
    const entries = readSession(session);
    expect(entries[0]!.type).toBe('session');
    const messages = entries.filter((e) => e.type === 'message').map((e) => e.message!);
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
      'toolResult',
      'assistant',
      'toolResult',
      'assistant',
    ]);
    expect(messages.filter((m) => m.role === 'toolResult').map((m) => [m.toolName, m.isError])).toEqual([
      ['read', false],
      ['edit', false],
      ['bash', false],
    ]);
    expect(JSON.stringify(messages[6]!.content)).toContain('Fix typo in README');

    // --continue: the next prompt's context holds the previous exchange. The scripted provider
    // picks its turn by the number of replies in the context, so the fifth turn only comes back
    // if all four earlier replies were sent again.
    const again = await runAgentCli([...common, '--continue', '--mode', 'json', 'What did you change?'], { env });
    expect(again.code).toBe(0);
    const lines = again.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            id?: string;
            message?: { role: string; content: { type: string; text?: string }[] };
          },
      );
    expect(lines[0]!.id).toBe((entries[0] as unknown as { id: string }).id);
    const answer = lines.filter((l) => l.type === 'message_end' && l.message?.role === 'assistant').pop()!;
    expect(answer.message!.content[0]!.text).toBe(
      "Earlier I fixed the typo 'wrold' in README.md and committed the change.",
    );

    const after = readSession(session);
    expect(after.filter((e) => e.type === 'session')).toHaveLength(1);
    expect(
      after
        .filter((e) => e.type === 'message')
        .map((e) => e.message!.role)
        .slice(-2),
    ).toEqual(['user', 'assistant']);
    expect(after.filter((e) => e.type === 'message')).toHaveLength(10);
  });
});
