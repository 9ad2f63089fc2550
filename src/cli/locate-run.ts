// The `<run>` argument of the commands that name a run: a run id, a unique prefix of one, or a run
// folder, looked up under --run-dir (default .orchestrate/runs). Prints why when nothing matches.
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { defaultRunsDir } from '../display/find-run.js';
import { RUN_LOG } from '../run/run-store.js';
import { locateRun } from '../service/locate-run.js';
import type { CliContext } from './cli-io.js';
import type { CommandArgs } from './command.js';

/** The `<run>` positional of every command that names one run (its value goes to locateRunArg). */
export const RUN_ARG = {
  type: 'string',
  describe: 'Run id, unique prefix of one, or run folder path',
  demandOption: true,
} as const;

/** `--run-dir`: where a command looks for run records. */
export const RUN_DIR_OPTION = {
  type: 'string',
  describe: 'Folder holding run records (default .orchestrate/runs)',
} as const;

/** The folder of run records: --run-dir (relative to the working folder), else the default one. */
export function runsDirArg(args: CommandArgs, ctx: Pick<CliContext, 'cwd'>): string {
  return typeof args['run-dir'] === 'string' ? resolve(ctx.cwd, args['run-dir']) : defaultRunsDir(ctx.cwd);
}

/**
 * The run folder, or undefined after printing the reason (the caller exits with a usage error).
 * `readsRunLog: false` for a command that reads other files of the folder only (status reads
 * changesets.json), so a run log without its start does not stop it.
 */
export function locateRunArg(
  args: CommandArgs,
  ctx: CliContext,
  options: { readsRunLog?: boolean } = {},
): string | undefined {
  const located = locateRun(runsDirArg(args, ctx), String(args.run), ctx.cwd);
  if (located.ok) {
    const unreadable = options.readsRunLog === false ? undefined : runStartProblem(located.dir);
    if (unreadable === undefined) return located.dir;
    ctx.stderr(`orchestrate: ${unreadable}\n`);
    return undefined;
  }
  ctx.stderr(`orchestrate: ${notFoundMessage(args, ctx, located.code, located.message)}\n`);
  return undefined;
}

/** Why args.run names no run, with where it is when that is somewhere else the user may mean. */
function notFoundMessage(args: CommandArgs, ctx: Pick<CliContext, 'cwd'>, code: string, message: string): string {
  if (code !== 'no_such_run') return message;
  const query = String(args.run);
  const notARun = notARunFolderMessage(query, ctx.cwd);
  if (notARun !== undefined) return notARun;
  const above = typeof args['run-dir'] === 'string' ? undefined : runsFolderAbove(query, ctx.cwd);
  return above === undefined
    ? message
    : `${message}\n  hint: run ${query} is in ${above.dir} (a folder above this one): pass --run-dir ${above.runsDir}, or run the command from ${dirname(dirname(above.runsDir))}`;
}

/**
 * Commands look in ./.orchestrate/runs only, so one typed in a subfolder of the project (src/)
 * found nothing; the runs folder of a folder above that holds the run, to name in the hint.
 */
function runsFolderAbove(query: string, cwd: string): { runsDir: string; dir: string } | undefined {
  for (let dir = dirname(resolve(cwd)); ; dir = dirname(dir)) {
    const runsDir = defaultRunsDir(dir);
    if (existsSync(runsDir)) {
      const found = locateRun(runsDir, query, dir);
      if (found.ok) return { runsDir, dir: found.dir };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * For commands whose service finds the run itself (resume): what the CLI knows beyond the
 * service's "no run" (a path that is not a run folder, the run in a folder above); undefined when
 * the run is found or there is nothing to add.
 */
export function notARunArgMessage(args: CommandArgs, ctx: Pick<CliContext, 'cwd'>): string | undefined {
  const located = locateRun(runsDirArg(args, ctx), String(args.run), ctx.cwd);
  if (located.ok) return undefined;
  const message = notFoundMessage(args, ctx, located.code, located.message);
  return message === located.message ? undefined : message;
}

/**
 * Why a path the user gave names no run although it exists (a file, the project folder, the runs
 * folder itself): "no run X in .orchestrate/runs" sent them looking for a typo in what was a path.
 * Undefined when nothing is at that path, or it is a run folder.
 */
export function notARunFolderMessage(query: string, cwd: string): string | undefined {
  const path = resolve(cwd, query);
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    return undefined;
  }
  const giveOne = 'give a run id (`orchestrate runs` lists them), a unique prefix of one, or the path of a run folder';
  if (!isFolder) return `${path} is a file, not a run folder\n  hint: ${giveOne}`;
  if (existsSync(join(path, RUN_LOG))) return undefined;
  if (holdsRuns(path))
    return `${path} is a folder of runs, not one run\n  hint: \`orchestrate runs --run-dir ${path}\` lists them; name one by its id with --run-dir ${path}`;
  const inside = defaultRunsDir(path);
  if (holdsRuns(inside))
    return `${path} is not a run folder; the runs started there are in ${inside}\n  hint: \`orchestrate runs --run-dir ${inside}\` lists them; name one by its id with --run-dir ${inside}`;
  return `${path} is a folder but not a run folder (it has no ${RUN_LOG})\n  hint: ${giveOne}`;
}

/** True when some folder right under `dir` is a run folder (has its run log). */
export function holdsRuns(dir: string): boolean {
  try {
    return readdirSync(dir, { withFileTypes: true }).some(
      (e) => e.isDirectory() && existsSync(join(dir, e.name, RUN_LOG)),
    );
  } catch {
    return false;
  }
}

/** How much of run.jsonl is read to find its run_start (the first event; its plan can be long). */
const RUN_START_READ_BYTES = 1 << 20;
/** The run store looks for run_start among the first lines too (a torn line may come first). */
const RUN_START_LINES = 20;

/**
 * Why a run folder has nothing to show: an empty run.jsonl, or one whose first lines hold no
 * run_start (garbage, a foreign file). Such a run showed as "run  ·  ·" started in 1970, and
 * cancel offered a resume that resume then refused. Undefined when the start is there (or lies
 * beyond what is read here: the readers themselves decide then).
 */
export function runStartProblem(dir: string): string | undefined {
  const file = join(dir, RUN_LOG);
  let head: string;
  let whole: boolean;
  try {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(RUN_START_READ_BYTES);
      const n = readSync(fd, buf, 0, buf.length, 0);
      head = buf.subarray(0, n).toString('utf8');
      whole = n < buf.length;
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    return `cannot read ${file}: ${(e as Error).message}\n  hint: check that the run folder is readable`;
  }
  if (head.trim() === '')
    return `${dir} holds no run record: its ${RUN_LOG} is empty (the run stopped before its first event, e.g. on a full disk)\n  hint: start the recipe again; \`orchestrate runs\` lists the runs that have records`;
  const lines = head.split('\n');
  // The last line of a partial read may be cut off: only whole lines count.
  const complete = whole ? lines : lines.slice(0, -1);
  if (complete.slice(0, RUN_START_LINES).some(isRunStart)) return undefined;
  if (!whole && complete.length < RUN_START_LINES) return undefined; // the start may lie past what was read
  return `${file} has no run_start record in its first lines (they are not run events), so there is no run to read\n  hint: look at the file itself; if it was overwritten, the run cannot be shown or resumed: start the recipe again`;
}

function isRunStart(line: string): boolean {
  try {
    return (JSON.parse(line) as { type?: unknown }).type === 'run_start';
  } catch {
    return false; // a torn or foreign line
  }
}
