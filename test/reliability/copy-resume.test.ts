// A project folder (recipe, a git repo, and the run under .orchestrate/runs) copied elsewhere
// and resumed there works on the copy: the run folder stores its paths relative to the run
// (run-paths.ts), and a worktree copied with the repository is linked to the copy's repository.
// The original stays byte for byte as the kill left it, and a copy still resumes once the
// original is deleted.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, events, gitInit, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { exited, filesUnder, until } from './helpers/reliability-fixtures.js';
import { readRunLog } from '../../src/run/run-store.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';

const made: string[] = [];
afterAll(() => {
  cleanupTempDirs();
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const tempDir = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
};

// The recipe sits in a subfolder and works on a repository beside it (paths outside the recipe's
// folder), the runs are recorded in the project folder (the working folder of the CLI).
// first edits the repo; second, in a worktree of its own, edits its copy of the repo and then
// waits in a tool call (where the test kills the run); third edits the repo after second.
const RECIPE = `name: copied
provider: scripted
script: script.yaml
agents:
  editor: { tools: [edit, bash], sandbox: none }
tasks:
  - id: first
    agent: editor
    cwd: ../../repo
    writes: ["config.txt"]
    prompt: "Edit first"
  - id: second
    needs: [first]
    agent: editor
    cwd: ../../repo
    isolation: worktree
    env: { SYNC_DIR: "\${{ env.SYNC_DIR }}" }
    prompt: "Edit second"
  - id: third
    needs: [second]
    agent: editor
    cwd: ../../repo
    writes: ["config.txt"]
    prompt: "Edit third"
`;

const SCRIPT = `conversations:
  - match: "Edit first"
    turns:
      - tools: [{ name: edit, args: { path: config.txt, edits: [{ oldText: "a: old", newText: "a: new" }] } }]
      - text: "first done"
  - match: "Edit second"
    turns:
      - tools: [{ name: edit, args: { path: config.txt, edits: [{ oldText: "b: old", newText: "b: new" }] } }]
      - tools: [{ name: bash, args: { command: 'touch "$SYNC_DIR/waiting"; for i in $(seq 1200); do [ -f "$SYNC_DIR/go" ] && break; sleep 0.05; done' } }]
      - text: "second done"
  - match: "Edit third"
    turns:
      - tools: [{ name: edit, args: { path: config.txt, edits: [{ oldText: "c: old", newText: "c: new" }] } }]
      - text: "third done"
`;

/** The CLI run from `cwd` (the project folder: its runs live in `.orchestrate/runs` there). */
function cliIn(cwd: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...CLI_NODE_ARGS, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Every file under `dir` with its bytes, by path relative to `dir`. */
/**
 * A killed run leaves its control socket (control.sock) in the run folder: Node's cpSync cannot
 * copy a socket (GNU `cp -r` can) and a socket has no content to compare; a resume replaces it.
 */
const notSocket = (p: string): boolean => !lstatSync(p).isSocket();

function snapshotTree(dir: string): Map<string, string> {
  return new Map(
    filesUnder(dir)
      .filter(notSocket)
      .map((f) => [relative(dir, f), readFileSync(f).toString('base64')]),
  );
}

describe('resuming a copied project folder', { timeout: 180_000 }, () => {
  it("changes the copy's files, never the original's, and works with the original deleted", async () => {
    const project = tempProject({
      'recipes/copied/recipe.yaml': RECIPE,
      'recipes/copied/script.yaml': SCRIPT,
      'repo/config.txt': 'a: old\nb: old\nc: old\n',
    });
    gitInit(join(project, 'repo'));
    const sync = tempDir('orch-copy-sync-');
    const env = { SYNC_DIR: sync };

    // The run, killed while second waits in its tool call (first done, second's worktree edited).
    const child = cliIn(project, ['recipes/copied/recipe.yaml'], env);
    const done = exited(child);
    await until(() => existsSync(join(sync, 'waiting')), 'second to wait in its tool call', 90_000);
    child.kill('SIGKILL');
    await done;
    writeFileSync(join(sync, 'go'), ''); // lets the orphaned tool call end; it writes nothing
    const runsDir = join(project, '.orchestrate', 'runs');
    const runId = ofType(
      readRunLog(join(filesUnder(runsDir).find((f) => f.endsWith('run.jsonl'))!)).events,
      'run_start',
    )[0]!.runId;
    const runDir = join(runsDir, runId);
    expect(readFileSync(join(project, 'repo/config.txt'), 'utf8')).toBe('a: new\nb: old\nc: old\n');

    // The run folder holds no absolute path of the project: the log's paths are relative.
    const stored = readFileSync(join(runDir, 'run.jsonl'), 'utf8');
    expect(stored).not.toContain(project);
    const worktree = ofType(events(runDir), 'instance_start').find((e) => e.worktree)!.worktree!;
    expect(worktree.startsWith(runDir)).toBe(true);

    // Two copies of the whole project folder; the original is then left alone.
    const copies = tempDir('orch-copies-');
    const copyA = join(copies, 'a');
    const copyB = join(copies, 'b');
    cpSync(project, copyA, { recursive: true, filter: notSocket });
    cpSync(project, copyB, { recursive: true, filter: notSocket });
    const before = snapshotTree(project);

    const a = await exited(cliIn(copyA, ['resume', runId], env));
    expect(a.code, a.stderr).toBe(0);
    // The copy changed: third's edit in its repo, second's patch from its worktree.
    expect(readFileSync(join(copyA, 'repo/config.txt'), 'utf8')).toBe('a: new\nb: old\nc: new\n');
    const copyRun = join(copyA, '.orchestrate', 'runs', runId);
    expect(readFileSync(join(copyRun, 'patches', 'second.diff'), 'utf8')).toMatch(/\+b: new/);
    const result = JSON.parse(readFileSync(join(copyRun, 'result.json'), 'utf8')) as {
      recipe: string;
      root: string;
      instances: { status: string }[];
    };
    expect(result.instances.map((i) => i.status)).toEqual(['done', 'done', 'done']);
    expect(result.recipe).toBe('recipe.yaml');
    expect(result.root).toBe('../../../recipes/copied');
    // The original: byte for byte what the kill left (its repo, its worktree, its git metadata, its run).
    expect(snapshotTree(project)).toEqual(before);

    // The original deleted: the other copy resumes on its own files.
    rmSync(project, { recursive: true, force: true });
    const b = await exited(cliIn(copyB, ['resume', runId], env));
    expect(b.code, b.stderr).toBe(0);
    expect(readFileSync(join(copyB, 'repo/config.txt'), 'utf8')).toBe('a: new\nb: old\nc: new\n');
    expect(readFileSync(join(copyB, '.orchestrate', 'runs', runId, 'patches', 'second.diff'), 'utf8')).toMatch(
      /\+b: new/,
    );
  });
});
