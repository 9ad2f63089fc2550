// The flags of a distributed run (`--redis`, `--max-workspace-mb`) on `orchestrate <recipe>` and
// `resume`, and the access flags shared with `orchestrate worker` (Redis password, ACL user and
// TLS files; the cluster secret). Kept apart from service/redis-run.ts so a local run never loads the
// Redis client and BullMQ.
import { readFileSync } from 'node:fs';
import type { Argv } from 'yargs';
import { ClusterTrust, loadClusterSecret, SECRET_HELP } from '../cluster/cluster-trust.js';
import type { RedisEndpoint } from '../cluster/redis-connection.js';
import { DEFAULT_MAX_WORKSPACE_BYTES } from '../cluster/workspace-transfer.js';
import type { CommandArgs } from './command.js';
import { givenOnce } from './flag-values.js';

/** Flags of everything that talks to the Redis of distributed runs (run, resume, worker). */
export function redisAccessOptions(y: Argv): Argv<object> {
  return y
    .option('redis-user', { type: 'string', describe: 'Redis ACL user (also ORCHESTRATE_REDIS_USER)' })
    .option('redis-password-file', {
      type: 'string',
      describe:
        'File holding the Redis password (also ORCHESTRATE_REDIS_PASSWORD_FILE, or the password in ORCHESTRATE_REDIS_PASSWORD); keeps it out of the URL, which ps shows',
    })
    .option('redis-tls-ca', {
      type: 'string',
      describe:
        'CA certificate (PEM) that signed the Redis server certificate, for rediss:// (also ORCHESTRATE_REDIS_TLS_CA)',
    })
    .option('redis-tls-cert', {
      type: 'string',
      describe: 'Client certificate (PEM) for rediss:// (also ORCHESTRATE_REDIS_TLS_CERT)',
    })
    .option('redis-tls-key', {
      type: 'string',
      describe: 'Client key (PEM) for rediss:// (also ORCHESTRATE_REDIS_TLS_KEY)',
    })
    .option('secret-file', {
      type: 'string',
      describe:
        'File holding the cluster secret shared by the coordinator and its workers (also ORCHESTRATE_CLUSTER_SECRET_FILE, or the secret in ORCHESTRATE_CLUSTER_SECRET)',
    })
    .option('insecure-no-secret', {
      type: 'boolean',
      default: false,
      describe:
        'Run without a cluster secret: anyone who can write to this Redis can then run jobs on the workers and change results (a private, trusted Redis only)',
    })
    .check(
      givenOnce('redis-user', 'redis-password-file', 'redis-tls-ca', 'redis-tls-cert', 'redis-tls-key', 'secret-file'),
    );
}

/** `--redis` given twice was an array that redisUrlOf passed over: the run went on locally. */
export function redisOptions(y: Argv): Argv<object> {
  return redisAccessOptions(y)
    .option('redis', {
      type: 'string',
      describe:
        'Run the agents on `orchestrate worker` processes through this Redis (redis://host:port; also ORCHESTRATE_REDIS_URL)',
    })
    .option('max-workspace-mb', {
      type: 'number',
      describe: `Largest packed workspace (git bundle or archive) sent to a worker with --redis, in MB (default ${DEFAULT_MAX_WORKSPACE_BYTES / 1024 / 1024})`,
    })
    .check(givenOnce('redis', 'max-workspace-mb'))
    .check((a) => {
      const mb = a['max-workspace-mb'];
      if (mb !== undefined && !(typeof mb === 'number' && Number.isFinite(mb) && mb > 0))
        throw new Error(`--max-workspace-mb must be a number of megabytes above 0 (got ${String(mb)})`);
      return true;
    });
}

/** The Redis URL of this run: --redis, else ORCHESTRATE_REDIS_URL; undefined for a local run. */
export function redisUrlOf(args: CommandArgs, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (typeof args.redis === 'string' && args.redis.trim() !== '') return args.redis.trim();
  const fromEnv = env.ORCHESTRATE_REDIS_URL?.trim();
  return fromEnv ? fromEnv : undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

export interface RedisAccess {
  endpoint: RedisEndpoint;
  trust: ClusterTrust;
  /** Things to print but not to stop for (a password on the command line, no secret). */
  warnings: string[];
}

/** A flag's value, else the env variable's. */
function flagOrEnv(args: CommandArgs, flag: string, env: Env, name: string): string | undefined {
  const v = args[flag];
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  return env[name]?.trim() || undefined;
}

function readSecretFile(
  path: string,
  what: string,
  flag: string,
): { ok: true; data: Buffer } | { ok: false; error: string } {
  try {
    return { ok: true, data: readFileSync(path) };
  } catch (err) {
    return {
      ok: false,
      error: `cannot read the ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check ${flag}.`,
    };
  }
}

/**
 * How to reach this Redis and the cluster secret: the URL plus a password from a file or env,
 * an ACL user, TLS files; the secret (required unless --insecure-no-secret). Errors are whole
 * sentences that never show a password or the secret.
 */
export function redisAccessOf(
  url: string,
  args: CommandArgs,
  env: Env,
): { ok: true; access: RedisAccess } | { ok: false; error: string } {
  const warnings: string[] = [];
  const endpoint: RedisEndpoint = { url };
  const user = flagOrEnv(args, 'redis-user', env, 'ORCHESTRATE_REDIS_USER');
  if (user) endpoint.username = user;
  const passwordFile = flagOrEnv(args, 'redis-password-file', env, 'ORCHESTRATE_REDIS_PASSWORD_FILE');
  if (passwordFile) {
    const read = readSecretFile(
      passwordFile,
      'Redis password file',
      '--redis-password-file / ORCHESTRATE_REDIS_PASSWORD_FILE',
    );
    if (!read.ok) return read;
    endpoint.password = read.data.toString('utf8').trim();
  } else if (env.ORCHESTRATE_REDIS_PASSWORD) endpoint.password = env.ORCHESTRATE_REDIS_PASSWORD;
  // A password in a URL given as a flag is in this process's command line, which every user of the machine can read.
  if (typeof args.redis === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]+@/i.test(args.redis.trim())) {
    warnings.push(
      "the Redis password is part of --redis, so anyone on this machine could read it in ps (it is masked from this process's command line now that it started); pass it with ORCHESTRATE_REDIS_PASSWORD or --redis-password-file instead.",
    );
    maskPasswordsInCommandLine();
  }
  const tls: NonNullable<RedisEndpoint['tls']> = {};
  for (const [part, flag, name] of [
    ['ca', 'redis-tls-ca', 'ORCHESTRATE_REDIS_TLS_CA'],
    ['cert', 'redis-tls-cert', 'ORCHESTRATE_REDIS_TLS_CERT'],
    ['key', 'redis-tls-key', 'ORCHESTRATE_REDIS_TLS_KEY'],
  ] as const) {
    const path = flagOrEnv(args, flag, env, name);
    if (!path) continue;
    const read = readSecretFile(path, `TLS ${part} file`, `--${flag} / ${name}`);
    if (!read.ok) return read;
    tls[part] = read.data;
  }
  if (Object.keys(tls).length > 0) {
    if (!/^rediss:\/\//i.test(url))
      return {
        ok: false,
        error:
          'TLS files are given (--redis-tls-ca/--redis-tls-cert/--redis-tls-key or ORCHESTRATE_REDIS_TLS_*) but the Redis URL is not rediss://; use rediss://host:port for a TLS connection.',
      };
    if (Boolean(tls.cert) !== Boolean(tls.key))
      return {
        ok: false,
        error:
          'a TLS client certificate needs its key and a key its certificate: give both --redis-tls-cert and --redis-tls-key (or neither).',
      };
    endpoint.tls = tls;
  }
  const secretFile = typeof args['secret-file'] === 'string' ? args['secret-file'] : undefined;
  const loaded = loadClusterSecret(secretFile, env);
  if (!loaded.ok) return loaded;
  const insecure = args['insecure-no-secret'] === true;
  if (loaded.secret !== undefined && insecure)
    return {
      ok: false,
      error: `--insecure-no-secret is given, and so is a cluster secret (${loaded.from}); drop one of them.`,
    };
  if (loaded.secret === undefined && !insecure) return { ok: false, error: `no cluster secret is set. ${SECRET_HELP}` };
  if (insecure)
    warnings.push(
      'running without a cluster secret (--insecure-no-secret): anyone who can write to this Redis can queue jobs the workers run and return results this run applies.',
    );
  return {
    ok: true,
    access: {
      endpoint,
      trust: loaded.secret !== undefined ? ClusterTrust.withSecret(loaded.secret) : ClusterTrust.insecure(),
      warnings,
    },
  };
}

/**
 * Overwrites this process's command line as `ps` and /proc/<pid>/cmdline show it, with every
 * password in a Redis URL masked (libuv writes process.title over the original argv memory on
 * Linux). The password was visible from the start until now; this shortens that window.
 */
function maskPasswordsInCommandLine(): void {
  try {
    process.title = process.argv
      .map((a) => a.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):[^/@\s]+@/i, '$1:***@'))
      .join(' ');
  } catch {
    // not supported here: the warning stands
  }
}
