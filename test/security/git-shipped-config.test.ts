// Issue 26: a workspace shipped to a distributed worker that carries a `.git` of its own (a
// folder the coordinator's git does not take for a repository, or an archive forged by whoever
// can write to Redis) must not configure the git the worker runs while unpacking it and taking
// its checkpoints: no fsmonitor, filter or hook from it runs, the decoy key never shows up, and
// the workspace still unpacks and diffs right.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  packWorkspace,
  unpackWorkspace,
  workspaceDiff,
  type PackedWorkspace,
} from '../../src/cluster/workspace-transfer.js';
import {
  SANDBOX_MODES,
  cleanup,
  dumpEnvTo,
  filesHoldingDecoy,
  repoWith,
  setBwrap,
  tempDir,
  withDecoyKey,
  write,
} from './git-fixtures.js';

afterAll(() => cleanup());

/** A `.git/config` naming the marker command for fsmonitor and a filter on every file. */
function plantConfig(dir: string, marker: string): void {
  const cmd = dumpEnvTo(dir, marker);
  write(
    dir,
    '.git/config',
    `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = ${cmd}\n[filter "x"]\n\tclean = ${cmd}\n\tsmudge = ${cmd}\n`,
  );
  write(dir, '.gitattributes', '* filter=x\n');
  write(dir, '.git/hooks/post-checkout', `#!/bin/sh\nenv > "${marker}"\n`);
  chmodSync(join(dir, '.git/hooks/post-checkout'), 0o755);
}

describe.each(SANDBOX_MODES)('a shipped .git/config unpacked on a worker, $name', { timeout: 60_000 }, (mode) => {
  let restore: () => void;
  beforeEach(() => {
    restore = setBwrap(mode.bwrap);
  });
  afterEach(() => restore());

  it('a plain folder carrying .git/config travels; on the worker it configures nothing and the diff is right', async () => {
    const src = tempDir();
    const marker = join(tempDir('git-marker-'), 'ran');
    write(src, 'a.txt', 'one\n');
    plantConfig(src, marker); // no HEAD: not a repository for the coordinator's git, so it travels as a folder
    const packed = await withDecoyKey(() => packWorkspace(src));
    if (!packed.ok) throw new Error(packed.error);
    expect(packed.packed.kind).toBe('folder');
    const ws = join(tempDir('git-worker-'), 'ws');
    await withDecoyKey(() => unpackWorkspace(packed.packed, ws));
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(ws, '.git/config'), 'utf8')).not.toContain('fsmonitor');
    write(ws, 'a.txt', 'two\n');
    const patch = await withDecoyKey(() => workspaceDiff(ws));
    expect(patch.toString('utf8')).toContain('+two');
    expect(existsSync(marker)).toBe(false);
    expect(filesHoldingDecoy(ws)).toEqual([]);
  });

  it('a forged archive holding a whole repository with fsmonitor, filters and hooks unpacks as plain files and runs nothing', async () => {
    const forged = repoWith(tempDir(), { 'a.txt': 'one\n' });
    const marker = join(tempDir('git-marker-'), 'ran');
    plantConfig(forged, marker);
    const data = execFileSync('tar', ['-c', '-f', '-', '.'], { cwd: forged, maxBuffer: 64 * 1024 * 1024 });
    const packed: PackedWorkspace = { kind: 'folder', data, exclude: ['.orchestrate'] };
    const ws = join(tempDir('git-worker-'), 'ws');
    await withDecoyKey(() => unpackWorkspace(packed, ws));
    expect(readFileSync(join(ws, '.git/config'), 'utf8')).not.toContain('fsmonitor');
    expect(existsSync(join(ws, '.git/hooks/post-checkout'))).toBe(false);
    write(ws, 'a.txt', 'two\n');
    const patch = (await withDecoyKey(() => workspaceDiff(ws))).toString('utf8');
    expect(patch).toContain('+two');
    expect(existsSync(marker)).toBe(false);
    expect(filesHoldingDecoy(ws)).toEqual([]);
  });
});
