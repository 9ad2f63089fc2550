// `orchestrate agent` reads command hooks from the project's .claude/settings.json and from
// --hooks FILE, and the JSON mode shows each hook's run. The real CLI as a child process, the
// scripted model, HOME and ORCHESTRATE_HOME in temp folders (the developer's own ~/.claude is
// never read).
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgentCli } from './helpers/agent-cli.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'orch-hooks-cli-')));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(): { project: string; env: Record<string, string>; script: string } {
  const project = tempDir();
  const home = tempDir();
  const script = join(project, 'script.yaml');
  writeFileSync(
    script,
    '- tools:\n    - name: bash\n      args: { command: "rm -rf data" }\n- text: "could not delete"\n',
  );
  mkdirSync(join(project, 'data'));
  writeFileSync(join(project, 'data', 'keep.txt'), 'precious');
  return { project, script, env: { HOME: home, ORCHESTRATE_HOME: join(home, '.orchestrate') } };
}

describe('orchestrate agent hooks', () => {
  it("reads the project's .claude/settings.json: a PreToolUse hook blocks rm -rf and --mode json shows the run", async () => {
    const { project, env, script } = setup();
    mkdirSync(join(project, '.claude'));
    const hook = {
      type: 'command',
      command: `grep -q 'rm -rf' && { echo "no recursive deletes" >&2; exit 2; }; exit 0`,
    };
    writeFileSync(
      join(project, '.claude', 'settings.json'),
      JSON.stringify({ permissions: { allow: [] }, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [hook] }] } }),
    );
    const r = await runAgentCli(['--mode', 'json', '--cwd', project, '--script', script, '--no-session', 'clean up'], {
      env,
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(join(project, 'data', 'keep.txt'), 'utf8')).toBe('precious');
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const runs = events.filter((e) => e.type === 'hook_run');
    expect(runs).toMatchObject([
      {
        hookEvent: 'PreToolUse',
        toolName: 'bash',
        exitCode: 2,
        blocked: true,
        message: 'no recursive deletes',
        source: join(project, '.claude', 'settings.json'),
      },
    ]);
    const end = events.find((e) => e.type === 'tool_execution_end') as {
      isError: boolean;
      result: { content: { text: string }[] };
    };
    expect(end.isError).toBe(true);
    expect(end.result.content[0]!.text).toContain('no recursive deletes');
  });

  it('--hooks FILE adds hooks; a mistake in it is a usage error naming the file and the key', async () => {
    const { project, env, script } = setup();
    const good = join(project, 'hooks.json');
    writeFileSync(
      good,
      JSON.stringify({
        hooks: { PostToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: 'touch hook-ran' }] }] },
      }),
    );
    const ok = await runAgentCli(['--cwd', project, '--script', script, '--no-session', '--hooks', good, 'go'], {
      env,
      timeoutMs: 60_000,
    });
    expect(ok.code).toBe(0);
    expect(readFileSync(join(project, 'hook-ran'), 'utf8')).toBe('');

    const bad = join(project, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'x', timeout: '10s' }] }] },
      }),
    );
    const r = await runAgentCli(['--cwd', project, '--script', script, '--no-session', '--hooks', bad, 'go'], {
      env,
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${bad}: hooks.PreToolUse[0].hooks[0].timeout: must be a positive number of seconds, got "10s"`,
    );
    expect(r.stderr).not.toContain('    at ');
  });
});
