// A distributed launch's session and checkpoint files on the coordinator, written off its event
// loop (issue 41) yet in the order the messages came. Real files in a temp folder.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LaunchFiles } from '../../src/cluster/launch-files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function files(): { dir: string; session: string; checkpoint: string; errors: string[]; lf: LaunchFiles } {
  const dir = mkdtempSync(join(tmpdir(), 'orch-launch-files-'));
  dirs.push(dir);
  const session = join(dir, 'sessions', 'a.jsonl');
  const checkpoint = `${session}.workspace.diff`;
  const errors: string[] = [];
  const lf = new LaunchFiles(session, checkpoint, (what, err) => errors.push(`${what}: ${(err as Error).message}`));
  return { dir, session, checkpoint, errors, lf };
}

describe('LaunchFiles', () => {
  it('writes session chunks at their offsets, in order, and idle() waits for them', async () => {
    const f = files();
    const lines = Array.from({ length: 200 }, (_, i) => `{"n":${i}}\n`);
    let offset = 0;
    for (const line of lines) {
      f.lf.writeSession(offset, Buffer.from(line), false);
      offset += line.length;
    }
    await f.lf.idle();
    expect(readFileSync(f.session, 'utf8')).toBe(lines.join(''));
    await f.lf.close();
    expect(f.errors).toEqual([]);
  });

  it("keeps an earlier attempt's session and continues it; reset rewrites it from the start", async () => {
    const f = files();
    f.lf.writeSession(0, Buffer.from('first\n'), false);
    await f.lf.close();
    const next = new LaunchFiles(f.session, f.checkpoint, () => {});
    next.writeSession(6, Buffer.from('second\n'), false);
    await next.idle();
    expect(readFileSync(f.session, 'utf8')).toBe('first\nsecond\n');
    next.writeSession(0, Buffer.from('new\n'), true);
    next.writeSession(4, Buffer.from('more\n'), false);
    await next.close();
    expect(readFileSync(f.session, 'utf8')).toBe('new\nmore\n');
  });

  it('a checkpoint is replaced in order with the session writes around it, and dropped at the end', async () => {
    const f = files();
    f.lf.writeCheckpoint(Buffer.from('patch 1'));
    f.lf.writeSession(0, Buffer.from('a\n'), false);
    f.lf.writeCheckpoint(Buffer.from('patch 2'));
    await f.lf.idle();
    expect(readFileSync(f.checkpoint, 'utf8')).toBe('patch 2');
    expect(readFileSync(f.session, 'utf8')).toBe('a\n');
    f.lf.dropCheckpoint();
    await f.lf.close();
    expect(existsSync(f.checkpoint)).toBe(false);
  });

  it('a write that fails is reported and the ones after it still go', async () => {
    const f = files();
    // The checkpoint's folder is a file: its replacement fails; the session (another folder) is fine.
    writeFileSync(join(f.dir, 'blocker'), '');
    const lf = new LaunchFiles(f.session, join(f.dir, 'blocker', 'x.diff'), (what) => f.errors.push(what));
    lf.writeCheckpoint(Buffer.from('patch'));
    lf.writeSession(0, Buffer.from('after\n'), false);
    await lf.close();
    expect(f.errors).toEqual(['the workspace checkpoint']);
    expect(readFileSync(f.session, 'utf8')).toBe('after\n');
  });

  it('nothing is written after close()', async () => {
    const f = files();
    f.lf.writeSession(0, Buffer.from('x\n'), false);
    await f.lf.close();
    f.lf.writeSession(2, Buffer.from('late\n'), false);
    await f.lf.idle();
    expect(readFileSync(f.session, 'utf8')).toBe('x\n');
  });
});
