// `orchestrate <recipe>` / `orchestrate run <recipe>`: the flags become a RunRequest, the service
// prepares the recipe (service/start-run.ts) and runs it; this file keeps what is the terminal's:
// the flags, Ctrl-C, the live view or --json lines, the final summary and the exit code. The
// --dry-run path validates, expands the DAG and estimates cost without calling a model.
import type { Argv } from 'yargs';
import { attachRunDisplay, type RunDisplay } from '../../display/attach-run-display.js';
import { runDisplayChoice } from '../../display/terminal-text.js';
import { PROVIDERS, type ProviderName } from '../../recipe/index.js';
import type { RunOutcome } from '../../orchestrator/coordinator.js';
import { parseTokenCount } from '../../recipe/duration.js';
import { connectRunControl } from '../../run/run-control-client.js';
import { type CliContext, EXIT } from '../cli-io.js';
import { controlActor } from '../control-actor.js';
import type { CliCommand, CommandArgs } from '../command.js';
import { redisAccessOf, redisOptions, redisUrlOf } from '../redis-options.js';
import { noStdinRecipe } from '../flag-values.js';
import { printProblems, printWarnings } from '../print-problems.js';
import { renderDryRun, renderDryRunMcp } from '../../display/render-dry-run.js';
import { dryRunRecipe } from '../../service/dry-run.js';
import { problemsJson } from '../../service/recipe-check.js';
import type { RedisRunSettings, RunExecution, RunResult } from '../../service/run-execution.js';
import type { RunRequest } from '../../service/run-request.js';
import { prepareRun, startRun } from '../../service/start-run.js';
import { installedRecipeNote } from './init.js';

/**
 * Flags of every command that runs agents (`run` and `resume`): output, colour, threads, and the
 * overrides that resume can change too. Numbers are checked here: yargs turns "--concurrency abc"
 * into NaN without complaint.
 */
export function executionOptions(
  y: Argv,
  describe: { json: string; concurrency: string; budgetUsd: string; budgetTokens: string; runDir: string },
): Argv<object> {
  return redisOptions(y)
    .option('json', { type: 'boolean', default: false, describe: describe.json })
    .option('concurrency', { type: 'number', describe: describe.concurrency })
    .option('budget-usd', { type: 'number', describe: describe.budgetUsd })
    .option('budget-tokens', { type: 'string', describe: describe.budgetTokens })
    .option('run-dir', { type: 'string', describe: describe.runDir })
    .option('full-events', {
      type: 'boolean',
      default: false,
      describe: 'Also log streaming deltas of every agent (run.jsonl and --json)',
    })
    .option('color', {
      type: 'boolean',
      default: true,
      describe: 'Colour the live view and summary (--no-color, or NO_COLOR=1, turns it off)',
    })
    .option('otel', {
      type: 'string',
      describe:
        'Export OpenTelemetry traces (GenAI conventions) over OTLP/HTTP to URL (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318); on by itself when either variable is set',
    })
    .option('agents-per-thread', {
      type: 'number',
      describe:
        'Agents sharing one worker thread (default: the agents that run at once spread over one thread per CPU core but one; 1 isolates each agent on a thread of its own)',
    })
    .check((a) => {
      const wholeAtLeastOne = (v: unknown) =>
        v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 1);
      if (!wholeAtLeastOne(a['agents-per-thread']))
        throw new Error(
          `--agents-per-thread must be a whole number of at least 1 (got ${String(a['agents-per-thread'])})`,
        );
      if (!wholeAtLeastOne(a.concurrency))
        throw new Error(`--concurrency must be a whole number of at least 1 (got ${String(a.concurrency)})`);
      const b = a['budget-usd'];
      if (b !== undefined && !(typeof b === 'number' && Number.isFinite(b) && b >= 0))
        throw new Error(`--budget-usd must be a number of dollars, 0 or more (got ${String(b)})`);
      for (const key of ['budget-usd', 'budget-tokens', 'run-dir', 'otel'])
        if (Array.isArray(a[key])) throw new Error(`--${key} was given more than once`);
      const t = a['budget-tokens'];
      if (t !== undefined && budgetTokensOf(t) === undefined)
        throw new Error(`--budget-tokens must be a token count, 0 or more, e.g. 500000, 400k or 3M (got ${String(t)})`);
      return true;
    });
}

/** The --budget-tokens value as a number (400k, 3M allowed); undefined when absent or malformed. */
export function budgetTokensOf(v: unknown): number | undefined {
  return typeof v === 'string' || typeof v === 'number' ? parseTokenCount(v) : undefined;
}

/** Flags shared by every way of running a recipe (design section 5). */
export function runOptions(y: Argv): Argv<object> {
  const flags = y
    .positional('recipe', { type: 'string', describe: 'Recipe YAML file', demandOption: true })
    .option('dry-run', {
      type: 'boolean',
      default: false,
      describe: 'Validate, print the expanded task DAG and a cost estimate; no model calls',
    })
    .option('list-mcp', {
      type: 'boolean',
      default: false,
      describe: "With --dry-run: start each agent's MCP servers to list the tools it would get, then stop them",
    })
    .option('set', { type: 'string', describe: 'Set an input: --set key=value (repeatable)' })
    .option('model', { type: 'string', describe: 'Model for every agent (overrides the recipe)' })
    .option('provider', {
      type: 'string',
      describe: `${PROVIDERS.join(', ')} (offline), an OpenAI-compatible preset (openai, openrouter, ollama, lmstudio, vllm, llamacpp), or a name under the recipe's providers:`,
    });
  return executionOptions(flags, {
    json: 'JSON on stdout: every run event as a JSON line; --json=full adds message deltas (with --dry-run: the expanded plan)',
    concurrency: 'Task instances running at once',
    budgetUsd: "Run budget in US dollars (replaces the recipe's budget.usd)",
    budgetTokens: "Run budget in tokens, input + output (replaces the recipe's budget.tokens; 500000, 400k, 3M)",
    runDir: 'Folder holding run records (default .orchestrate/runs in the current folder)',
  })
    .example([
      ['orchestrate recipe.yaml', 'run a recipe; its run folder goes to ./.orchestrate/runs'],
      ['orchestrate recipe.yaml --dry-run', 'validate, print the task DAG and a cost estimate; no model calls'],
      ['orchestrate recipe.yaml --set feature="a titleCase function" --budget-usd 2', 'set an input, cap the spend'],
      [
        'orchestrate recipe.yaml --provider anthropic --json=full',
        'a real model; every event (deltas too) as JSON lines',
      ],
    ])
    .check((a) => {
      for (const key of ['model', 'provider', 'run-dir', 'recipe']) {
        if (Array.isArray(a[key])) throw new Error(`--${key} was given more than once`);
      }
      noStdinRecipe(a.recipe);
      // A flag's syntax, not the recipe's: it was reported at the recipe's first line.
      for (const v of setList(a.set))
        if (!/^[^=]+=/.test(v))
          throw new Error(
            `--set ${v === '' ? 'needs a value' : `${v}: expected key=value`}, e.g. --set feature="a titleCase function"`,
          );
      return true;
    });
}

function setList(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** The run request the flags describe. */
function runRequestOf(args: CommandArgs): RunRequest {
  const budgetTokens = budgetTokensOf(args['budget-tokens']);
  return {
    recipe: String(args.recipe),
    set: setList(args.set),
    ...(typeof args.model === 'string' ? { model: args.model } : {}),
    ...(typeof args.provider === 'string' ? { provider: args.provider as ProviderName } : {}),
    ...(typeof args.concurrency === 'number' ? { concurrency: args.concurrency } : {}),
    ...(typeof args['budget-usd'] === 'number' ? { budgetUsd: args['budget-usd'] } : {}),
    ...(budgetTokens !== undefined ? { budgetTokens } : {}),
    ...(typeof args['run-dir'] === 'string' ? { runsDir: args['run-dir'] } : {}),
  };
}

export async function runRecipe(args: CommandArgs, ctx: CliContext): Promise<number> {
  const json = args.json === true;
  const prepared = prepareRun(runRequestOf(args), ctx);
  if (!prepared.ok) {
    if (json) ctx.stdout(`${JSON.stringify({ ok: false, problems: problemsJson(prepared.problems) }, null, 2)}\n`);
    else printProblems(prepared.problems, ctx);
    return EXIT.usage;
  }
  const installedNote = args['dry-run'] === true ? undefined : installedRecipeNote(prepared.recipe.dir);
  if (installedNote) ctx.stderr(installedNote);
  if (!json) printWarnings(prepared.warnings, ctx);
  if (args['dry-run'] === true) {
    const result = await dryRunRecipe(prepared.recipe, ctx, { listMcp: args['list-mcp'] === true });
    if (!result.ok) {
      if (json) ctx.stdout(`${JSON.stringify({ ok: false, problems: problemsJson(result.problems) }, null, 2)}\n`);
      else printProblems(result.problems, ctx);
      return EXIT.usage;
    }
    const mcp = result.mcp;
    if (json)
      ctx.stdout(
        `${JSON.stringify({ ok: true, dryRun: true, ...result.report, ...(mcp.agents.length ? { mcp } : {}) }, null, 2)}\n`,
      );
    else ctx.stdout(renderDryRun(result.report, renderDryRunMcp(mcp, result.report)));
    // Like `mcp list`: a server that was asked to start and did not is a failure.
    return mcp.agents.some((a) => a.servers.some((s) => s.started === false)) ? EXIT.taskFailed : EXIT.ok;
  }
  if (args['list-mcp'] === true) {
    ctx.stderr('orchestrate: --list-mcp lists MCP tools for a dry run\n  hint: add --dry-run\n');
    return EXIT.usage;
  }
  return executeRun(args, ctx, (exec) => startRun(prepared, exec), { budgetUsd: prepared.recipe.budget.usd });
}

/**
 * The --redis settings of a run (--redis, else ORCHESTRATE_REDIS_URL, with the access flags and the
 * cluster secret): undefined for a local run, or why the flags do not make a usable access.
 */
export function redisRunSettingsOf(
  url: string,
  args: CommandArgs,
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; settings: RedisRunSettings } | { ok: false; message: string } {
  const resolved = redisAccessOf(url, args, env);
  if (!resolved.ok) return { ok: false, message: resolved.error };
  const mb = typeof args['max-workspace-mb'] === 'number' ? args['max-workspace-mb'] : undefined;
  return {
    ok: true,
    settings: {
      access: resolved.access,
      ...(mb !== undefined ? { maxWorkspaceBytes: Math.floor(mb * 1024 * 1024) } : {}),
    },
  };
}

const money = (usd: number): string => `$${usd < 0.01 && usd > 0 ? usd.toFixed(4) : usd.toFixed(2)}`;

/** The final summary on stdout: statuses, outputs, usage, cost, where plan.md is. The display layer may replace it. */
export function printRunSummary(outcome: RunOutcome, ctx: CliContext): void {
  const lines: string[] = [`run ${outcome.runId}: ${outcome.status} in ${(outcome.durationMs / 1000).toFixed(1)}s`];
  for (const t of outcome.tasks) {
    for (const i of t.instances) {
      const u = i.usage;
      let line = `  ${i.status.padEnd(11)} ${i.id}`;
      if (u.totalTokens > 0) line += `  ${u.totalTokens} tokens ${money(u.cost)}`;
      if (i.status === 'failed' || i.status === 'cancelled' || i.status === 'skipped')
        line += `  ${i.failure ? `[${i.failure}] ` : ''}${(i.error ?? '').split('\n')[0]}`;
      else if (i.output !== undefined) {
        const out = typeof i.output === 'string' ? i.output : JSON.stringify(i.output);
        const flat = out.replace(/\s+/g, ' ').trim();
        if (flat) line += `  → ${flat.length > 100 ? `${flat.slice(0, 99)}…` : flat}`;
      }
      lines.push(line);
    }
  }
  lines.push(
    `usage: ${outcome.usage.input} input + ${outcome.usage.output} output tokens, ${money(outcome.usage.cost)}`,
  );
  lines.push(`plan:    ${outcome.planFile}`, `result:  ${outcome.resultFile}`);
  const cancelled = outcome.tasks.flatMap((t) => t.instances).filter((i) => i.status === 'cancelled');
  if (outcome.status === 'partial')
    lines.push(`partial: nothing failed; cancelled by a user: ${cancelled.map((i) => i.id).join(', ')}`);
  if (outcome.status !== 'succeeded' && !outcome.leaseLost)
    lines.push(
      `resume:  orchestrate resume ${outcome.dir}${outcome.status === 'partial' ? cancelled.map((i) => ` --retry ${i.id}`).join('') : ''}`,
    );
  ctx.stdout(`${lines.join('\n')}\n`);
}

/** Exit code of a finished run (design section 5): partial (instances a user cancelled) is 1 like failed. */
export function exitCodeOf(status: RunOutcome['status']): number {
  if (status === 'succeeded') return EXIT.ok;
  if (status === 'interrupted') return EXIT.interrupted;
  return EXIT.taskFailed;
}

/** The words of a run that did not start, and its exit code (all are usage errors: exit 2). */
function printRunFailure(result: RunResult & { ok: false }, json: boolean, out: CliContext): number {
  if (result.code === 'problems') {
    if (json) out.stdout(`${JSON.stringify({ ok: false, problems: problemsJson(result.problems) }, null, 2)}\n`);
    else printProblems(result.problems, out);
  } else if (result.code === 'bad_otel_address')
    out.stderr(`orchestrate: ${result.message} (put --otel after the recipe, or give it a URL)\n`);
  else out.stderr(`orchestrate: ${result.message}\n`);
  return EXIT.usage;
}

/**
 * Runs `start` (the service's startRun or resumeRun) with Ctrl-C handling (first: stop every agent
 * cleanly and keep the sessions; second: terminate the threads), --json event lines or the live
 * view, and the summary.
 */
export async function executeRun(
  args: CommandArgs,
  ctx: CliContext,
  start: (exec: RunExecution) => Promise<RunResult>,
  view: { budgetUsd?: number } = {},
): Promise<number> {
  const json = args.json === true;
  // Everything printed goes through the run's redactor once the store exists (recipe `secrets:`
  // and the API key). --json lines are built from events the store already redacted field by field.
  let redact = (s: string): string => s;
  const out: CliContext = {
    ...ctx,
    stdout: (s) => ctx.stdout(json ? s : redact(s)),
    stderr: (s) => ctx.stderr(redact(s)),
  };
  const interrupt = new AbortController();
  const kill = new AbortController();
  let signals = 0;
  let display: RunDisplay | undefined;
  const onSignal = (): void => {
    signals++;
    if (signals === 1) {
      const text =
        'orchestrate: interrupting: every agent is asked to stop (sessions are kept; Ctrl-C again to terminate them now)\n';
      if (display) display.note(text);
      else out.stderr(`\n${text}`);
      interrupt.abort();
    } else kill.abort();
  };
  const notice = (line: string): void => (display ? display.note(line) : out.stderr(line));
  const redisUrl = redisUrlOf(args, ctx.env);
  let redis: RedisRunSettings | undefined;
  if (redisUrl) {
    const settings = redisRunSettingsOf(redisUrl, args, ctx.env);
    if (!settings.ok) {
      out.stderr(`orchestrate: ${settings.message}\n`);
      return EXIT.usage;
    }
    redis = settings.settings;
  }
  let result: RunResult;
  try {
    result = await start({
      beforeStart: () => {
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      },
      cwd: ctx.cwd,
      env: ctx.env,
      signal: interrupt.signal,
      killSignal: kill.signal,
      fullEvents: args['full-events'] === true,
      ...(typeof args['agents-per-thread'] === 'number' ? { agentsPerThread: args['agents-per-thread'] } : {}),
      ...(redis ? { redis } : {}),
      ...(typeof args.otel === 'string' ? { otel: args.otel } : {}),
      ...(typeof args['secret-file'] === 'string' ? { secretFile: args['secret-file'] } : {}),
      onNotice: notice,
      onStore: (store) => {
        redact = (s) => store.redactText(s);
        // The live view draws on the real stderr whenever it is a terminal (stdout may be a file).
        const choice = runDisplayChoice({
          stdoutIsTTY: ctx.isTTY,
          stderrIsTTY: process.stderr.isTTY === true,
          noColorFlag: args.color === false,
          env: ctx.env,
        });
        const live = choice.live;
        const written = (sink: (s: string) => void) => (s: string) => {
          sink(s);
          return true;
        };
        display = attachRunDisplay(store, {
          stream: live ? process.stderr : { write: written(out.stderr) },
          stdout: { write: written(out.stdout), isTTY: ctx.isTTY, columns: process.stdout.columns },
          isTTY: live,
          color: choice.color,
          summaryColor: choice.summaryColor,
          ...(view.budgetUsd !== undefined ? { budgetUsd: view.budgetUsd } : {}),
          mode: json ? (args['full-events'] === true ? 'json-full' : 'json') : 'live',
          // Keys drive the view when they come from a terminal too (run-view.ts); raw mode turns
          // Ctrl-C into a key, so it is sent back to this process as the signal it was.
          ...(live && !json && process.stdin.isTTY === true
            ? {
                interactive: {
                  input: process.stdin,
                  control: connectRunControl(store.dir),
                  by: controlActor('view', ctx.env),
                  onInterrupt: () => process.kill(process.pid, 'SIGINT'),
                },
              }
            : {}),
        });
      },
    });
  } catch (e) {
    // An internal error (its text already redacted by the service) is printed by main().
    display?.finish();
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (!result.ok) return printRunFailure(result, json, out);
  if (display)
    display.finish({
      planFile: result.outcome.planFile,
      resultFile: result.outcome.resultFile,
      ...(result.outcome.leaseLost ? { noResume: true } : {}),
    });
  else if (!json) printRunSummary(result.outcome, out);
  // The run stopped on its own files (disk full, unwritable log): say which file and why.
  if (result.outcome.error) out.stderr(`orchestrate: ${result.outcome.error}\n`);
  return exitCodeOf(result.outcome.status);
}

export const runCommand: CliCommand = {
  command: ['$0 <recipe>', 'run <recipe>'],
  describe: 'Run a recipe (--dry-run: validate, show the plan and a cost estimate)',
  builder: runOptions,
  run: runRecipe,
};
