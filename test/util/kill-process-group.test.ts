// killProcessGroup against real processes: a detached shell and the child it started both die (their
// shared stdout pipe closes only once every holder is gone), the group is still reached after its
// leader exited, and a group that is gone already is no error.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { killProcessGroup } from '../../src/util/kill-process-group.js';

/** Resolves with the first line the child prints, leaving its stdout open (and read) after it. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolve(text.split('\n')[0] ?? '');
    });
    child.stdout?.once('end', () => reject(new Error(`the child printed no line: ${text}`)));
  });
}

describe('killProcessGroup', () => {
  const groups: number[] = [];
  afterEach(() => {
    // A failed test must not leave its sleep behind.
    for (const pgid of groups.splice(0)) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  });

  it('stops a group leader and the process it started', async () => {
    // The background sleep keeps stdout open: 'close' fires only when the grandchild is dead too.
    const child = spawn('/bin/sh', ['-c', 'sleep 1000 & echo started; wait'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (child.pid) groups.push(child.pid);
    const closed = once(child, 'close');
    expect(await firstLine(child)).toBe('started');
    killProcessGroup(child.pid, 'SIGKILL');
    const [, signal] = await closed;
    expect(signal).toBe('SIGKILL');
  });

  it('still reaches the group after its leader has exited', async () => {
    // The MCP transport kills the group when its server exits, to stop what the server left behind.
    const child = spawn('/bin/sh', ['-c', 'sleep 1000 & echo started'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (child.pid) groups.push(child.pid);
    const closed = once(child, 'close');
    const exited = once(child, 'exit');
    expect(await firstLine(child)).toBe('started');
    expect(await exited).toEqual([0, null]);
    killProcessGroup(child.pid, 'SIGKILL');
    await closed; // the orphaned sleep held stdout open until now
  });

  it('does nothing for a process that is gone or never started', async () => {
    const child = spawn('true', [], { stdio: 'ignore' });
    await once(child, 'exit');
    expect(() => killProcessGroup(child.pid, 'SIGKILL')).not.toThrow();
    expect(() => killProcessGroup(undefined, 'SIGKILL')).not.toThrow();
  });
});
