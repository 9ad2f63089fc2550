// Attack: a folder on the path of an edit is swapped for a symlink to a place outside the
// workspace while the edit runs (a parallel bash call: `mv d d.real && ln -s /elsewhere d`). The
// file tools check the path once, so without race-free resolution the write lands outside. A
// second process toggles the folder in a tight loop for a fixed number of rounds and then stops
// by itself; edits and writes run the whole time. The file outside must never change, while an
// edit through a symlink that stays inside the workspace still works.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEditTool } from '../../src/tools/edit.js';
import { createReadTool } from '../../src/tools/read.js';
import { createWriteTool } from '../../src/tools/write.js';
import { runTool, tempDir, textOf } from '../tools/harness.js';

const ROUNDS = 10_000;
// A file large enough that reading, splicing and replacing it takes a while.
const BODY = `${'filler line to make the edit long\n'.repeat(6000)}marker\n`;

/** Swaps `ws/d` for a link to `out` and back, ROUNDS times, then leaves `d` a real folder. */
const TOGGLER = `
const fs = require('node:fs');
const [ws, rounds] = [process.argv[1], Number(process.argv[2])];
const d = ws + '/d', real = ws + '/d.real';
process.stdout.write('ready\\n');
// The write tool makes a missing parent folder: when it made d in a gap, that folder is dropped.
const retry = (step) => {
  for (let tries = 0; ; tries++) {
    try {
      return step();
    } catch (err) {
      if (tries > 1000 || (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY' && err.code !== 'EISDIR')) throw err;
      try {
        fs.rmSync(d, { recursive: true, force: true });
      } catch {
        // the write tool is adding to it right now: the next try removes it
      }
    }
  }
};
for (let i = 0; i < rounds; i++) {
  fs.renameSync(d, real);
  retry(() => fs.symlinkSync('../out', d));
  fs.unlinkSync(d);
  retry(() => fs.renameSync(real, d));
}
`;

describe('file tools against a folder swapped for a symlink', () => {
  it('never write outside the workspace while d is toggled to a link', async () => {
    const base = tempDir('race-');
    const ws = join(base, 'ws');
    const out = join(base, 'out');
    mkdirSync(join(ws, 'd'), { recursive: true });
    mkdirSync(out);
    writeFileSync(join(ws, 'd', 'f.txt'), BODY);
    writeFileSync(join(out, 'f.txt'), BODY);
    const edit = createEditTool({ cwd: ws });
    const write = createWriteTool({ cwd: ws });

    const toggler = spawn(process.execPath, ['-e', TOGGLER, ws, String(ROUNDS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => toggler.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => toggler.stdout.once('data', () => resolve()));
    let running = true;
    void exited.then(() => {
      running = false;
    });

    let attempts = 0;
    let succeeded = 0;
    while (running) {
      attempts++;
      // Alternate edit (read, splice, replace) and write; errors (d missing, link refused) are expected.
      const call =
        attempts % 2
          ? runTool(edit, { path: 'd/f.txt', edits: [{ oldText: 'marker\n', newText: 'marker\nedited\n' }] })
          : runTool(write, { path: 'd/f.txt', content: BODY });
      await call.then(
        () => succeeded++,
        () => undefined,
      );
    }
    const code = await exited;
    expect(readFileSync(join(out, 'f.txt'), 'utf8')).toBe(BODY);
    expect(readdirSync(out)).toEqual(['f.txt']); // no temp file left there either
    expect(code).toBe(0);
    expect(attempts).toBeGreaterThan(10);
    expect(succeeded).toBeGreaterThan(0); // the folder while it is real is still edited
  }, 60_000);

  it('still edits, writes and reads through symlinks that stay inside the workspace', async () => {
    const ws = tempDir('inside-');
    mkdirSync(join(ws, 'real', 'sub'), { recursive: true });
    writeFileSync(join(ws, 'real', 'sub', 'a.txt'), 'one\n');
    symlinkSync('real', join(ws, 'linkdir'));
    symlinkSync('real/sub/a.txt', join(ws, 'linkfile'));
    const edit = createEditTool({ cwd: ws });
    const write = createWriteTool({ cwd: ws });
    const read = createReadTool({ cwd: ws });

    await runTool(edit, { path: 'linkdir/sub/a.txt', edits: [{ oldText: 'one', newText: 'two' }] });
    expect(readFileSync(join(ws, 'real', 'sub', 'a.txt'), 'utf8')).toBe('two\n');
    await runTool(edit, { path: 'linkfile', edits: [{ oldText: 'two', newText: 'three' }] });
    expect(readFileSync(join(ws, 'real', 'sub', 'a.txt'), 'utf8')).toBe('three\n');
    await runTool(write, { path: 'linkdir/new/b.txt', content: 'made\n' });
    expect(readFileSync(join(ws, 'real', 'new', 'b.txt'), 'utf8')).toBe('made\n');
    expect(textOf(await runTool(read, { path: 'linkfile' }))).toBe('three');
  });

  it('refuses a symlinked folder that leads outside, with the reason', async () => {
    const base = tempDir('outside-');
    mkdirSync(join(base, 'ws'));
    mkdirSync(join(base, 'out'));
    writeFileSync(join(base, 'out', 'f.txt'), 'secret\n');
    symlinkSync('../out', join(base, 'ws', 'd'));
    const write = createWriteTool({ cwd: join(base, 'ws') });
    await expect(runTool(write, { path: 'd/f.txt', content: 'x' })).rejects.toThrow(
      /symbolic link.*outside the workspace/,
    );
    expect(readFileSync(join(base, 'out', 'f.txt'), 'utf8')).toBe('secret\n');
  });
});
