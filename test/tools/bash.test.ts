import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentToolResult } from '../../src/agent/types.js';
import { createBashTool, type BashToolDetails } from '../../src/tools/bash.js';
import { errorOf, runTool, tempDir, textOf } from './harness.js';

/** Alive = signalable and not a zombie waiting for a reaper (PID 1 here may not reap). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

// A hang bound only (a loaded machine is slow to spawn and reap).
async function waitFor(cond: () => boolean, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

function setup(extra: Parameters<typeof createBashTool>[0] extends infer O ? Partial<O> : never = {}) {
  const dir = tempDir();
  const tmp = tempDir('bash-out-');
  return { dir, tmp, tool: createBashTool({ cwd: dir, tempDir: tmp, ...extra }) };
}

describe('bash', () => {
  it('returns merged stdout and stderr of a successful command', async () => {
    const { tool } = setup();
    const r = await runTool(tool, { command: 'echo out; echo err >&2; echo done' });
    expect(textOf(r).split('\n').sort()).toEqual(['done', 'err', 'out']);
    expect((r.details as BashToolDetails).exitCode).toBe(0);
  });

  it("never runs the user's ~/.bashrc (bash sources it for -c when stdin is a socket, as node's pipes are)", async () => {
    const home = tempDir('bash-home-');
    writeFileSync(join(home, '.bashrc'), 'export RC_MARK=sourced\necho rc-ran\n');
    // SHLVL unset is how a service or CI starts us: bash's heuristic then applies.
    const { tool } = setup({ env: { HOME: home, SHLVL: '' } });
    expect(textOf(await runTool(tool, { command: 'echo "mark=${RC_MARK:-none}"' }))).toBe('mark=none');
  });

  it('says (no output) for a silent command', async () => {
    const { tool } = setup();
    expect(textOf(await runTool(tool, { command: 'true' }))).toBe('(no output)');
  });

  it('fails with the output and the exit code when the command fails', async () => {
    const { tool } = setup();
    expect(await errorOf(tool, { command: 'echo before; exit 3' })).toBe('before\n\nCommand exited with code 3');
  });

  it('stops a command at its timeout and says so', async () => {
    const { tool } = setup();
    const started = Date.now();
    // Far apart: the command would sleep 120 s, a loaded machine may take seconds to spawn and kill.
    const msg = await errorOf(tool, { command: 'echo started; sleep 120', timeout: 0.3 });
    expect(msg).toBe('started\n\nCommand timed out after 0.3 seconds');
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 90_000);

  it('abort kills the whole process group, including a sleeping grandchild', async () => {
    // Unconfined: the pid the command prints must be a pid of this namespace (test/tools/sandbox.test.ts covers the sandbox).
    const { dir, tool } = setup({ sandbox: { mode: 'none' } });
    const ac = new AbortController();
    const pidFile = join(dir, 'grandchild.pid');
    const pending = errorOf(tool, { command: `sh -c 'sleep 120 & echo $! > ${pidFile}; wait'` }, { signal: ac.signal });
    expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '')).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(isAlive(pid)).toBe(true);
    ac.abort();
    expect(await pending).toBe('Command aborted');
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
  });

  it('keeps the tail, counts lines over the full stream and saves the full output to a temp file', async () => {
    const { tool, tmp } = setup();
    const r = await runTool(tool, { command: 'seq 1 100000' });
    const text = textOf(r);
    const details = r.details as BashToolDetails;
    expect(details.fullOutputPath).toMatch(/orchestrate-bash-[0-9a-f]{16}\.log$/);
    expect(details.fullOutputPath?.startsWith(tmp)).toBe(true);
    expect(text.startsWith('98001\n')).toBe(true);
    expect(text).toContain(`100000\n\n[Showing lines 98001-100000 of 100000. Full output: ${details.fullOutputPath}]`);
    expect(details.truncation).toMatchObject({ totalLines: 100000, outputLines: 2000, truncatedBy: 'lines' });
    const full = readFileSync(details.fullOutputPath as string, 'utf8');
    expect(full.length).toBe(588895); // bytes of `seq 1 100000` output
    expect(full.startsWith('1\n2\n3\n')).toBe(true);
    expect(full.endsWith('99999\n100000\n')).toBe(true);
  });

  it('keeps secrets out of the full-output temp file, however the output streams them', async () => {
    const secret = 'tok_live_7f3a9c1e5b2d4f6a';
    const { tool } = setup({ secrets: [{ name: 'DEPLOY_TOKEN', value: secret }] });
    // 3000 lines, each with the token, printed in pieces so it also arrives split across chunks.
    const r = await runTool(tool, {
      command: `for i in $(seq 1 3000); do printf 'line %s tok_live_7f3a'  "$i"; printf '9c1e5b2d4f6a end\\n'; done`,
    });
    const details = r.details as BashToolDetails;
    const full = readFileSync(details.fullOutputPath as string, 'utf8');
    expect(full).not.toContain('tok_live');
    expect(full.split('\n').filter(Boolean)).toHaveLength(3000);
    expect(full.split('\n')[2999]).toBe('line 3000 [REDACTED:DEPLOY_TOKEN] end');
  });

  it('reports a byte-limited tail with line numbers of the full output', async () => {
    const { tool } = setup();
    // 3000 lines of 100 bytes: 512 fit in 50 KB.
    const r = await runTool(tool, { command: `for i in $(seq 1 3000); do printf '%099d\\n' $i; done` });
    const details = r.details as BashToolDetails;
    expect(textOf(r)).toContain(
      `[Showing lines 2489-3000 of 3000 (50.0KB limit). Full output: ${details.fullOutputPath}]`,
    );
    expect(readFileSync(details.fullOutputPath as string).length).toBe(300000);
  });

  it('creates no temp file when the output fits', async () => {
    const { tool, tmp } = setup();
    const r = await runTool(tool, { command: 'seq 1 2000' });
    expect(textOf(r).split('\n')).toHaveLength(2000);
    expect(r.details).toEqual({ exitCode: 0 });
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('shows the end of a single huge line on a character boundary', async () => {
    const { tool } = setup();
    // 30000 x "中😀" = 210000 bytes on one line, emitted in many chunks.
    const r = await runTool(tool, { command: `node -e "process.stdout.write('中😀'.repeat(30000))"` });
    const text = textOf(r);
    const body = text.slice(0, text.indexOf('\n\n['));
    expect(body).not.toContain('\uFFFD');
    expect(/^(中😀)+$|^😀(中😀)+$/.test(body)).toBe(true);
    expect(text).toMatch(/\[Showing last 50\.0KB of line 1 \(line is 205\.1KB\)\. Full output: .*\.log\]$/);
  });

  it('never garbles multibyte characters split across chunks of two streams', async () => {
    const { tool } = setup();
    // Each stream is valid UTF-8 on its own, written in 7-byte pieces that split characters,
    // alternating between stdout and stderr.
    const script =
      `const o=Buffer.from('漢字😀'.repeat(3000)),e=Buffer.from('テスト🎉'.repeat(3000));` +
      `for(let i=0;i<Math.max(o.length,e.length);i+=7){process.stdout.write(o.subarray(i,i+7));process.stderr.write(e.subarray(i,i+7))}`;
    const r = await runTool(tool, { command: `node -e "${script}"` });
    const text = textOf(r);
    expect(text.length).toBeGreaterThan(1000);
    expect(text).not.toContain('\uFFFD');
  });

  it('sends partial results while the command runs', async () => {
    const { tool } = setup({ updateIntervalMs: 0 });
    const updates: AgentToolResult[] = [];
    await runTool(tool, { command: 'echo one; sleep 0.2; echo two' }, { onUpdate: (u) => updates.push(u) });
    expect(updates.some((u) => textOf(u) === 'one')).toBe(true);
    expect(textOf(updates[updates.length - 1] as AgentToolResult)).toBe('one\ntwo');
  });

  it('fails clearly when the working directory does not exist', async () => {
    const dir = tempDir();
    const tool = createBashTool({ cwd: join(dir, 'missing') });
    expect(await errorOf(tool, { command: 'echo hi' })).toBe(
      `Working directory does not exist: ${join(dir, 'missing')}\nCannot execute bash commands.`,
    );
  });

  it('runs the command prefix before the command', async () => {
    const { tool } = setup({ commandPrefix: 'export GREETING=hello' });
    expect(textOf(await runTool(tool, { command: 'echo $GREETING' }))).toBe('hello');
  });

  it('does not wait for a background process that keeps the pipes open', async () => {
    const { tool } = setup();
    const started = Date.now();
    // Far apart: the background sleep holds the pipes 60 s, a loaded machine may take seconds to spawn.
    const r = await runTool(tool, { command: 'sleep 60 & echo started' });
    expect(textOf(r)).toBe('started');
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 90_000);
});

describe('bash policy', () => {
  it('refuses a command matching a deny rule and names the rule', async () => {
    const { tool, dir } = setup({ policy: { deny: ['git push*', '/rm\\s+-rf/'] } });
    expect(await errorOf(tool, { command: 'git push origin main' })).toMatch(/deny rule "git push\*"/);
    expect(await errorOf(tool, { command: `echo hi && rm -rf ${dir}` })).toMatch(/deny rule "\/rm\\s\+-rf\/"/);
    expect(textOf(await runTool(tool, { command: 'echo fine' }))).toBe('fine');
  });

  it('with allow rules, every command in the line must match one', async () => {
    const { tool } = setup({ policy: { allow: ['echo *', 'pwd'] } });
    expect(textOf(await runTool(tool, { command: 'echo a; pwd | echo b' }))).toBe('a\nb');
    expect(await errorOf(tool, { command: 'echo a && touch x' })).toMatch(
      /"touch x" matches none of the allow rules \("echo \*", "pwd"\)/,
    );
    expect(await errorOf(tool, { command: 'echo $(touch y)' })).toMatch(/"touch y" matches none/);
  });
});
