// The trust model of a distributed run: a cluster secret shared by the coordinator and its
// workers (never written to Redis, never on a command line) authenticates and encrypts everything
// they exchange through Redis, so a client that can reach Redis but does not hold the secret can
// neither queue a job a worker runs, nor return a result (a patch) the coordinator applies, nor
// read the task (prompt, recipe secrets, env) or the workspace, nor forge a run lease token.
//
// - Keys: HKDF-SHA256 of the secret, one for HMAC-SHA256 and one for AES-256-GCM.
// - A job (JobData) travels as an envelope: its routing fields in clear (run id, launch id,
//   instance key, attempt), the whole JobData encrypted, and an HMAC over the canonical JSON of
//   all of it. Stream entries (up: worker -> coordinator, down: coordinator -> worker) the same:
//   the body encrypted, an HMAC over direction, run id, launch, incarnation and body.
// - Packed workspaces are encrypted with their Redis key as associated data.
// - Run lease tokens are `nonce.mac`: only a holder of the secret can make one that verifies.
//
// Without a secret (`--insecure-no-secret`) nothing is authenticated or encrypted: anyone who can
// write to that Redis can make the workers run anything they allow. Secured and insecure peers
// do not understand each other: each drops what the other sends, and says why.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Shortest secret accepted (characters): a guessable secret is no secret. */
export const MIN_SECRET_LENGTH = 16;

export const SECRET_HELP =
  'Set the same cluster secret on the coordinator and every worker: ORCHESTRATE_CLUSTER_SECRET, or a key file with --secret-file PATH / ORCHESTRATE_CLUSTER_SECRET_FILE (make one with: openssl rand -hex 32 > cluster.key; chmod 600 cluster.key). Without it anyone who can reach Redis can run commands on the workers and change your checkout; --insecure-no-secret accepts that risk (a trusted, private Redis only).';

export type SecretSource = { ok: true; secret: string | undefined; from: string } | { ok: false; error: string };

/**
 * The cluster secret: --secret-file, else ORCHESTRATE_CLUSTER_SECRET_FILE, else
 * ORCHESTRATE_CLUSTER_SECRET. `secret` undefined: none configured. The error never shows the secret.
 */
export function loadClusterSecret(
  secretFile: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): SecretSource {
  const file = secretFile?.trim() || env.ORCHESTRATE_CLUSTER_SECRET_FILE?.trim();
  let secret: string | undefined;
  let from: string;
  if (file) {
    from = `the key file ${file}`;
    try {
      secret = readFileSync(file, 'utf8').trim();
    } catch (err) {
      return {
        ok: false,
        error: `cannot read the cluster secret from ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}. Check the path given with --secret-file / ORCHESTRATE_CLUSTER_SECRET_FILE.`,
      };
    }
  } else {
    from = 'ORCHESTRATE_CLUSTER_SECRET';
    secret = env.ORCHESTRATE_CLUSTER_SECRET?.trim() || undefined;
  }
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    return {
      ok: false,
      error: `the cluster secret from ${from} is ${secret.length} characters long; it needs at least ${MIN_SECRET_LENGTH} (make one with: openssl rand -hex 32).`,
    };
  }
  return { ok: true, secret, from };
}

export type Direction = 'up' | 'down';

/** A job as it sits in the queue: routing fields in clear, the JobData sealed, the MAC over everything. */
export interface JobEnvelope {
  v: 1;
  runId: string;
  launchId: string;
  instance: string;
  attempt: number;
  /** Secured: base64 of iv | tag | AES-256-GCM ciphertext of the JobData JSON. Insecure: the JSON itself. */
  body: string;
  /** HMAC-SHA256 (hex) over the canonical envelope; '' when no secret is configured. */
  mac: string;
}

export type Opened<T> = { ok: true; value: T } | { ok: false; why: string };

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class ClusterTrust {
  // Key objects, prepared once: a raw key is prepared again on every HMAC and cipher, and a
  // coordinator opens and seals an entry for every message of every agent (issue 41).
  private readonly macKey: KeyObject | undefined;
  private readonly encKey: KeyObject | undefined;
  /** The secret itself, only for redaction: what this process writes must never show it. */
  readonly secretToRedact: string | undefined;

  private constructor(secret: string | undefined) {
    this.secretToRedact = secret;
    if (secret === undefined) return;
    const ikm = Buffer.from(secret, 'utf8');
    this.macKey = createSecretKey(Buffer.from(hkdfSync('sha256', ikm, 'orchestrate-cluster', 'hmac-sha256', 32)));
    this.encKey = createSecretKey(Buffer.from(hkdfSync('sha256', ikm, 'orchestrate-cluster', 'aes-256-gcm', 32)));
  }

  static withSecret(secret: string): ClusterTrust {
    return new ClusterTrust(secret);
  }

  /** No secret: nothing authenticated, nothing encrypted (only with --insecure-no-secret). */
  static insecure(): ClusterTrust {
    return new ClusterTrust(undefined);
  }

  get secured(): boolean {
    return this.macKey !== undefined;
  }

  private mac(parts: readonly (string | number)[]): string {
    return createHmac('sha256', this.macKey!).update(JSON.stringify(parts)).digest('hex');
  }

  private macOk(parts: readonly (string | number)[], given: string): boolean {
    const want = Buffer.from(this.mac(parts), 'hex');
    const got = Buffer.from(given, 'hex');
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** AES-256-GCM with `aad` bound in: iv | tag | ciphertext. */
  sealBytes(plain: Buffer, aad: string): Buffer {
    if (!this.encKey) return plain;
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv('aes-256-gcm', this.encKey, iv);
    c.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([c.update(plain), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), body]);
  }

  /** The plaintext, or throws when the bytes were not sealed with this secret for `aad`. */
  openBytes(sealed: Buffer, aad: string): Buffer {
    if (!this.encKey) return sealed;
    if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('too short to be sealed data');
    const d = createDecipheriv('aes-256-gcm', this.encKey, sealed.subarray(0, IV_BYTES));
    d.setAAD(Buffer.from(aad, 'utf8'));
    d.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([d.update(sealed.subarray(IV_BYTES + TAG_BYTES)), d.final()]);
  }

  sealJob(meta: { runId: string; launchId: string; instance: string; attempt: number }, job: unknown): JobEnvelope {
    const head = ['orchestrate-job/1', meta.runId, meta.launchId, meta.instance, meta.attempt] as const;
    const json = JSON.stringify(job);
    if (!this.secured) return { v: 1, ...meta, body: json, mac: '' };
    const body = this.sealBytes(Buffer.from(json, 'utf8'), JSON.stringify(head)).toString('base64');
    return { v: 1, ...meta, body, mac: this.mac([...head, body]) };
  }

  /** The job's data (JSON value) after checking its MAC and decrypting it; `why` says what failed (no secrets in it). */
  openJob(raw: unknown): Opened<{ envelope: JobEnvelope; job: unknown }> {
    const e = raw as Partial<JobEnvelope> | null;
    if (
      typeof e !== 'object' ||
      e === null ||
      e.v !== 1 ||
      typeof e.runId !== 'string' ||
      typeof e.launchId !== 'string' ||
      typeof e.instance !== 'string' ||
      typeof e.attempt !== 'number' ||
      typeof e.body !== 'string' ||
      typeof e.mac !== 'string'
    ) {
      return { ok: false, why: 'it is not a job envelope of this version (no run id, launch, attempt, body and MAC)' };
    }
    const env = e as JobEnvelope;
    const head = ['orchestrate-job/1', env.runId, env.launchId, env.instance, env.attempt] as const;
    if (!this.secured) {
      if (env.mac !== '')
        return {
          ok: false,
          why: 'it is sealed with a cluster secret and this worker has none (set ORCHESTRATE_CLUSTER_SECRET or --secret-file)',
        };
      try {
        return { ok: true, value: { envelope: env, job: JSON.parse(env.body) } };
      } catch {
        return { ok: false, why: 'its body is not JSON' };
      }
    }
    if (env.mac === '') return { ok: false, why: 'it carries no MAC (queued without the cluster secret)' };
    if (!/^[0-9a-f]{64}$/.test(env.mac) || !this.macOk([...head, env.body], env.mac))
      return { ok: false, why: 'its MAC does not verify (forged, altered, or queued with another cluster secret)' };
    try {
      return {
        ok: true,
        value: {
          envelope: env,
          job: JSON.parse(this.openBytes(Buffer.from(env.body, 'base64'), JSON.stringify(head)).toString('utf8')),
        },
      };
    } catch {
      return { ok: false, why: 'its body does not decrypt with the cluster secret' };
    }
  }

  /** The stream entry's body as it travels (encrypted when secured) and its MAC. */
  sealEntry(
    dir: Direction,
    runId: string,
    launch: string,
    incarnation: string,
    body: string,
  ): { body: string; mac: string } {
    if (!this.secured) return { body, mac: '' };
    const head = [`orchestrate-${dir}/1`, runId, launch, incarnation] as const;
    const sealed = this.sealBytes(Buffer.from(body, 'utf8'), JSON.stringify(head)).toString('base64');
    return { body: sealed, mac: this.mac([...head, sealed]) };
  }

  /** The entry's body in clear, or why it cannot be trusted. */
  openEntry(
    dir: Direction,
    runId: string,
    launch: string,
    incarnation: string,
    body: string,
    mac: string,
  ): Opened<string> {
    if (!this.secured) {
      if (mac !== '') return { ok: false, why: 'it is sealed with a cluster secret and this process has none' };
      return { ok: true, value: body };
    }
    if (mac === '') return { ok: false, why: 'it carries no MAC (sent without the cluster secret)' };
    const head = [`orchestrate-${dir}/1`, runId, launch, incarnation] as const;
    if (!/^[0-9a-f]{64}$/.test(mac) || !this.macOk([...head, body], mac))
      return { ok: false, why: 'its MAC does not verify (forged, altered, or sent with another cluster secret)' };
    try {
      return { ok: true, value: this.openBytes(Buffer.from(body, 'base64'), JSON.stringify(head)).toString('utf8') };
    } catch {
      return { ok: false, why: 'its body does not decrypt with the cluster secret' };
    }
  }

  /** A run lease token: random, plus (secured) a MAC over it and the run id that only secret holders can make. */
  leaseToken(runId: string): string {
    const nonce = randomBytes(12).toString('hex');
    return this.secured ? `${nonce}.${this.mac(['orchestrate-lease/1', runId, nonce]).slice(0, 32)}` : nonce;
  }

  /** Whether a lease token of this run was made by a holder of the secret (always true without one). */
  leaseTokenValid(runId: string, token: string): boolean {
    if (!this.secured) return token !== '';
    const m = /^([0-9a-f]{24})\.([0-9a-f]{32})$/.exec(token);
    if (!m) return false;
    const want = Buffer.from(this.mac(['orchestrate-lease/1', runId, m[1]!]).slice(0, 32), 'hex');
    return timingSafeEqual(want, Buffer.from(m[2]!, 'hex'));
  }
}
