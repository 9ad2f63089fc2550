// The sandbox as a user meets it on the command line: `orchestrate doctor` says whether it works
// here (and why not), and `orchestrate agent` confines the model's bash unless --sandbox none;
// with bwrap missing the agent still works and warns once.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli } from '../runtime/helpers/agent-cli.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { hasStackTrace, runCli } from './run-cli.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

let home: string;
let outside: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'orch-cli-sandbox-'));
  // Outside /tmp, so it is visible (read-only) inside the sandbox rather than hidden by the private /tmp.
  outside = mkdtempSync('/var/tmp/orch-cli-sandbox-outside-');
});
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const KEY = 'sk-ant-doctor-test-0123456789';

/** A scripted model that runs two bash commands: one writing in the workspace, one outside it. */
function escapeScript(): string {
  const file = join(home, `escape-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    `- tools:
    - { name: bash, args: { command: "echo in > inside.txt" } }
- tools:
    - { name: bash, args: { command: "echo out > ${outside}/escaped.txt" } }
- text: "done"
`,
  );
  return file;
}

describe('orchestrate doctor', () => {
  it('reports every check, never prints the key, and exits 0 when the essential ones pass', async () => {
    const r = await runCli(['doctor'], { cwd: home, env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: KEY } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok {4}node /m);
    expect(r.stdout).toMatch(/^ok {4}git version/m);
    expect(r.stdout).toMatch(/ANTHROPIC_API_KEY is set/);
    expect(r.stdout).toMatch(/run folder .* is writable/);
    expect(r.stdout).toMatch(/all essential checks passed/);
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it('says why the sandbox does not work and how to install it (bwrap missing); that alone is not fatal', async () => {
    const r = await runCli(['doctor'], {
      cwd: home,
      env: { PATH: process.env.PATH, ORCHESTRATE_BWRAP: '/nonexistent/bwrap' },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^warn {2}sandbox does not work here.*not installed.*apt-get install -y bubblewrap/m);
    expect(r.stdout).toMatch(/^warn {2}ANTHROPIC_API_KEY is not set/m);
  });

  it('exits 1 when an essential check fails (a run folder that cannot be written)', async () => {
    const r = await runCli(['doctor', '--run-dir', '/proc/no-such-run-dir'], {
      cwd: home,
      env: { PATH: process.env.PATH },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}run folder \/proc\/no-such-run-dir is not writable/m);
    expect(r.stdout).toMatch(/1 essential check failed: run folder/);
    expect(hasStackTrace(r.stdout + r.stderr)).toBe(false);
  });

  it('a file where the run folder goes is named as a file, not as a permission problem', async () => {
    const file = join(home, 'runs-is-a-file');
    writeFileSync(file, 'not a folder\n');
    for (const runDir of [file, join(file, 'runs')]) {
      const r = await runCli(['doctor', '--run-dir', runDir], { cwd: home, env: { PATH: process.env.PATH } });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(
        /^FAIL {2}run folder .* cannot be a folder: .*is a file; pass --run-dir DIR with a folder/m,
      );
      expect(r.stdout).not.toContain('fix its permissions');
      expect(r.stdout).toContain(runDir === file ? 'it is a file' : `${file} is a file`);
    }
  });
});

describe('orchestrate agent --sandbox', () => {
  const env = (extra: Record<string, string | undefined> = {}) => ({
    ORCHESTRATE_HOME: home,
    ANTHROPIC_API_KEY: undefined,
    ...extra,
  });

  it.skipIf(skipWithoutBwrap('orchestrate agent sandbox test'))(
    "by default the model's bash can write in --cwd only",
    async () => {
      const cwd = mkdtempSync(join(home, 'ws-'));
      const r = await runAgentCli(['--script', escapeScript(), '--cwd', cwd, '--tools', 'bash', '--no-session', 'Go'], {
        env: env(),
        timeoutMs: 60_000,
      });
      expect(r.code).toBe(0);
      expect(existsSync(join(cwd, 'inside.txt'))).toBe(true);
      expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    },
  );

  it('--sandbox none lets it write outside, without a warning', async () => {
    const cwd = mkdtempSync(join(home, 'ws-'));
    const r = await runAgentCli(
      ['--script', escapeScript(), '--cwd', cwd, '--tools', 'bash', '--no-session', '--sandbox', 'none', 'Go'],
      { env: env(), timeoutMs: 60_000 },
    );
    expect(r.code).toBe(0);
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(true);
    expect(r.stderr).not.toMatch(/sandbox/i);
    rmSync(join(outside, 'escaped.txt'));
  });

  it('with bwrap missing, commands run unconfined and the run warns exactly once', async () => {
    const cwd = mkdtempSync(join(home, 'ws-'));
    const r = await runAgentCli(['--script', escapeScript(), '--cwd', cwd, '--tools', 'bash', '--no-session', 'Go'], {
      env: env({ ORCHESTRATE_BWRAP: '/nonexistent/bwrap' }),
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(0);
    expect(existsSync(join(cwd, 'inside.txt'))).toBe(true);
    expect(r.stderr.match(/WITHOUT a sandbox/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/orchestrate doctor/);
    rmSync(join(outside, 'escaped.txt'), { force: true });
  });

  it('rejects an unknown --sandbox mode with a usage error', async () => {
    const r = await runCli(['agent', '--sandbox', 'jail', 'hi'], { cwd: home, env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sandbox/);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });
});

/** `orchestrate <recipe>` in a child process (the coordinator probes bwrap with its own environment). */
function runRecipeCli(
  recipe: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const repo = resolve(import.meta.dirname, '../..');
  const dir = resolve(recipe, '..');
  const args = [...CLI_NODE_ARGS, recipe, '--run-dir', join(dir, 'runs')];
  const child = spawn(process.execPath, args, {
    cwd: repo,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Three agents (bash + verify) and a run: step, each trying to write outside its folder. */
function escapeRecipe(): string {
  const dir = mkdtempSync(join(home, 'recipe-'));
  mkdirSync(join(dir, 'work'));
  writeFileSync(
    join(dir, 'recipe.yaml'),
    `name: sandboxed
provider: scripted
script: script.yaml
agents:
  coder: { tools: [bash] }
tasks:
  - id: each
    agent: coder
    for_each: [a, b, c]
    cwd: work
    prompt: "Work on \${{ item }}"
    verify: ["echo ok > verified-\${{ item }}.txt"]
  - id: step
    needs: [each]
    cwd: work
    run: "echo step > step.txt; echo out > ${outside}/step-escaped.txt; true"
`,
  );
  writeFileSync(
    join(dir, 'script.yaml'),
    `conversations:
  - match: "Work on (a|b|c)"
    turns:
      - tools: [{ name: bash, args: { command: "echo {{match.1}} > {{match.1}}.txt; echo out > ${outside}/escaped-{{match.1}}.txt; ls -A ../runs > runs-seen-{{match.1}}.txt 2>&1; true" } }]
      - text: "done"
`,
  );
  return dir;
}

describe('orchestrate <recipe> and the sandbox', () => {
  it.skipIf(skipWithoutBwrap('orchestrate run sandbox test'))(
    'bash, verify and run: steps write in their folder only',
    async () => {
      const dir = escapeRecipe();
      const r = await runRecipeCli(join(dir, 'recipe.yaml'), { ANTHROPIC_API_KEY: undefined, ORCHESTRATE_HOME: home });
      expect(r.code).toBe(0);
      for (const item of ['a', 'b', 'c']) {
        expect(existsSync(join(dir, 'work', `${item}.txt`))).toBe(true);
        expect(existsSync(join(dir, 'work', `verified-${item}.txt`))).toBe(true);
        expect(existsSync(join(outside, `escaped-${item}.txt`))).toBe(false);
        // The runs folder (run.jsonl, sessions) is hidden: an empty folder in its place.
        expect(readFileSync(join(dir, 'work', `runs-seen-${item}.txt`), 'utf8')).toBe('');
      }
      expect(existsSync(join(dir, 'work', 'step.txt'))).toBe(true);
      expect(existsSync(join(outside, 'step-escaped.txt'))).toBe(false);
      expect(r.stderr).not.toMatch(/WITHOUT a sandbox/);
    },
  );

  it('with bwrap missing the run works unconfined and warns exactly once', async () => {
    const dir = escapeRecipe();
    const r = await runRecipeCli(join(dir, 'recipe.yaml'), {
      ANTHROPIC_API_KEY: undefined,
      ORCHESTRATE_HOME: home,
      ORCHESTRATE_BWRAP: '/nonexistent/bwrap',
    });
    expect(r.code).toBe(0);
    expect(existsSync(join(outside, 'escaped-a.txt'))).toBe(true);
    // Unconfined, the run's own folder is in plain sight (so the hidden check above can fail).
    expect(readFileSync(join(dir, 'work', 'runs-seen-a.txt'), 'utf8')).toMatch(/^\d{8}-/);
    expect(existsSync(join(outside, 'step-escaped.txt'))).toBe(true);
    expect(r.stderr.match(/WITHOUT a sandbox/g)).toHaveLength(1);
    for (const f of ['a', 'b', 'c']) rmSync(join(outside, `escaped-${f}.txt`), { force: true });
    rmSync(join(outside, 'step-escaped.txt'), { force: true });
  });
});
