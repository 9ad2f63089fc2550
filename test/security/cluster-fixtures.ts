// Shared parts of the distributed trust-boundary tests (test/security/cluster-*.test.ts): the
// cluster secret of the legitimate coordinator and workers, real `orchestrate worker` processes
// with chosen flags, a coordinator in this process through the CLI's own --redis glue, and a
// "fake worker": an ordinary Redis client that does what an attacker with access to Redis can.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterTrust } from '../../src/cluster/cluster-trust.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { CommandArgs } from '../../src/cli/command.js';
import { redisRunSettingsOf } from '../../src/cli/commands/run.js';
import { openRedisRun } from '../../src/service/redis-run.js';
import { spawnCli, until } from '../reliability/helpers/reliability-fixtures.js';

export const SECRET = 'security-test-cluster-secret-7f3a9c1e';
/** The secret travels through the environment, never a flag. */
export const SECRET_ENV = { ORCHESTRATE_CLUSTER_SECRET: SECRET };
export const trust = ClusterTrust.withSecret(SECRET);

export interface CliWorker {
  child: ChildProcess;
  name: string;
  workdir: string;
  stderr(): string;
  stop(): Promise<void>;
}

const workdirs: string[] = [];

/** Starts `orchestrate worker` with these flags and env and waits for its ready line. */
export async function startCliWorker(
  redisUrl: string,
  name: string,
  flags: string[] = [],
  env: Record<string, string> = SECRET_ENV,
  workdirBase = tmpdir(),
): Promise<CliWorker> {
  const workdir = mkdtempSync(join(workdirBase, `orch-sec-${name}-`));
  workdirs.push(workdir);
  const child = spawnCli(
    ['worker', '--redis', redisUrl, '--name', name, '--concurrency', '2', '--workdir', workdir, ...flags],
    { ORCHESTRATE_WORKER_LOCK_MS: '2000', ...env },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout?.resume();
  await until(() => err.includes(`worker ${name} ready`) || child.exitCode !== null, `worker ${name} to start`, 60_000);
  if (child.exitCode !== null) throw new Error(`worker ${name} exited: ${err}`);
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await gone;
    clearTimeout(t);
  };
  return { child, name, workdir, stderr: () => err, stop };
}

export function removeWorkdirs(): void {
  for (const w of workdirs.splice(0)) rmSync(w, { recursive: true, force: true });
}

/** A distributed run of `dir/recipe.yaml` with the CLI's --redis glue; `env` is the coordinator's environment. */
export async function runDistributed(
  redisUrl: string,
  dir: string,
  env: Record<string, string | undefined> = { ...process.env, ...SECRET_ENV },
  args: CommandArgs = {},
) {
  const warnings: string[] = [];
  const settings = redisRunSettingsOf(redisUrl, args, env);
  if (!settings.ok) throw new Error(settings.message);
  const opened = await openRedisRun(settings.settings, (t) => warnings.push(t));
  if (!opened.ok) throw new Error(opened.message);
  try {
    const r = await runRecipeFile(
      join(dir, 'recipe.yaml'),
      { cwd: dir },
      { runsDir: join(dir, 'runs'), ...opened.run.options, env },
    );
    if (!r.ok) throw new Error(JSON.stringify(r));
    return { outcome: r.outcome, warnings };
  } finally {
    await opened.run.close();
  }
}
