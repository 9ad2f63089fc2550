// `orchestrate doctor`: whether this machine can run orchestrate as intended, and what to do
// about what is missing. Essential checks (node, git, a writable run folder) decide the exit code
// (0 all pass, 1 otherwise); the sandbox and the API key are reported with how to fix them, since
// runs still work without them (unconfined commands with a warning; offline scripted recipes).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { descriptorPathsWork } from '../../tools/confined-path.js';
import { defaultBwrapPath, measureSandboxHardening, probeSandbox } from '../../tools/sandbox.js';
import { loadRecipe } from '../../recipe/load.js';
import { formatProblem } from '../../recipe/problems.js';
import { EXIT, type CliContext } from '../cli-io.js';
import { endpointChecks } from '../endpoint-checks.js';
import { runsDirArg } from '../locate-run.js';
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';

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
    message: ok
      ? `node ${process.versions.node} (>= ${MIN_NODE.join('.')})`
      : `node ${process.versions.node} is too old: orchestrate needs >= ${MIN_NODE.join('.')} (install a current Node.js LTS, e.g. with nvm or your package manager)`,
  };
}

function gitCheck(env: Record<string, string | undefined>): DoctorCheck {
  const r = spawnSync('git', ['--version'], { encoding: 'utf8', env: { ...process.env, ...env } });
  const ok = !r.error && r.status === 0;
  return {
    name: 'git',
    ok,
    essential: true,
    message: ok
      ? r.stdout.trim()
      : 'git was not found on PATH: install git (apt-get install -y git); writes:, isolation: worktree and patches need it',
  };
}

function sandboxCheck(env: Record<string, string | undefined>): DoctorCheck {
  const bwrap = defaultBwrapPath(env);
  const probe = probeSandbox(bwrap);
  if (probe.ok) {
    const v = spawnSync(bwrap, ['--version'], { encoding: 'utf8' });
    const version = v.status === 0 ? v.stdout.trim() : bwrap;
    return {
      name: 'sandbox',
      ok: true,
      essential: false,
      message: `sandbox works here (${version}): bash, verify and run: commands are confined to their workspace`,
    };
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
    message: set
      ? 'ANTHROPIC_API_KEY is set'
      : 'ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=sk-ant-... to use a real model (offline recipes with --provider scripted work without it)',
  };
}

/** The run folder can be written: a folder is made and removed in it (or in its nearest existing parent). */
function runDirCheck(runsDir: string): DoctorCheck {
  let dir = runsDir;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  // A file where the folder goes is no permission problem: "fix its permissions" sent users to chmod.
  if (!statSync(dir).isDirectory())
    return {
      name: 'run folder',
      ok: false,
      essential: true,
      message: `run folder ${runsDir} cannot be a folder: ${dir === runsDir ? 'it' : dir} is a file; pass --run-dir DIR with a folder (orchestrate <recipe> --run-dir DIR), or move the file away`,
    };
  try {
    const probe = mkdtempSync(join(dir, '.orchestrate-doctor-'));
    rmSync(probe, { recursive: true, force: true });
    return { name: 'run folder', ok: true, essential: true, message: `run folder ${runsDir} is writable` };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      name: 'run folder',
      ok: false,
      essential: true,
      message: `run folder ${runsDir} is not writable (${why}): fix its permissions, or pass --run-dir DIR (orchestrate <recipe> --run-dir DIR)`,
    };
  }
}

/**
 * What the sandbox's hardening amounts to on this machine, measured by a real sandboxed command:
 * the private home, /run hidden with the network off, the /tmp size cap, the runs folder sealed;
 * plus the file tools' race-free path walk (it needs /proc/self/fd).
 */
function hardeningChecks(env: Record<string, string | undefined>, runsDir: string): DoctorCheck[] {
  const bwrap = defaultBwrapPath(env);
  const raceFree = descriptorPathsWork();
  const fileTools: DoctorCheck = {
    name: 'file tools',
    ok: raceFree,
    essential: false,
    message: raceFree
      ? `file tools resolve paths race-free (folders opened through /proc/self/fd) and refuse the runs folder ${runsDir}`
      : 'file tools cannot resolve paths race-free here (no /proc/self/fd): a folder swapped for a symlink during an edit could redirect it; they still refuse the runs folder',
  };
  if (!probeSandbox(bwrap).ok) return [fileTools];
  // A folder made where the runs folder lies stands in for it (the runs folder may not exist yet).
  let parent = runsDir;
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  let hide: string;
  try {
    hide = mkdtempSync(join(parent, '.orchestrate-doctor-'));
    writeFileSync(join(hide, 'run.jsonl'), '');
  } catch (err) {
    return [
      fileTools,
      {
        name: 'sandbox hardening',
        ok: false,
        essential: false,
        message: `could not measure the sandbox's hardening: ${err instanceof Error ? err.message : String(err)}`,
      },
    ];
  }
  let m: ReturnType<typeof measureSandboxHardening>;
  try {
    m = measureSandboxHardening(bwrap, hide, { ...process.env, ...env });
  } finally {
    rmSync(hide, { recursive: true, force: true });
  }
  if (m.error)
    return [
      fileTools,
      {
        name: 'sandbox hardening',
        ok: false,
        essential: false,
        message: `could not measure the sandbox's hardening: ${m.error}`,
      },
    ];
  const mb = (b: number): string => `${Math.round(b / 1048576)} MiB`;
  const capped = probeSandbox(bwrap).sizeCap === true && m.tmpBytes !== undefined;
  return [
    fileTools,
    {
      name: 'sandbox home',
      ok: m.privateHome,
      essential: false,
      message: m.privateHome
        ? `sandbox home is private: commands see only ${m.homeEntries.join(', ')} in it (your git identity, toolchains on PATH)`
        : `sandbox home is NOT private (commands see ${m.homeEntries.join(', ') || 'nothing'}): the workspace is the home folder or holds it, so only the known secret files are hidden; use a workspace below the home folder`,
    },
    {
      name: 'sandbox /run',
      ok: m.runHidden,
      essential: false,
      message: m.runHidden
        ? 'host sockets in /run and /var/run are hidden from commands without network'
        : 'host sockets in /run are visible to commands without network',
    },
    {
      name: 'sandbox tmpfs cap',
      ok: capped,
      essential: false,
      message: capped
        ? `sandbox /tmp is capped at ${mb(m.tmpBytes!)} (/dev/shm and the home too; ORCHESTRATE_SANDBOX_TMP_MB changes it): a command cannot fill host memory through them`
        : 'sandbox /tmp, /dev/shm and home are NOT size-capped (this bubblewrap has no --size; 0.8 or later has): one command can fill host memory',
    },
    {
      name: 'sandbox runs folder',
      ok: m.hiddenSealed,
      essential: false,
      message: m.hiddenSealed
        ? `the runs folder ${runsDir} is hidden from commands and cannot be written from them`
        : `the runs folder ${runsDir} is reachable from sandboxed commands`,
    },
  ];
}

export function doctorChecks(ctx: Pick<CliContext, 'env'>, runsDir: string): DoctorCheck[] {
  return [
    nodeCheck(),
    gitCheck(ctx.env),
    sandboxCheck(ctx.env),
    ...hardeningChecks(ctx.env, runsDir),
    apiKeyCheck(ctx.env),
    runDirCheck(runsDir),
  ];
}

export const doctorCommand: CliCommand = {
  command: 'doctor',
  describe: 'Check this machine: node, git, the command sandbox (bubblewrap), the API key, a writable run folder',
  builder: (y) =>
    y
      .option('run-dir', { type: 'string', describe: 'Run folder to check (default .orchestrate/runs)' })
      .option('recipe', {
        type: 'string',
        describe: "Also check the model endpoints of this recipe's providers: (reachable, model listed)",
      })
      .option('probe', {
        type: 'boolean',
        default: false,
        describe: 'With --recipe: send each endpoint a one-token request',
      })
      .check(givenOnce('run-dir', 'recipe')),
  run: async (args, ctx) => {
    // --probe alone was ignored, and the output read as if the endpoints had been probed.
    if (args.probe === true && typeof args.recipe !== 'string') {
      ctx.stderr(
        'orchestrate doctor: --probe sends a request to each model endpoint of a recipe: give the recipe with --recipe FILE\n',
      );
      return EXIT.usage;
    }
    const runsDir = runsDirArg(args, ctx);
    const checks = doctorChecks(ctx, runsDir);
    if (typeof args.recipe === 'string') {
      const loaded = loadRecipe(resolve(ctx.cwd, args.recipe), { cwd: ctx.cwd });
      if (!loaded.ok)
        checks.push({
          name: 'recipe',
          ok: false,
          essential: true,
          message: `the recipe does not load: ${loaded.problems.map((p) => formatProblem(p)).join('; ')}`,
        });
      else {
        const endpoints = await endpointChecks(loaded.recipe, args.probe === true);
        // Nothing printed for the recipe read as if it had not been looked at.
        if (endpoints.length === 0)
          endpoints.push({
            name: 'recipe',
            ok: true,
            essential: true,
            message: `${args.recipe} loads; its agents use no OpenAI-compatible endpoint to check (anthropic needs the key above; scripted runs offline)`,
          });
        checks.push(...endpoints);
      }
    }
    for (const c of checks) ctx.stdout(`${c.ok ? 'ok  ' : c.essential ? 'FAIL' : 'warn'}  ${c.message}\n`);
    const failed = checks.filter((c) => !c.ok && c.essential);
    if (failed.length > 0) {
      ctx.stdout(
        `${failed.length} essential check${failed.length > 1 ? 's' : ''} failed: ${failed.map((c) => c.name).join(', ')}\n`,
      );
      return EXIT.taskFailed;
    }
    const warned = checks.filter((c) => !c.ok).length;
    ctx.stdout(`all essential checks passed${warned ? ` (${warned} warning${warned > 1 ? 's' : ''})` : ''}\n`);
    return EXIT.ok;
  },
};
