// `orchestrate ... | head`: when the reader goes away, the CLI stops quietly (no EPIPE stack trace).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('closed stdout pipe', () => {
  it('an RPC session whose reader closes after one line exits without an unhandled EPIPE error', async () => {
    const child = spawn(
      process.execPath,
      [
        ...CLI_NODE_ARGS,
        'agent',
        '--mode',
        'rpc',
        '--no-session',
        '--provider',
        'scripted',
        '--script',
        join(ROOT, 'test/fixtures/agent/hello.yaml'),
      ],
      {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.stdout.once('data', () => child.stdout.destroy()); // like `head -1`
    child.stdin.write('{"id":"1","type":"prompt","message":"Say hello"}\n');
    child.stdin.write('{"id":"2","type":"get_state"}\n');
    child.stdin.end();
    const code = await exited;
    expect(stderr).not.toMatch(/Unhandled 'error' event|EPIPE/);
    expect(code).toBe(0);
  });
});
