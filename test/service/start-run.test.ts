// service/start-run.ts and run-execution.ts with a real run (the scripted provider on real worker
// threads, a real run folder): a recipe's problems, a bad trace address and a Redis nobody
// answers on come back as codes before any run folder exists; a run runs to its end with the
// request's overrides recorded, and the cluster secret's file joins the run's redaction set.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunStore } from '../../src/run/run-store.js';
import { prepareRun, startRun } from '../../src/service/start-run.js';
import { ClusterTrust } from '../../src/cluster/cluster-trust.js';
import { cleanupTempDirs, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const SECRET = 'service-test-secret-5c1d8e2f';

function project(reply = 'hello'): string {
  return tempProject({
    'recipe.yaml': `name: tiny
provider: scripted
script: script.yaml
inputs:
  who: { type: string, default: world }
tasks:
  - id: hello
    prompt: "Say hello to \${{ inputs.who }}"
`,
    'script.yaml': `turns:\n  - text: ${JSON.stringify(reply)}\n`,
  });
}

/** A 127.0.0.1 port nothing listens on (taken, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const env = { PATH: process.env.PATH };

describe('service: start a run', { timeout: 120_000 }, () => {
  it("a recipe's problems are data at file:line:col, before anything runs", () => {
    const dir = tempProject({ 'recipe.yaml': 'name: broken\ntasks:\n  - id: a\n    promt: "typo"\n' });
    const prepared = prepareRun({ recipe: 'recipe.yaml' }, { cwd: dir, env });
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.code).toBe('problems');
    expect(prepared.problems.length).toBeGreaterThan(0);
    expect(prepared.problems[0]).toMatchObject({
      file: expect.stringContaining('recipe.yaml'),
      line: 3,
      col: expect.any(Number),
    });
  });

  it('runs the recipe to its end with the inputs and overrides recorded, the store shown before its first event', async () => {
    const dir = project();
    const prepared = prepareRun(
      { recipe: 'recipe.yaml', set: ['who=Ana'], concurrency: 2, runsDir: 'runs' },
      { cwd: dir, env },
    );
    expect(prepared.ok).toBe(true);
    if (!prepared.ok) return;
    let seen: { store: RunStore; eventsAtStart: number } | undefined;
    const order: string[] = [];
    const result = await startRun(prepared, {
      cwd: dir,
      env,
      beforeStart: () => order.push('beforeStart'),
      onStore: (store) => {
        order.push('onStore');
        seen = { store, eventsAtStart: existsSync(join(store.dir, 'run.jsonl')) ? events(store.dir).length : 0 };
      },
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (!result.ok) return;
    expect(result.outcome.status).toBe('succeeded');
    expect(seen?.eventsAtStart).toBe(0);
    expect(order).toEqual(['beforeStart', 'onStore']);
    expect(readdirSync(join(dir, 'runs'))).toEqual([result.outcome.runId]);
    const start = events(result.outcome.dir).find((e) => e.type === 'run_start');
    expect(start).toMatchObject({ inputs: { who: 'Ana' }, overrides: { concurrency: 2 } });
  });

  it('a bad trace address is bad_otel_address: nothing starts (beforeStart is not called), no run folder is made', async () => {
    const dir = project();
    const prepared = prepareRun({ recipe: 'recipe.yaml', runsDir: 'runs' }, { cwd: dir, env });
    if (!prepared.ok) throw new Error('the recipe loads');
    let started = false;
    const result = await startRun(prepared, {
      cwd: dir,
      env,
      otel: 'ftp://collector',
      beforeStart: () => {
        started = true;
      },
    });
    expect(result).toMatchObject({ ok: false, code: 'bad_otel_address' });
    expect(started).toBe(false);
    if (result.ok || result.code === 'problems') return;
    expect(result.message).toMatch(/--otel must be an http:\/\/ or https:\/\/ address/);
    expect(existsSync(join(dir, 'runs'))).toBe(false);
  });

  it('a Redis nobody answers on is redis_unreachable after its warnings, and no run folder is made', async () => {
    const dir = project();
    const prepared = prepareRun({ recipe: 'recipe.yaml', runsDir: 'runs' }, { cwd: dir, env });
    if (!prepared.ok) throw new Error('the recipe loads');
    const notices: string[] = [];
    const result = await startRun(prepared, {
      cwd: dir,
      env,
      redis: {
        access: {
          endpoint: { url: `redis://127.0.0.1:${await deadPort()}` },
          trust: ClusterTrust.insecure(),
          warnings: ['running without a cluster secret'],
        },
      },
      onNotice: (line) => notices.push(line),
    });
    expect(result).toMatchObject({ ok: false, code: 'redis_unreachable' });
    expect(notices).toEqual(['orchestrate: warning: running without a cluster secret\n']);
    expect(existsSync(join(dir, 'runs'))).toBe(false);
  });

  it("the cluster secret's file (relative to cwd) joins the run's redaction set", async () => {
    const dir = project(`the secret is ${SECRET}`);
    writeFileSync(join(dir, 'cluster.secret'), `${SECRET}\n`);
    const prepared = prepareRun({ recipe: 'recipe.yaml', runsDir: 'runs' }, { cwd: dir, env });
    if (!prepared.ok) throw new Error('the recipe loads');
    const result = await startRun(prepared, { cwd: dir, env, secretFile: 'cluster.secret' });
    if (!result.ok) throw new Error(JSON.stringify(result));
    expect(result.outcome.status).toBe('succeeded');
    const log = readFileSync(join(result.outcome.dir, 'run.jsonl'), 'utf8');
    expect(log).toContain('the secret is');
    expect(log).not.toContain(SECRET);
  });
});
