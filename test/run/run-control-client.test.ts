// Control replies carry why they failed as a code (issue 43): a real control server or a raw
// socket on a real run folder, the real client, and the service that turns the code into "not
// live" or "refused" without reading the wording.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RunControlServer } from '../../src/orchestrator/control/run-control-server.js';
import { connectRunControl } from '../../src/run/run-control-client.js';
import { controlSocketPath } from '../../src/run/run-control-socket.js';
import { deliverRunControl } from '../../src/service/run-control.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function runFolder(): string {
  const base = mkdtempSync(join(tmpdir(), 'ctl-'));
  made.push(base);
  const runDir = join(base, 'run-c');
  mkdirSync(runDir);
  writeFileSync(join(runDir, 'run.jsonl'), '');
  return runDir;
}

/** A raw listener on the run's socket that answers each connection with `answer`. */
async function rawServer(runDir: string, answer: (s: import('node:net').Socket) => void): Promise<Server> {
  const server = createServer(answer);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(controlSocketPath(runDir), resolve);
  });
  return server;
}

describe('control failures as codes', () => {
  it('the coordinator names refusals, unreadable actions and handler failures', async () => {
    const runDir = runFolder();
    const server = await RunControlServer.start({
      runDir,
      handle: (a) => {
        if (a.action === 'retry') throw new Error('boom');
        return { ok: false, error: 'no instance "zz"; did you mean "a"?' };
      },
    });
    try {
      const control = connectRunControl(runDir);
      expect(await control.send({ action: 'cancel', instance: 'zz' })).toEqual({
        ok: false,
        code: 'refused',
        error: 'no instance "zz"; did you mean "a"?',
      });
      expect(await control.send({ action: 'retry', instance: 'a' })).toEqual({
        ok: false,
        code: 'failed',
        error: 'the coordinator could not carry out retry: boom',
      });
      // The service keeps a refusal a refusal, whatever it says.
      expect(await deliverRunControl(runDir, 'cancel', { action: 'cancel', instance: 'zz' })).toEqual({
        ok: false,
        code: 'refused',
        message: 'no instance "zz"; did you mean "a"?',
      });
    } finally {
      await server.close();
    }
  });

  it('a coordinator that closes without a reply, or a reply of nonsense, is told by code', async () => {
    const runDir = runFolder();
    const server = await rawServer(runDir, (s) => s.on('data', () => s.end()));
    try {
      const reply = await connectRunControl(runDir).send({ action: 'cancel_run' });
      expect(reply).toMatchObject({ ok: false, code: 'no_reply' });
      // Not live to the user: the run's log has no end and nobody holds the run.
      const out = await deliverRunControl(runDir, 'cancel', { action: 'cancel_run' });
      expect(out).toMatchObject({ ok: false, code: 'not_live' });
      expect(out.ok ? '' : out.message).toMatch(/^run run-c is not running: no coordinator holds it/);
    } finally {
      await new Promise((r) => server.close(r));
    }
    const noisy = await rawServer(runDir, (s) => s.on('data', () => s.write('{"ok":"maybe"}\n')));
    try {
      expect(await connectRunControl(runDir).send({ action: 'cancel_run' })).toMatchObject({
        ok: false,
        code: 'malformed_reply',
      });
      // An answer that cannot be read is not "not live": the coordinator is there.
      expect(await deliverRunControl(runDir, 'cancel', { action: 'cancel_run' })).toMatchObject({
        ok: false,
        code: 'refused',
      });
    } finally {
      await new Promise((r) => noisy.close(r));
    }
  });

  it('nobody listening is not_live, and a refusal without a code (an older coordinator) is a refusal', async () => {
    const runDir = runFolder();
    expect(await connectRunControl(runDir).send({ action: 'cancel_run' })).toMatchObject({
      ok: false,
      code: 'not_live',
    });
    const old = await rawServer(runDir, (s) => s.on('data', () => s.write('{"ok":false,"error":"no"}\n')));
    try {
      expect(await connectRunControl(runDir).send({ action: 'cancel_run' })).toEqual({
        ok: false,
        code: 'refused',
        error: 'no',
      });
    } finally {
      await new Promise((r) => old.close(r));
    }
  });
});
