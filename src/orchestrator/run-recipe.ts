// Starting and resuming runs: the entry points the CLI and the SDK call. They load the recipe,
// pick the runs folder, create (or reopen) the run store, and hand over to the Coordinator.
import { basename, join, resolve } from 'node:path';
import { ORCHESTRATOR_DEFAULTS } from './defaults.js';
import { Coordinator, type CoordinatorOptions, type RunOutcome } from './coordinator.js';
import { loadRecipe, type LoadedRecipe, type LoadOptions, type RecipeProblem } from '../recipe/index.js';
import { foldEvents } from '../run/run-fold.js';
import { takeRunLease, type HeldRunLease, type TakeRunLease } from '../run/run-lease.js';
import { readRunLog, resolveRunDir, RunStore } from '../run/run-store.js';
import { runFolderWriteProblem, runsDirReadProblem, runsDirWriteProblem } from '../run/run-dir-access.js';
import { runRedactor } from '../run/secrets.js';
import { closeMcpRunHost } from '../tools/mcp/run-host-registry.js';
import { inputsNotice, loadAndCaptureRecipe, loadTrustedRecipe } from '../run/trusted-recipe.js';
import { displayPath } from '../util/display-path.js';

export type RunOptions = Omit<CoordinatorOptions, 'recipe' | 'store' | 'replay' | 'overrides'> & {
  /**
   * Folder holding run folders (default: `.orchestrate/runs` under the load's `cwd`, else the
   * process's working folder; never beside the recipe, which may sit in a read-only installed package).
   */
  runsDir?: string;
  runId?: string;
  /** Called with the store before the first event is written (subscribe for --json or a live view). */
  onStore?: (store: RunStore) => void;
  /**
   * Takes the run's lease (default: the run folder's file lease). A distributed run also holds
   * one in Redis, which its workers check (cluster/redis-run-lease.ts).
   */
  takeLease?: (dir: string, runId: string) => Promise<TakeRunLease>;
  /**
   * A step once the coordinator is done, under the run's lease (the layer that composes the run
   * passes the publish layer's: its changesets.json, when a task has `publish:`).
   */
  afterRun?: (runDir: string, recipe: LoadedRecipe) => void;
};

function leaseOf(opts: RunOptions, dir: string, runId: string): Promise<TakeRunLease> {
  return opts.takeLease ? opts.takeLease(dir, runId) : Promise.resolve(takeRunLease(dir, runId));
}

export type StartResult =
  | { ok: true; outcome: RunOutcome }
  | { ok: false; kind: 'recipe'; problems: RecipeProblem[] }
  | { ok: false; kind: 'usage'; message: string };

/** The runs folder when --run-dir is not given: `.orchestrate/runs` under the working folder `cwd`. */
export function defaultRunsDir(cwd: string): string {
  return join(cwd, ORCHESTRATOR_DEFAULTS.stateDirName, ORCHESTRATOR_DEFAULTS.runsDirName);
}

/** Text for a recipe whose agents need the Anthropic API when no key is set; undefined when fine. */
export function missingApiKey(
  recipe: LoadedRecipe,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (env.ANTHROPIC_API_KEY) return undefined;
  const needing = Object.values(recipe.agents).filter((a) => a.provider === 'anthropic');
  if (needing.length === 0) return undefined;
  const offline = Object.values(recipe.agents).every((a) => a.script !== undefined);
  return (
    `agent${needing.length > 1 ? 's' : ''} ${needing.map((a) => `"${a.name}"`).join(', ')} of this recipe call${needing.length > 1 ? '' : 's'} the Anthropic API, and ANTHROPIC_API_KEY is not set.\n` +
    `  Either export ANTHROPIC_API_KEY=sk-ant-..., or run offline with --provider scripted${offline ? '' : ' (each agent then needs a script: file)'}.`
  );
}

function overridesOf(o: LoadOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (o.model !== undefined) out.model = o.model;
  if (o.provider !== undefined) out.provider = o.provider;
  if (o.concurrency !== undefined) out.concurrency = o.concurrency;
  if (o.budgetUsd !== undefined) out.budgetUsd = o.budgetUsd;
  if (o.budgetTokens !== undefined) out.budgetTokens = o.budgetTokens;
  return out;
}

/** Loads a recipe file and runs it to the end (or until interrupted). */
export async function runRecipeFile(path: string, load: LoadOptions = {}, opts: RunOptions = {}): Promise<StartResult> {
  const env = opts.env ?? load.env ?? process.env;
  const loaded = loadRecipe(path, { ...load, env });
  if (!loaded.ok) return { ok: false, kind: 'recipe', problems: loaded.problems };
  return runLoadedRecipe(loaded.recipe, load, { ...opts, env });
}

/** Runs a recipe that is already loaded (the CLI loads it once for errors and dry runs). */
export async function runLoadedRecipe(
  recipe: LoadedRecipe,
  load: LoadOptions = {},
  opts: RunOptions = {},
): Promise<StartResult> {
  const env = opts.env ?? load.env ?? process.env;
  // A distributed run's agents call the model with their workers' keys, not this machine's.
  const missing = opts.executor ? undefined : missingApiKey(recipe, env);
  if (missing) return { ok: false, kind: 'usage', message: missing };
  const cwd = load.cwd ?? process.cwd();
  const runsDir = opts.runsDir ? resolve(cwd, opts.runsDir) : defaultRunsDir(cwd);
  const unwritable = runsDirWriteProblem(runsDir);
  if (unwritable) return { ok: false, kind: 'usage', message: unwritable };
  const store = RunStore.create(runsDir, opts.runId, { redactor: runRedactor(recipe, env) });
  // One coordinator per run: the lease is taken before the first event is written.
  const taken = await leaseOf(opts, store.dir, store.runId);
  if (!taken.ok) return { ok: false, kind: 'usage', message: taken.message };
  try {
    // The inputs are trusted as of now: every later session reads these copies (run/trusted-recipe.ts).
    const captured = loadAndCaptureRecipe(store.dir, recipe.file, { ...load, env });
    if (!captured.ok) return { ok: false, kind: 'recipe', problems: captured.problems };
    opts.onStore?.(store);
    const { takeLease: _take, afterRun: _after, ...coordinatorOpts } = opts;
    const coordinator = new Coordinator({
      ...coordinatorOpts,
      ...taken.lease.signals(opts),
      env,
      recipe,
      store,
      overrides: overridesOf(load),
    });
    return {
      ok: true,
      outcome: await whileLeased(taken.lease, store, () => runThenPlan(coordinator, store, recipe, opts.afterRun)),
    };
  } finally {
    await taken.lease.release();
  }
}

/**
 * The run, then its end-of-run step (the publish layer's changesets.json): computed from the
 * record just written, nothing pushed. A step that fails leaves the run's outcome as it is
 * (`orchestrate publish <run>` renders the changesets again and says why).
 */
async function runThenPlan(
  coordinator: Coordinator,
  store: RunStore,
  recipe: LoadedRecipe,
  afterRun: RunOptions['afterRun'],
): Promise<RunOutcome> {
  const outcome = await coordinator.run();
  try {
    afterRun?.(store.dir, recipe);
  } catch {
    // the run folder is not writable any more: the outcome already says so when it matters
  }
  return outcome;
}

/**
 * Runs a coordinator that holds the run's lease. A lost lease stops it like a second Ctrl-C and
 * fences the store (the other coordinator owns the folder now); the outcome says why.
 */
async function whileLeased(lease: HeldRunLease, store: RunStore, run: () => Promise<RunOutcome>): Promise<RunOutcome> {
  lease.onLost = (message) => store.fence(message);
  // The run's scope: run MCP servers end with it.
  const outcome = await run().finally(() => closeMcpRunHost(store.runId));
  return lease.lostMessage ? { ...outcome, status: 'interrupted', error: lease.lostMessage, leaseLost: true } : outcome;
}

export interface ResumeOptions extends RunOptions {
  cwd?: string;
  /**
   * Overrides for this resume; the recorded ones apply otherwise. A budget given here replaces the
   * run's budget with that total, and the spend of the earlier sessions counts against it.
   */
  overrides?: Pick<LoadOptions, 'model' | 'provider' | 'concurrency' | 'budgetUsd' | 'budgetTokens'>;
  /**
   * Load the recipe and its files as they are now instead of the copies captured at the run's
   * start (`resume --reload-recipe`): validated and captured again. The value names who asked.
   */
  reloadRecipeBy?: string;
  /** Told what the user should know about the inputs (files changed since the capture, an older run). */
  onNotice?: (text: string) => void;
}

/** The folder of the run a resume names (id, unique id prefix, or folder), or what to tell the user. */
export function resumeRunFolder(
  runRef: string,
  cwd: string,
  runsDirOption?: string,
): { dir: string } | { message: string } {
  const runsDir = runsDirOption ? resolve(cwd, runsDirOption) : defaultRunsDir(cwd);
  const unreadable = runsDirReadProblem(runsDir);
  if (unreadable) return { message: unreadable };
  const dir = resolveRunDir(runsDir, resolve(cwd, runRef)) ?? resolveRunDir(runsDir, runRef);
  if (dir) return { dir };
  return {
    message: `no run "${runRef}" in ${runsDir}. Give a run id, a unique prefix of one, or the path of a run folder (orchestrate runs lists them).`,
  };
}

/** Finds a run (id, unique id prefix, or folder) and continues it. */
export async function resumeRunDir(runRef: string, opts: ResumeOptions = {}): Promise<StartResult> {
  const cwd = opts.cwd ?? process.cwd();
  const found = resumeRunFolder(runRef, cwd, opts.runsDir);
  if ('message' in found) return { ok: false, kind: 'usage', message: found.message };
  const { dir } = found;
  const unwritable = runFolderWriteProblem(dir);
  if (unwritable) return { ok: false, kind: 'usage', message: unwritable };
  // One coordinator per run: nothing is read or written before this process holds the run's lease.
  const taken = await leaseOf(opts, dir, basename(dir));
  if (!taken.ok) return { ok: false, kind: 'usage', message: taken.message };
  try {
    return await resumeLeased(dir, cwd, taken.lease, opts);
  } finally {
    await taken.lease.release();
  }
}

/** The resume itself, once this process holds the run's lease. */
async function resumeLeased(dir: string, cwd: string, lease: HeldRunLease, opts: ResumeOptions): Promise<StartResult> {
  const log = readRunLog(join(dir, 'run.jsonl'));
  const replay = foldEvents(log.events);
  const start = replay.start;
  if (!start) return { ok: false, kind: 'usage', message: `${dir} has no run_start event; it cannot be resumed.` };
  if (replay.lastEndStatus === 'succeeded')
    return { ok: false, kind: 'usage', message: `run ${start.runId} already succeeded; there is nothing to resume.` };
  // The overrides of the last session (a budget raised on an earlier resume stays raised).
  const recorded = (replay.overrides ?? start.overrides ?? {}) as LoadOptions;
  const load: LoadOptions = {
    cwd,
    env: opts.env ?? process.env,
    set: Object.entries(start.inputs).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`),
    ...recorded,
    ...opts.overrides,
  };
  const loaded = loadTrustedRecipe(dir, start.recipe, load, {
    ...(opts.reloadRecipeBy !== undefined ? { reloadBy: opts.reloadRecipeBy } : {}),
  });
  if (!loaded.ok)
    return loaded.problems
      ? { ok: false, kind: 'recipe', problems: loaded.problems }
      : { ok: false, kind: 'usage', message: loaded.message ?? `the recipe of run ${start.runId} cannot be loaded` };
  const env = opts.env ?? process.env;
  const missing = opts.executor ? undefined : missingApiKey(loaded.recipe, env);
  if (missing) return { ok: false, kind: 'usage', message: missing };
  const store = RunStore.open(dir, { redactor: runRedactor(loaded.recipe, env) });
  const notice = inputsNotice(
    start.runId,
    loaded.inputs,
    (f) => displayPath(f, cwd),
    `orchestrate resume ${start.runId} --reload-recipe`,
  );
  if (notice) opts.onNotice?.(store.redactText(notice));
  opts.onStore?.(store);
  const { takeLease: _take, reloadRecipeBy: _reload, onNotice: _notice, afterRun: _after, ...coordinatorOpts } = opts;
  const coordinator = new Coordinator({
    ...coordinatorOpts,
    ...lease.signals(opts),
    env,
    recipe: loaded.recipe,
    store,
    replay,
    overrides: { ...recorded, ...opts.overrides },
    inputs: loaded.inputs,
  });
  return {
    ok: true,
    outcome: await whileLeased(lease, store, () => runThenPlan(coordinator, store, loaded.recipe, opts.afterRun)),
  };
}
