// Attack: a job ships "skill" files whose paths climb out of the worker's folder ("../../..."),
// are absolute, or go through a symlink, to write anywhere the worker's user can. The worker
// writes shipped files only inside the job's own folder: such a job is refused (the instance
// fails `workspace` with the reason) and nothing is written outside.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWorker } from '../../src/cluster/cluster-worker.js';
import {
  AGENTS_QUEUE,
  BULLMQ_PREFIX,
  clusterKeys,
  entryFields,
  parseEntry,
  UpMessageSchema,
  type JobData,
} from '../../src/cluster/cluster-wire.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { packWorkspace } from '../../src/cluster/workspace-transfer.js';
import { shippedPathProblem, writeShippedFile } from '../../src/cluster/worker-policy.js';
import { Queue } from 'bullmq';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { trust } from './cluster-fixtures.js';

const skip = skipWithoutRedis('shipped paths');
let redis: RedisServerHandle;
let worker: ClusterWorker;
let workdir = '';
const log: string[] = [];

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  workdir = mkdtempSync(join(tmpdir(), 'orch-shipped-'));
  worker = new ClusterWorker({
    url: redis.url,
    trust,
    name: 'target',
    concurrency: 1,
    workdir: join(workdir, 'w'),
    log: (l) => log.push(l),
  });
});
afterAll(async () => {
  await worker?.drain();
  await redis?.stop();
});

/**
 * Plays the coordinator of one job sealed with the cluster secret (as a compromised or buggy
 * coordinator would send it): queues it, answers the worker's claim with a start, and returns the
 * worker's answer (`refused` or the agent's first message).
 */
async function offer(files: { path: string; data: string }[]): Promise<{ k: string; error?: string }> {
  const runId = `run-${randomUUID().slice(0, 8)}`;
  const launchId = randomUUID();
  const wsDir = mkdtempSync(join(tmpdir(), 'orch-shipped-ws-'));
  writeFileSync(join(wsDir, 'a.txt'), 'a\n');
  const packed = await packWorkspace(wsDir, { maxBytes: 1 << 20 });
  if (!packed.ok) throw new Error(packed.error);
  const key = clusterKeys.workspace(runId, createHash('sha256').update(packed.packed.data).digest('hex'));
  const cmd = connectRedis(redis.url, { name: 'fake-coordinator' });
  const conn = connectRedis(redis.url, { name: 'fake-coordinator-queue', forBullmq: true });
  const queue = new Queue(AGENTS_QUEUE, { connection: conn, prefix: BULLMQ_PREFIX });
  try {
    await cmd.set(key, trust.sealBytes(packed.packed.data, key));
    const data: JobData = {
      runId,
      launchId,
      task: {
        runId,
        task: 'skillful',
        id: 'skillful',
        attempt: 1,
        role: 'solo',
        sessionFile: '/x.jsonl',
        cwd: wsDir,
        prompt: 'hi',
        continueNote: 'go on',
        agent: {
          name: 'a',
          model: 'm',
          provider: 'scripted',
          tools: [],
          compaction: { enabled: false, reserveTokens: 0, keepRecentTokens: 0 },
          bash: { allow: [], deny: [] },
          skills: files.map((f) => `/${f.path}`),
          extensions: [],
        },
        sandbox: { mode: 'workspace', network: false, hide: [] },
        output: 'text',
        outputRetries: 0,
        verify: [],
        verifyRetries: 0,
        env: {},
        fullEvents: false,
        maxTurns: 1,
        summarize: false,
      },
      workspace: {
        kind: packed.packed.kind,
        ...(packed.packed.base ? { base: packed.packed.base } : {}),
        bytes: packed.packed.data.length,
        key,
      },
      files,
      hasPeer: false,
    };
    await queue.add('agent', trust.sealJob({ runId, launchId, instance: 'skillful', attempt: 1 }, data), {
      jobId: launchId,
      removeOnComplete: true,
      removeOnFail: true,
    });
    let last = '0-0';
    for (;;) {
      const res = (await cmd.xread('BLOCK', 5_000, 'STREAMS', clusterKeys.up(runId), last)) as
        | [string, [string, string[]][]][]
        | null;
      for (const [, entries] of res ?? []) {
        for (const [id, fields] of entries) {
          last = id;
          const e = parseEntry(fields)!;
          const opened = trust.openEntry('up', runId, e.launch, e.incarnation, e.body, e.mac);
          if (!opened.ok) throw new Error(opened.why);
          const m = UpMessageSchema.parse(JSON.parse(opened.value));
          if (m.k === 'claimed') {
            const start = trust.sealEntry(
              'down',
              runId,
              launchId,
              e.incarnation,
              JSON.stringify({ k: 'start', session: '', checkpoint: '' }),
            );
            await cmd.xadd(m.stream, '*', ...entryFields({ launch: launchId, incarnation: e.incarnation, ...start }));
          } else return m.k === 'refused' ? { k: m.k, error: m.error } : { k: m.k };
        }
      }
    }
  } finally {
    await queue.close();
    conn.disconnect();
    cmd.disconnect();
  }
}

describe.skipIf(skip)('files shipped with a job', () => {
  it('a path that climbs out of the job folder is refused and nothing lands outside', async () => {
    const target = join(workdir, `escaped-${randomUUID().slice(0, 6)}.txt`);
    // From <workdir>/w/<run>/<instance>/files: enough ".." to reach the root, then the target.
    const climb = `${'../'.repeat(12)}${target.replace(/^\/+/, '')}`;
    const answer = await offer([{ path: climb, data: Buffer.from('planted').toString('base64') }]);
    expect(answer.k).toBe('refused');
    expect(answer.error).toMatch(/refused the shipped file .*has a "\.\." part/);
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it('an absolute path is refused', async () => {
    const target = join(workdir, `absolute-${randomUUID().slice(0, 6)}.txt`);
    const answer = await offer([{ path: target, data: Buffer.from('planted').toString('base64') }]);
    expect(answer.k).toBe('refused');
    expect(answer.error).toMatch(/it is absolute/);
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it('a plain relative path is written inside the job folder and the job runs', async () => {
    const answer = await offer([
      { path: 'home/me/skills/tidy/SKILL.md', data: Buffer.from('# tidy\n').toString('base64') },
    ]);
    expect(answer.k).not.toBe('refused');
  }, 60_000);
});

describe('writeShippedFile', () => {
  it('refuses a folder that resolves through a symlink to outside its root', () => {
    const base = mkdtempSync(join(tmpdir(), 'orch-shipped-unit-'));
    const root = join(base, 'files');
    const outside = join(base, 'outside');
    mkdirSync(root);
    mkdirSync(outside);
    symlinkSync(outside, join(root, 'link'));
    expect(() => writeShippedFile(root, 'link/x.txt', Buffer.from('no'))).toThrow(/resolves outside/);
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
  });

  it('does not follow a symlink at the file name itself', () => {
    const base = mkdtempSync(join(tmpdir(), 'orch-shipped-unit-'));
    const root = join(base, 'files');
    mkdirSync(root);
    writeFileSync(join(base, 'victim.txt'), 'keep\n');
    symlinkSync(join(base, 'victim.txt'), join(root, 'x.txt'));
    expect(() => writeShippedFile(root, 'x.txt', Buffer.from('no'))).toThrow();
    expect(readFileSync(join(base, 'victim.txt'), 'utf8')).toBe('keep\n');
  });

  it('names what is wrong with a path', () => {
    expect(shippedPathProblem('/etc/passwd')).toMatch(/absolute/);
    expect(shippedPathProblem('a/../../b')).toMatch(/\.\./);
    expect(shippedPathProblem('a\0b')).toMatch(/NUL/);
    expect(shippedPathProblem('home/me/skill.md')).toBeUndefined();
  });
});
