// Attack: a Unix socket of a host service under /run (D-Bus, a database, a container runtime)
// reached from a sandboxed command with the network off. /run and /var/run are hidden then; with
// the network on they stay visible (DNS configuration lives there), which the second case shows,
// so the first cannot pass for a reason other than the hiding.
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTool } from '../../src/tools/bash.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { runTool, tempDir, textOf } from '../tools/harness.js';

function runWritable(): boolean {
  try {
    accessSync('/run', constants.W_OK);
    return true;
  } catch {
    process.stderr.write(
      '\n!!!!! SKIPPED: /run socket: /run is not writable for this user, so no socket can be put there !!!!!\n\n',
    );
    return false;
  }
}

const CLIENT = (path: string): string =>
  `node -e "require('net').connect('${path}').on('connect',()=>{console.log('CONNECTED');process.exit(0)}).on('error',(e)=>{console.log('REFUSED',e.code);process.exit(0)})"`;

describe.skipIf(skipWithoutBwrap('/run socket') || !runWritable())('host sockets under /run', () => {
  let dir = '';
  let server: Server;
  let sock = '';
  beforeAll(async () => {
    dir = mkdtempSync('/run/orchestrate-socket-test-');
    sock = join(dir, 'service.sock');
    server = createServer((c) => {
      c.on('error', () => undefined); // the client leaves at once
      c.end('hello\n');
    });
    await new Promise<void>((resolve) => server.listen(sock, resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('cannot be reached with the network off', async () => {
    const bash = createBashTool({ cwd: tempDir('sock-') });
    try {
      const out = textOf(await runTool(bash, { command: `${CLIENT(sock)}; ls /run /var/run | wc -l` }));
      expect(out).toContain('REFUSED ENOENT');
      expect(out).not.toContain('CONNECTED');
    } finally {
      bash.dispose();
    }
  });

  it('is visible with the network on (so the test above can fail)', async () => {
    const bash = createBashTool({ cwd: tempDir('sock-'), sandbox: { network: true } });
    try {
      expect(textOf(await runTool(bash, { command: CLIENT(sock) }))).toContain('CONNECTED');
    } finally {
      bash.dispose();
    }
  });
});
