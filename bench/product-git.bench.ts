// Benchmark: what the product's own sandboxed git (src/tools/product-git.ts, issue 26) costs per
// checkpoint. Two checkpoints are measured, each against the way it ran before, interleaved in
// the same run so load on the machine hits both alike:
//
//   snapshot        git-workspace snapshot() (one sandboxed shell: rev-parse, copy of the index,
//                   add, write-tree) vs. the former five `git` spawns with the parent environment
//   worker diff     workspace-transfer workspaceDiff() on an unpacked workspace (one sandboxed shell)
//                   vs. the former sequence of spawns
//
// Also printed: the same new code with bubblewrap unavailable (the env and config layers alone).
// The repository has 300 files, 5 of which change between rounds.
//
//   node --import tsx bench/product-git.bench.ts
//
// Goal: median overhead <= 15 ms per checkpoint (snapshot and worker diff each).
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packWorkspace, unpackWorkspace, workspaceDiff } from '../src/cluster/workspace-transfer.js';
import { snapshot } from '../src/orchestrator/workspace/git-workspace.js';
import { productSandbox } from '../src/tools/product-git.js';

const ROUNDS = 40;
const WARMUP = 4;
const FILES = 300;
const run = promisify(execFile);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** git as the product ran it before: the parent's whole environment, no sandbox. */
async function oldGit(args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const r = await run('git', args, {
    cwd,
    env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' },
    maxBuffer: 256 * 1024 * 1024,
  });
  return r.stdout;
}

function copyIndex(from: string, to: string): void {
  copyFileSync(from, to);
  const st = statSync(from);
  utimesSync(to, st.atime, st.mtime);
}

/** The former snapshot(): repoRoot, headCommit, the index path, add, write-tree. */
async function oldSnapshot(dir: string): Promise<string> {
  const root = (await oldGit(['rev-parse', '--show-toplevel'], dir)).trim();
  await oldGit(['rev-parse', '--verify', '-q', 'HEAD'], root);
  const tmp = join(tmpdir(), `bench-index-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const real = (await oldGit(['rev-parse', '--path-format=absolute', '--git-path', 'index'], root)).trim();
  try {
    if (existsSync(real)) copyIndex(real, tmp);
    await oldGit(['add', '-A', '--', '.'], root, { GIT_INDEX_FILE: tmp });
    return (await oldGit(['write-tree'], root, { GIT_INDEX_FILE: tmp })).trim();
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The former workspaceDiff(): base, index path, nested repositories, add, diff-index. */
async function oldWorkspaceDiff(ws: string): Promise<string> {
  const never = [':(exclude,glob)**/.orchestrate', ':(exclude,glob)**/.orchestrate/**'];
  const base = (await oldGit(['rev-parse', '--verify', '-q', 'refs/orchestrate/base^{commit}'], ws)).trim();
  const tmp = mkdtempSync(join(tmpdir(), 'bench-diff-'));
  try {
    const idx = join(tmp, 'index');
    const real = (await oldGit(['rev-parse', '--path-format=absolute', '--git-path', 'index'], ws)).trim();
    if (existsSync(real)) copyIndex(real, idx);
    const env = { GIT_INDEX_FILE: idx };
    await oldGit(['ls-files', '-z', '--others', '--exclude-standard', '--', '.', ...never], ws, env);
    await oldGit(['add', '-A', '--', '.', ...never], ws, env);
    return await oldGit(
      ['diff-index', '--cached', '-p', '--binary', '--full-index', '--no-renames', base, '--', '.', ...never],
      ws,
      env,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function fill(dir: string): void {
  for (let i = 0; i < FILES; i++) {
    mkdirSync(join(dir, `d${i % 10}`), { recursive: true });
    writeFileSync(join(dir, `d${i % 10}`, `f${i}.txt`), `file ${i}\n`.repeat(20));
  }
}

function touch(dir: string, round: number): void {
  for (let i = 0; i < 5; i++) writeFileSync(join(dir, `d${i}`, `f${i}.txt`), `round ${round}\n`);
}

/** Runs the old and new variants alternately; returns the medians and the overhead. */
async function compare(
  label: string,
  dir: string,
  oldFn: () => Promise<unknown>,
  newFn: () => Promise<unknown>,
): Promise<{ before: number; after: number }> {
  const time = async (fn: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  for (let i = 0; i < WARMUP; i++) {
    touch(dir, i);
    await time(oldFn);
    await time(newFn);
  }
  const before: number[] = [];
  const after: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    touch(dir, 100 + i);
    if (i % 2) {
      before.push(await time(oldFn));
      after.push(await time(newFn));
    } else {
      after.push(await time(newFn));
      before.push(await time(oldFn));
    }
  }
  const r = { before: median(before), after: median(after) };
  console.log(`${label}: before median ${r.before.toFixed(1)} ms; now median ${r.after.toFixed(1)} ms`);
  return r;
}

async function main(): Promise<void> {
  const sandbox = productSandbox();
  const root = mkdtempSync(join(tmpdir(), 'product-git-bench-'));
  try {
    const repo = join(root, 'repo');
    mkdirSync(repo);
    fill(repo);
    await oldGit(['init', '-q'], repo);
    await oldGit(['add', '-A'], repo);
    await oldGit(
      ['-c', 'user.name=b', '-c', 'user.email=b@b', '-c', 'commit.gpgSign=false', 'commit', '-qm', 'init'],
      repo,
    );
    const packed = await packWorkspace(repo);
    if (!packed.ok) throw new Error(packed.error);
    const ws = join(root, 'ws');
    await unpackWorkspace(packed.packed, ws);

    console.log(
      `product git bench: node ${process.version}, ${FILES} files, 5 changed per round, ${ROUNDS} rounds; sandbox: ${sandbox.sandboxed ? 'bubblewrap' : `none (${sandbox.reason ?? ''})`}`,
    );
    const snap = await compare(
      'snapshot',
      repo,
      () => oldSnapshot(repo),
      () => snapshot(repo),
    );
    const diff = await compare(
      'worker diff',
      ws,
      () => oldWorkspaceDiff(ws),
      () => workspaceDiff(ws),
    );
    process.env.ORCHESTRATE_BWRAP = join(root, 'no-bwrap');
    const snapBare = await compare(
      'snapshot, bwrap unavailable',
      repo,
      () => oldSnapshot(repo),
      () => snapshot(repo),
    );
    delete process.env.ORCHESTRATE_BWRAP;

    console.log('--- goals ---');
    for (const [name, r] of [
      ['snapshot', snap],
      ['worker diff', diff],
    ] as const) {
      const over = r.after - r.before;
      console.log(
        `${sandbox.sandboxed && over <= 15 ? 'PASS' : 'MISS'} sandboxed git overhead per checkpoint (${name}): median ${over.toFixed(1)} ms, ratio ${(r.after / r.before).toFixed(2)} (goal <= 15 ms)`,
      );
    }
    console.log(
      `info: without bubblewrap (env and config overrides alone) a snapshot costs ${(snapBare.after - snapBare.before).toFixed(1)} ms more, ratio ${(snapBare.after / snapBare.before).toFixed(2)}`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
