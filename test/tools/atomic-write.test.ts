// Replacing a file atomically and durably (src/tools/atomic-write.ts): a kill -9 at any instant
// leaves the whole old or the whole new content; mode, owner, symlinks and hard links are
// treated as promised; a failure leaves the original and no temp file.
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HardLinkedFileError, isReplacementTemp, replaceFile, replaceFileSync } from '../../src/tools/atomic-write.js';
import { CHILD_LOADER_ARGS, childModule } from '../helpers/cli-entry.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { folderMadeReadOnly, tempDir, tmpfsFolder } from './harness.js';

const CHILD = resolve(import.meta.dirname, 'fixtures/replace-loop-child.mjs');
/** The tools the child drives: built when dist/ is current (a start without tsx's loader), else the sources. */
const TOOLS = [childModule('tools/edit.ts'), childModule('tools/write.ts')];

const modeOf = (file: string): number => statSync(file).mode & 0o7777;
const othersThan = (dir: string, ...names: string[]): string[] => readdirSync(dir).filter((n) => !names.includes(n));

/** A pid that no process has any more: a child that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

const FORMS = [
  ['replaceFile', (path: string, data: string, opts?: { refuseHardLinks?: boolean }) => replaceFile(path, data, opts)],
  [
    'replaceFileSync',
    async (path: string, data: string, opts?: { refuseHardLinks?: boolean }) => replaceFileSync(path, data, opts),
  ],
] as const;

describe.each(FORMS)('%s', (_name, replace) => {
  it('creates a new file with the default mode (0666 minus the umask), as fs.writeFile does', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'plain.txt'), 'x');
    await replace(join(dir, 'new.txt'), 'hello');
    expect(readFileSync(join(dir, 'new.txt'), 'utf8')).toBe('hello');
    expect(modeOf(join(dir, 'new.txt'))).toBe(modeOf(join(dir, 'plain.txt')));
    expect(othersThan(dir, 'plain.txt', 'new.txt')).toEqual([]);
  });

  it('keeps the mode of the file it replaces: a 0755 script stays executable, a 0600 file stays private', async () => {
    const dir = tempDir();
    const script = join(dir, 'run.sh');
    const secret = join(dir, 'secret.env');
    writeFileSync(script, '#!/bin/sh\necho old\n');
    chmodSync(script, 0o755);
    writeFileSync(secret, 'A=1\n');
    chmodSync(secret, 0o600);
    await replace(script, '#!/bin/sh\necho new\n');
    await replace(secret, 'A=2\n');
    expect(modeOf(script)).toBe(0o755);
    expect(modeOf(secret)).toBe(0o600);
    expect(spawnSync(script).stdout.toString()).toBe('new\n');
  });

  it('a symlink stays a symlink and its final target gets the new content (also through a chain and a dangling link)', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real/target.txt'), 'old');
    chmodSync(join(dir, 'real/target.txt'), 0o640);
    symlinkSync('real/target.txt', join(dir, 'first'));
    symlinkSync('first', join(dir, 'second'));
    await replace(join(dir, 'second'), 'new');
    expect(lstatSync(join(dir, 'second')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'second'))).toBe('first');
    expect(lstatSync(join(dir, 'first')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'real/target.txt'), 'utf8')).toBe('new');
    expect(modeOf(join(dir, 'real/target.txt'))).toBe(0o640);
    expect(othersThan(join(dir, 'real'), 'target.txt')).toEqual([]);

    // A dangling link: its target is created, the link stays.
    symlinkSync('real/later.txt', join(dir, 'dangling'));
    await replace(join(dir, 'dangling'), 'created');
    expect(lstatSync(join(dir, 'dangling')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'real/later.txt'), 'utf8')).toBe('created');
  });

  it('keeps owner and group when root replaces a file that belongs to someone else', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip();
    const file = join(tempDir(), 'theirs.txt');
    writeFileSync(file, 'old');
    chownSync(file, 12345, 23456);
    chmodSync(file, 0o2754); // set-gid survives: chmod comes after chown
    await replace(file, 'new');
    const st = statSync(file);
    expect([st.uid, st.gid, modeOf(file)]).toEqual([12345, 23456, 0o2754]);
    expect(readFileSync(file, 'utf8')).toBe('new');
  });

  it('refuses a file with more than one hard link when asked; both links keep their content', async () => {
    const dir = tempDir();
    const outside = join(dir, 'outside.txt');
    const inside = join(dir, 'inside.txt');
    writeFileSync(outside, 'shared');
    linkSync(outside, inside);
    await expect(replace(inside, 'changed', { refuseHardLinks: true })).rejects.toBeInstanceOf(HardLinkedFileError);
    expect(readFileSync(outside, 'utf8')).toBe('shared');
    expect(readFileSync(inside, 'utf8')).toBe('shared');
    expect(statSync(inside).nlink).toBe(2);
    expect(othersThan(dir, 'outside.txt', 'inside.txt')).toEqual([]);
  });

  it('refuses to replace a folder', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    await expect(replace(join(dir, 'sub'), 'x')).rejects.toThrow(/sub is a folder; only regular files can be written/);
    expect(statSync(join(dir, 'sub')).isDirectory()).toBe(true);
    expect(othersThan(dir, 'sub')).toEqual([]);
  });

  it('a read-only folder fails before anything changes: the original stays, no temp file', async (ctx) => {
    const folder = folderMadeReadOnly();
    if (!folder) return ctx.skip();
    const file = join(folder.dir, 'f.txt');
    writeFileSync(file, 'original');
    folder.makeReadOnly();
    await expect(replace(file, 'new')).rejects.toThrow(/EROFS|EACCES/);
    expect(readFileSync(file, 'utf8')).toBe('original');
    expect(othersThan(folder.dir, 'f.txt')).toEqual([]);
  });

  it('a full disk fails in the middle of the write: the original stays whole and the half-written temp file is removed', async (ctx) => {
    const dir = tmpfsFolder('64k');
    if (!dir) return ctx.skip();
    const file = join(dir, 'f.txt');
    writeFileSync(file, 'original\n'.repeat(1000)); // 9 KB of 64
    await expect(replace(file, 'x'.repeat(200_000))).rejects.toThrow(/ENOSPC/);
    expect(readFileSync(file, 'utf8')).toBe('original\n'.repeat(1000));
    expect(othersThan(dir, 'f.txt')).toEqual([]);
  });

  it("removes the leftovers of a killed write of the same file; a live process's fresh temp file and other files' stay", async () => {
    const dir = tempDir();
    const file = join(dir, 'f.txt');
    writeFileSync(file, 'old');
    const dead = `.f.txt.orchestrate-${deadPid()}-0a1b2c.tmp`;
    const stale = `.f.txt.orchestrate-${process.pid}-3d4e5f.tmp`; // a live (reused) pid, untouched for two hours
    const inFlight = `.f.txt.orchestrate-${process.pid}-6a7b8c.tmp`;
    const otherFile = `.g.txt.orchestrate-${deadPid()}-9d0e1f.tmp`;
    const notOurs = '.f.txt.swp';
    for (const n of [dead, stale, inFlight, otherFile, notOurs]) writeFileSync(join(dir, n), 'half');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(dir, stale), twoHoursAgo, twoHoursAgo);
    expect([dead, stale, inFlight, otherFile].every(isReplacementTemp)).toBe(true);
    expect(isReplacementTemp(notOurs)).toBe(false);

    await replace(file, 'new');
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(othersThan(dir, 'f.txt').sort()).toEqual([inFlight, otherFile, notOurs].sort());
  });
});

// A kill -9 lands in one of these phases of a replacement. Each is hit on purpose, once by the edit
// tool and once by the write tool (replace-loop-child.mjs holds the first replacement there until
// the kill), and the file must then hold exactly the content the phase promises. A few kills at
// random instants follow, to catch what falls between the named phases.
const PHASES = [
  // before the rename: the old content, and our temp file left beside it
  { phase: 'temp-created', keeps: 'old', temp: 'empty' },
  { phase: 'temp-half-written', keeps: 'old', temp: 'partial' },
  { phase: 'temp-written', keeps: 'old', temp: 'whole' },
  { phase: 'temp-synced', keeps: 'old', temp: 'whole' },
  // after it: the new content, nothing left
  { phase: 'renamed', keeps: 'new', temp: 'none' },
  { phase: 'round-done', keeps: 'new', temp: 'none' },
] as const;
const RANDOM_TRIALS = 4;

describe('kill -9 during a replacement', () => {
  const SEED = 0x5eed17;
  const MARK_A = 'version: A';
  const MARK_B = 'version: B, a little longer';
  // ~3.4 MB, so a write (with its fsync) takes long enough to be hit in the middle at random.
  const body = Array.from(
    { length: 60_000 },
    (_, i) => `line ${String(i).padStart(6, '0')} the quick brown fox jumps over the lazy dog\n`,
  ).join('');
  const contentA = `${MARK_A}\n${body}`;
  const contentB = `${MARK_B}\n${body}`;
  const name = 'big.txt';

  /** Starts the child on `dir`; resolves once `ready` is printed (or the child ended), then kills it. */
  async function killWhen(dir: string, how: 'edit' | 'write', ready: string, phase?: string, delayMs = 0) {
    const args = [...CHILD_LOADER_ARGS, CHILD, dir, name, how, MARK_A, MARK_B, ...TOOLS, ...(phase ? [phase] : [])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, signal) => done(signal)));
    await new Promise<void>((reached) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes(ready)) reached();
      });
      void exit.then(() => reached());
    });
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    child.kill('SIGKILL');
    expect(await exit, `${how} ${phase ?? 'at random'}: the child ended by itself: ${stderr}`).toBe('SIGKILL');
  }

  /** The file, whole; its mode; and the temp files left beside it (anything else fails). */
  function afterKill(file: string, dir: string, what: string): { now: string; temps: string[] } {
    const now = readFileSync(file, 'utf8');
    if (now !== contentA && now !== contentB) {
      throw new Error(
        `${what}: the file is neither the old nor the new content (${now.length} chars, starts ${JSON.stringify(now.slice(0, 40))})`,
      );
    }
    expect(modeOf(file), what).toBe(0o640);
    const left = othersThan(dir, name);
    expect(
      left.filter((n) => !isReplacementTemp(n)),
      `${what}: files that are not ours`,
    ).toEqual([]);
    return { now, temps: left };
  }

  it.each(PHASES)(
    'at $phase the file keeps the $keeps content, whole (edit and write)',
    async ({ phase, keeps, temp }) => {
      for (const how of ['edit', 'write'] as const) {
        const dir = tempDir();
        const file = join(dir, name);
        writeFileSync(file, contentA);
        chmodSync(file, 0o640);
        await killWhen(dir, how, `paused ${phase}`, phase);
        const { now, temps } = afterKill(file, dir, `${how} killed at ${phase}`);
        expect(now === contentA ? 'old' : 'new', `${how} killed at ${phase}`).toBe(keeps);
        expect(temps.length, `${how} killed at ${phase}: temp files left`).toBe(temp === 'none' ? 0 : 1);
        if (temp !== 'none') {
          const size = statSync(join(dir, temps[0]!)).size;
          const whole = Buffer.byteLength(contentB);
          if (temp === 'empty') expect(size).toBe(0);
          if (temp === 'partial') expect(size > 0 && size < whole, `${size} of ${whole} bytes`).toBe(true);
          if (temp === 'whole') expect(size).toBe(whole);
        }
        // The next write does not trip on what the kill left, and clears it away.
        await replaceFile(file, contentA);
        expect(readFileSync(file, 'utf8')).toBe(contentA);
        expect(othersThan(dir, name)).toEqual([]);
      }
    },
    120_000,
  );

  it(`and at ${RANDOM_TRIALS} random instants: the whole old or the whole new file, never a mix or an empty file`, {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    const file = join(dir, name);
    writeFileSync(file, contentA);
    chmodSync(file, 0o640);
    const random = seededRandom(SEED);
    const seen = { content_a: 0, content_b: 0, kills_with_temp_left: 0 };

    for (let trial = 0; trial < RANDOM_TRIALS; trial++) {
      const how = trial % 2 === 0 ? 'edit' : 'write';
      // The random delay starts once a write is under way.
      await killWhen(dir, how, 'writing', undefined, random() * 120);
      const { now, temps } = afterKill(file, dir, `trial ${trial} (${how})`);
      if (now === contentA) seen.content_a++;
      else seen.content_b++;
      if (temps.length > 0) seen.kills_with_temp_left++;
    }

    await replaceFile(file, contentA);
    expect(readFileSync(file, 'utf8')).toBe(contentA);
    expect(othersThan(dir, name)).toEqual([]);
    console.log(
      `[reliability] tools/atomic-write: phases=${PHASES.length * 2} random_trials=${RANDOM_TRIALS} seed=${SEED} content_a=${seen.content_a} content_b=${seen.content_b} kills_with_temp_left=${seen.kills_with_temp_left} torn_files=0`,
    );
  });
});
