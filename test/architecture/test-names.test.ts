// Unit tests are named after the file they test (issue #43): test/<folder>/<x>.test.ts tests
// src/<folder>/<x>.ts, so a reader finds a file's tests by its name and a test's file by its own.
// A test that is about a behaviour across files (a real run end to end, a recipe key, an attack)
// is named after that behaviour instead, and is listed below with what it covers; a test of one of
// test/'s own helpers is named after the helper. Whole folders of behaviour tests are listed once.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TEST = join(ROOT, 'test');
const SRC = join(ROOT, 'src');

/** Folders whose every test is about a behaviour, not a file. */
const BEHAVIOUR_FOLDERS: Record<string, string> = {
  architecture: 'rules over the code base as a whole (layers, names, who imports what)',
  security: 'attacks, each named after what it tries',
  reliability: 'faults (kills, full disks, bad input) and the recovery across layers',
  fixtures: 'not tests: files the tests read',
};

/**
 * Tests named after a behaviour, by folder. Keep an entry to one line on what it covers; a unit
 * test of one file does not belong here: name it after its file (git mv).
 */
const BEHAVIOUR_TESTS: Record<string, string> = {
  // ai/
  'ai/provider-conformance.test.ts': 'one conformance suite every provider runs',
  // cli/: the command line end to end, as a user runs it
  'cli/agent-anthropic.test.ts': '`orchestrate agent` against the fake Anthropic API',
  'cli/agent-openai.test.ts': '`orchestrate agent` against the fake OpenAI API',
  'cli/agent-cut-off-json.test.ts': 'a cut-off reply of `agent --mode json`',
  'cli/agent-cut-off-turn.test.ts': 'a cut-off turn of `orchestrate agent`',
  'cli/agent-files-cli.test.ts': 'agent files given to `orchestrate agent`',
  'cli/agent-git.test.ts': "`orchestrate agent`'s git workspace",
  'cli/agent-interactive.test.ts': 'the interactive agent in a terminal',
  'cli/agent-interactive-resume.test.ts': 'resuming an interactive agent session',
  'cli/agent-interactive-scrollback.test.ts': "the interactive agent's scrollback",
  'cli/agent-limits.test.ts': "`orchestrate agent`'s turn and budget limits",
  'cli/bad-recipes.test.ts': 'every broken recipe of the corpus: file:line:col, exit 2, no stack',
  'cli/budget-edges.test.ts': 'run budgets at their edges, resumed with more budget',
  'cli/cancel-steer.test.ts': '`cancel` and `steer` against a live run',
  'cli/closed-pipe.test.ts': 'a reader that goes away (EPIPE)',
  'cli/doctor-endpoints.test.ts': "`doctor`'s checks of provider endpoints",
  'cli/dry-run.test.ts': '`orchestrate <recipe> --dry-run`',
  'cli/flags.test.ts': 'flags of every command: mistakes, completions',
  'cli/init-campaign.test.ts': 'the campaign example `init` copies, run',
  'cli/json-full.test.ts': '`--json` and `--json=full` event lines',
  'cli/mcp-command.test.ts': '`orchestrate mcp` and its subcommands',
  'cli/mcp-serve-http.test.ts': '`mcp serve --http`: token, sessions',
  'cli/mcp-serve-wait.test.ts': "`mcp serve`'s run_recipe with wait: true",
  'cli/package.test.ts': 'the packed npm package installs and runs',
  'cli/run-dir-errors.test.ts': 'a --run-dir that cannot hold runs, for every command',
  'cli/sandbox-cli.test.ts': 'the sandbox as the command line sets it up',
  'cli/watch-writing.test.ts': '`watch` of a run that is being written',
  // Unit tests of cli/commands/status-watch.ts and watch.ts: move to test/cli/commands/ (another
  // engineer was editing them when the others moved).
  'cli/status-watch.test.ts': '`status --watch` (cli/commands/status-watch.ts)',
  'cli/watch.test.ts': '`watch` in a second terminal (cli/commands/watch.ts)',
  // cluster/: distributed runs end to end (Redis, worker processes)
  'cluster/distributed-board.test.ts': 'the task board across workers',
  'cluster/distributed-mcp.test.ts': 'MCP servers of agents on workers',
  'cluster/distributed-peek.test.ts': '`peek` at an agent on a worker',
  'cluster/distributed-run.test.ts': 'a run whose agents run on workers',
  'cluster/distributed-smoke.test.ts': 'the distributed quick start',
  'cluster/distributed-train-attempts.test.ts': 'the merge train and best-of-N attempts on workers',
  'cluster/extension-shipping.test.ts': 'extensions shipped to workers',
  'cluster/worker-policy-mcp.test.ts': "a worker's policy on MCP servers",
  'cluster/workspace-fast-transfer.test.ts': 'workspaces sent to workers without a full copy',
  // display/: views of real runs and the interactive app driven like a user
  'display/interactive/app.test.ts': 'the interactive app, key by key',
  'display/interactive/cut-off-and-cancel.test.ts': 'a cut-off reply and a cancel in the interactive app',
  'display/interactive/scrollback.test.ts': "the interactive app's scrollback",
  'display/live-view-tty.test.ts': 'the live view in a real terminal',
  'display/real-run.test.ts': 'every view of one real run',
  'display/run-view-changesets.test.ts': "the run view's changesets",
  'display/run-view-tty.test.ts': 'the run view in a real terminal',
  'display/turn-counts.test.ts': 'one turn count in every view',
  // mcp/
  'mcp/provider-arg.test.ts': "every tool's provider argument, as --provider",
  // orchestrator/: behaviours of a run end to end
  'orchestrator/adaptive-fan-out.test.ts': 'fan-out paced by what providers allow',
  'orchestrator/adaptive-permits.test.ts': 'permits that follow rate-limit headers',
  'orchestrator/bounded-instances.test.ts': 'a fan-out of many instances stays bounded',
  'orchestrator/fallback-providers.test.ts': 'fallback models across providers',
  'orchestrator/missing-api-key.test.ts': 'a recipe that needs a key nobody set',
  'orchestrator/mixed-providers.test.ts': 'one run over several providers',
  'orchestrator/peek-linger.test.ts': '`peek` after the agent ended',
  'orchestrator/permit-listeners.test.ts': 'no listener left on the abort signal per permit',
  'orchestrator/plan-write-delay.test.ts': 'plan.md rewritten at most every interval',
  'orchestrator/protocol-event-fast-path.test.ts':
    "parseWorkerMessage's fast path agrees with the schema (one aspect of protocol.ts)",
  'orchestrator/provider-limits.test.ts': "a recipe's limits per provider",
  'orchestrator/recipe-hooks-run.test.ts': "a recipe's hooks in a run",
  'orchestrator/recipes.test.ts': 'the example recipes, run',
  'orchestrator/resume-continue.test.ts': 'resume continues interrupted agents',
  'orchestrator/run-control.test.ts': 'a live run driven through its control socket',
  'orchestrator/run-control-peek.test.ts': '`peek` through the control socket',
  'orchestrator/shared-threads.test.ts': 'agents sharing worker threads',
  'orchestrator/task-outcome-complexity.test.ts': "a task's outcome in bounded time",
  'orchestrator/team-board.test.ts': 'the task board in a run',
  'orchestrator/usage-accounting.test.ts': 'usage and cost counted once',
  'orchestrator/usage-reconcile.test.ts': 'usage reconciled after a crash',
  'orchestrator/worker-start-failure.test.ts': 'threads that cannot start',
  'orchestrator/writes-cwd.test.ts': '`writes:` relative to the working folder',
  'orchestrator/control/approval-gates-run.test.ts': 'approval gates in a real run',
  'orchestrator/control/task-board-complexity.test.ts': 'the task board in bounded time',
  'orchestrator/pacing/cache-warmup-run.test.ts': 'the cache warm-up in a real run',
  'orchestrator/pacing/learned-limits-resume.test.ts': 'learned provider limits kept across a resume',
  'orchestrator/pacing/pacing-key.test.ts': 'the `pacing:` recipe key',
  'orchestrator/schedule/attempts.test.ts': 'best-of-N attempts end to end',
  'orchestrator/schedule/schedulable-writes.test.ts':
    'which overlapping writes: instances are kept apart (task-walk.ts)',
  'orchestrator/worker/failed-result.test.ts': "a failed worker result keeps its reason's data",
  'orchestrator/worker/pair-channel.test.ts': "a pair channel's close across a real thread",
  'orchestrator/workspace/merge-train-resume.test.ts': "the merge train's resume guarantees on a real repository",
  'orchestrator/workspace/verify-sandbox.test.ts': '`verify:` and `run:` commands in the sandbox',
  // publish/: campaigns against the fake forges
  'publish/campaign-github.test.ts': 'a campaign on GitHub',
  'publish/campaign-follow-up.test.ts': 'a campaign followed through to its pull requests',
  'publish/campaign-follow-up-approve.test.ts': '`follow_up.approve:` on GitHub',
  'publish/follow-up-waiting-views.test.ts':
    'a follow-up round waiting for approval in status, show, --json and the web page',
  'publish/campaign-follow-up-gitlab.test.ts': 'a campaign followed through on GitLab',
  'publish/campaign-gitlab.test.ts': 'a campaign on GitLab',
  'publish/campaign-rebase.test.ts': '`publish --rebase`',
  'publish/changeset-status.test.ts': '`orchestrate status` per changeset',
  'publish/draft-flip.test.ts': 'a draft pull request made ready',
  'publish/https-push.test.ts': 'pushes over HTTPS',
  'publish/publish-gate-kill.test.ts': 'the publish gate across a kill',
  'publish/pull-request-body.test.ts': "a pull request's body",
  'publish/rebase-after-follow-up.test.ts': '`publish --rebase` after follow-up rounds',
  'publish/select-changesets.test.ts': 'which changesets --only selects',
  'publish/ssh-push.test.ts': 'pushes over SSH',
  // recipe/: recipe keys and the corpus
  'recipe/agent-files-corpus.test.ts': 'the corpus of agent files',
  'recipe/approve-prompts.test.ts': 'the `approve:` prompts',
  'recipe/board.test.ts': 'the `board:` keys',
  'recipe/declared-max-tokens.test.ts': 'a declared max_tokens',
  'recipe/estimate-fallback.test.ts': 'the dry run prices fallback models',
  'recipe/estimate-judge.test.ts': "the dry run's estimate counts a `pick: judge`",
  'recipe/land-keys.test.ts': "the merge train's recipe keys",
  'recipe/mcp-json-problems.test.ts': '.mcp.json problems at file:line:col',
  'recipe/providers.test.ts': 'the `providers:` key',
  'recipe/robustness.test.ts': 'random recipes never crash the loader',
  'recipe/run-limits.test.ts': 'the keys that bound agents',
  'recipe/task-model.test.ts': "a task's own `model:`",
  // run/
  'run/fold-complexity.test.ts': 'the fold in linear time',
  'run/plan-complexity.test.ts': 'plan.md in bounded time',
  'run/protected-inputs-cache.test.ts': "protectedInputPaths' cache per run folder (one aspect of run-inputs.ts)",
  'run/run-log-writes.test.ts': 'how RunStore writes run.jsonl (one aspect of run-store.ts)',
  'run/replay.test.ts': 'a run rebuilt from its log, then resumed',
  // runtime/
  'runtime/bounded-agent.test.ts': "an agent's memory stays bounded",
  'runtime/command-hooks-cli.test.ts': 'command hooks as the CLI runs them',
  'runtime/compaction-last-turn.test.ts': 'compaction on the last turn',
  'runtime/late-queue.test.ts': 'a message queued as a run ends',
  'runtime/learned-window.test.ts': 'a context window learned from an overflow',
  'runtime/package-exports.test.ts': "the package's public entry points",
  'runtime/prompt-cache.test.ts': 'prompt caching on the wire',
  'runtime/sdk-anthropic.test.ts': 'the runtime through the real Anthropic SDK',
  'runtime/session-write-failure.test.ts': 'a session file that cannot be written',
  // session/
  'session/batched-writes.test.ts': "the session store's batched writes",
  'session/file-round-trip.test.ts': 'random sessions survive a reopen and a cut',
  // telemetry/: traces of real runs
  'telemetry/agent-trace.test.ts': "`orchestrate agent`'s traces",
  'telemetry/distributed-trace.test.ts': 'traces of a distributed run',
  'telemetry/otel-cli.test.ts': '`--otel` at the edges',
  'telemetry/resume-trace.test.ts': 'traces of a resume',
  'telemetry/summary-trace.test.ts': 'the handoff summary traced as a model call',
  'telemetry/run-trace.test.ts': 'traces of a run',
  // tools/: the glob engine and the MCP client against real servers
  'tools/glob-semantics.test.ts': 'the glob engine against bash',
  'tools/find-repository.test.ts': 'findRepository without running git (one aspect of product-git.ts)',
  'tools/mcp/lazy-sdk.test.ts': 'the MCP SDK loaded only when used',
  'tools/mcp/mcp-agent-flag.test.ts': '`agent --mcp-config`',
  'tools/mcp/mcp-client.test.ts': 'the MCP client end to end',
  'tools/mcp/mcp-lifecycle.test.ts': "MCP servers' start and stop",
  'tools/mcp/mcp-repo-trust.test.ts': "a repository's MCP servers and trust",
  'tools/mcp/mcp-run.test.ts': 'MCP servers in recipe runs',
  'tools/mcp/mcp-serial-writes.test.ts': 'one MCP server, writes in order',
  'tools/mcp/mcp-signals.test.ts': 'MCP servers on signals',
  'tools/mcp/mcp-start-failures.test.ts': 'MCP servers that fail to start',
  'tools/mcp/mcp-unavailable.test.ts': 'an MCP server that goes away',
  // web/ (the web view, being built)
  'web/browser-interactive.test.ts': 'the web view in a real browser',
  'web/distributed-web.test.ts': 'the web view of a distributed run',
  'web/follow-up-gate-interactive.test.ts': 'a follow-up round waiting for approval, shown and approved on the page',
  'web/entry-handover.test.ts': 'the cli -> web hand-over',
  'web/landing-interactive.test.ts': 'how work lands, live on the page',
  'web/resume-from-web.test.ts': 'resuming from the page through launchResume',
  'web/serve-command.test.ts': '`orchestrate serve` as a user runs it',
};

function* testFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* testFiles(p);
    else if (name.endsWith('.test.ts')) yield relative(TEST, p);
  }
}

/** Whether test/<rel> is named after a file: src/<x>.ts (or .cts, .tsx) or a helper test/<x>.ts. */
export function namedAfterAFile(rel: string, srcRoot = SRC, testRoot = TEST): boolean {
  const base = rel.replace(/\.test\.ts$/, '');
  return (
    ['.ts', '.cts', '.mts', '.tsx'].some((ext) => existsSync(join(srcRoot, base + ext))) ||
    existsSync(join(testRoot, `${base}.ts`))
  );
}

/** The test files named after no file and not listed as behaviour tests. */
export function unnamedTests(
  files: readonly string[],
  listed: Record<string, string>,
  folders: Record<string, string>,
): string[] {
  return files.filter((rel) => !(rel.split('/')[0]! in folders) && !(rel in listed) && !namedAfterAFile(rel));
}

describe('test names', () => {
  const files = [...testFiles(TEST)].sort();

  it('every test is named after the file it tests, or listed here as a behaviour test', () => {
    // Named after nothing: a unit test goes beside its file's name (git mv test/a/b.test.ts
    // test/<src path>.test.ts); a behaviour test goes into BEHAVIOUR_TESTS with what it covers.
    expect(unnamedTests(files, BEHAVIOUR_TESTS, BEHAVIOUR_FOLDERS)).toEqual([]);
  });

  it('the list of behaviour tests holds only tests that exist and are named after no file', () => {
    const stale = Object.keys(BEHAVIOUR_TESTS).filter((rel) => !files.includes(rel) || namedAfterAFile(rel));
    expect(stale).toEqual([]);
  });

  it('finds a test named after nothing, and accepts one named after its file or a helper', () => {
    const probe = ['cli/not-a-command.test.ts', 'service/start-run.test.ts', 'helpers/redis-server.test.ts'];
    expect(unnamedTests(probe, {}, BEHAVIOUR_FOLDERS)).toEqual(['cli/not-a-command.test.ts']);
    expect(unnamedTests(probe, { 'cli/not-a-command.test.ts': 'listed' }, BEHAVIOUR_FOLDERS)).toEqual([]);
  });
});
