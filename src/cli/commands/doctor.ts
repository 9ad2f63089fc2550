// `orchestrate doctor`: whether this machine can run orchestrate as intended, and what to do
// about what is missing. Essential checks (node, git, a writable run folder) decide the exit code
// (0 all pass, 1 otherwise); the sandbox and the API key are reported with how to fix them, since
// runs still work without them (unconfined commands with a warning; offline scripted recipes).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { defaultRunsDir } from '../../display/find-run.js';
import { defaultBwrapPath, probeSandbox } from '../../tools/sandbox.js';
import { EXIT, type CliContext } from '../cli-io.js';
import { type CliCommand } from '../command.js';

const MIN_NODE = [20, 19] as const;

export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** A failed essential check makes the exit code 1; the others only warn. */
  essential: boolean;
  message: string;
}

function nodeCheck(): DoctorCheck {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return {
    name: 'node',
    ok,
    essential: true,
    message: ok ? `node ${process.versions.node} (>= ${MIN_NODE.join('.')})` : `node ${process.versions.node} is too old: orchestrate needs >= ${MIN_NODE.join('.')} (install a current Node.js LTS, e.g. with nvm or your package manager)`,
  };
}

function gitCheck(env: Record<string, string | undefined>): DoctorCheck {
  const r = spawnSync('git', ['--version'], { encoding: 'utf8', env: { ...process.env, ...env } });
  const ok = !r.error && r.status === 0;
  return {
    name: 'git',
    ok,
    essential: true,
    message: ok ? r.stdout.trim() : 'git was not found on PATH: install git (apt-get install -y git); writes:, isolation: worktree and patches need it',
  };
}

function sandboxCheck(env: Record<string, string | undefined>): DoctorCheck {
  const bwrap = defaultBwrapPath(env);
  const probe = probeSandbox(bwrap);
  if (probe.ok) {
    const v = spawnSync(bwrap, ['--version'], { encoding: 'utf8' });
    const version = v.status === 0 ? v.stdout.trim() : bwrap;
    return { name: 'sandbox', ok: true, essential: false, message: `sandbox works here (${version}): bash, verify and run: commands are confined to their workspace` };
  }
  return {
    name: 'sandbox',
    ok: false,
    essential: false,
    message: `sandbox does not work here, so bash, verify and run: commands run unconfined: ${probe.reason}`,
  };
}

function apiKeyCheck(env: Record<string, string | undefined>): DoctorCheck {
  // Never print any part of the key.
  const set = (env.ANTHROPIC_API_KEY ?? '').trim() !== '';
  return {
    name: 'api key',
    ok: set,
    essential: false,
    message: set ? 'ANTHROPIC_API_KEY is set' : 'ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=sk-ant-... to use a real model (offline recipes with --provider scripted work without it)',
  };
}

/** The run folder can be written: a folder is made and removed in it (or in its nearest existing parent). */
function runDirCheck(runsDir: string): DoctorCheck {
  let dir = runsDir;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    const probe = mkdtempSync(join(dir, '.orchestrate-doctor-'));
    rmSync(probe, { recursive: true, force: true });
    return { name: 'run folder', ok: true, essential: true, message: `run folder ${runsDir} is writable` };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { name: 'run folder', ok: false, essential: true, message: `run folder ${runsDir} is not writable (${why}): fix its permissions, or pass --run-dir DIR (orchestrate <recipe> --run-dir DIR)` };
  }
}

export function doctorChecks(ctx: Pick<CliContext, 'env'>, runsDir: string): DoctorCheck[] {
  return [nodeCheck(), gitCheck(ctx.env), sandboxCheck(ctx.env), apiKeyCheck(ctx.env), runDirCheck(runsDir)];
}

export const doctorCommand: CliCommand = {
  command: 'doctor',
  describe: 'Check this machine: node, git, the command sandbox (bubblewrap), the API key, a writable run folder',
  builder: (y) => y.option('run-dir', { type: 'string', describe: 'Run folder to check (default .orchestrate/runs)' }),
  run: async (args, ctx) => {
    const runsDir = typeof args['run-dir'] === 'string' ? resolve(ctx.cwd, args['run-dir']) : defaultRunsDir(ctx.cwd);
    const checks = doctorChecks(ctx, runsDir);
    for (const c of checks) ctx.stdout(`${c.ok ? 'ok  ' : c.essential ? 'FAIL' : 'warn'}  ${c.message}\n`);
    const failed = checks.filter((c) => !c.ok && c.essential);
    if (failed.length > 0) {
      ctx.stdout(`${failed.length} essential check${failed.length > 1 ? 's' : ''} failed: ${failed.map((c) => c.name).join(', ')}\n`);
      return EXIT.taskFailed;
    }
    const warned = checks.filter((c) => !c.ok).length;
    ctx.stdout(`all essential checks passed${warned ? ` (${warned} warning${warned > 1 ? 's' : ''})` : ''}\n`);
    return EXIT.ok;
  },
};
