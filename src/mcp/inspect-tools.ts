// run_status, run_events, show_instance and list_runs: reading a run's record, live or finished,
// from its folder (the same views as `orchestrate show --json`, `watch` and `runs --json`). Any
// run works, whoever started it: nothing here needs the process that runs it.
import { z } from 'zod';
import { conversationJson } from '../display/run-json.js';
import { didYouMean } from '../util/did-you-mean.js';
import { RunEventSchema } from '../run/run-events.js';
import { liveLeaseHolder } from '../run/run-lease.js';
import { MCP_SERVER_DEFAULTS, NOISY_EVENT_TYPES } from '../service/mcp-server-defaults.js';
import { listRunsIn } from '../service/list-runs.js';
import { runStatus, showInstance } from '../service/show-run.js';
import { readEventsPage, runLogSize } from '../service/run-events-page.js';
import { instanceArg, locateRun, runArg, runDirArg, runsDirOf } from './tool-args.js';
import { dataReply, defineTool, ToolError } from './tool-table.js';

/** Every event type this build writes (run-events.ts). */
const EVENT_TYPES: readonly string[] = RunEventSchema.options.map((o) => o.shape.type.value);

export const runStatusTool = defineTool({
  name: 'run_status',
  title: 'Status of a run',
  description:
    "A run's status (running, waiting, succeeded, partial: instances cancelled by a user and none failed, failed, interrupted, budget_exhausted), its usage and cost, and every instance with its status, attempts, errors, outputs and summaries " +
    '(as `orchestrate show --json`), plus counts per status.',
  input: { run: runArg, run_dir: runDirArg },
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async (args, _call, ctx) => dataReply(runStatus(locateRun(ctx, args.run, args.run_dir))),
});

export const runEventsTool = defineTool({
  name: 'run_events',
  title: 'Events of a run',
  description:
    'A run\'s event log (run.jsonl) from a cursor: call with cursor "0" (or none) first, then with the next_cursor each answer returns to get only what happened since. ' +
    `By default the agents' own streams (${NOISY_EVENT_TYPES.join(', ')}) are left out; types names the event types to return instead. ` +
    '`running` says whether the run is still going; more: true means call again at once.',
  input: {
    run: runArg,
    run_dir: runDirArg,
    cursor: z
      .string()
      .regex(/^\d+$/, 'a cursor is the next_cursor an earlier run_events call returned (digits), or "0"')
      .optional()
      .describe('next_cursor of the previous call; "0" or absent: from the start'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MCP_SERVER_DEFAULTS.eventsPageMax)
      .optional()
      .describe(`Most events to return (default ${MCP_SERVER_DEFAULTS.eventsPageSize})`),
    types: z
      .array(z.string().min(1))
      // An empty list would leave out every event and still move the cursor past them: lost for good.
      .min(1, "name at least one event type, or leave types out for every event but the agents' own streams")
      .optional()
      .describe(`Only these event types: ${EVENT_TYPES.join(', ')}`),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async (args, _call, ctx) => {
    const runDir = locateRun(ctx, args.run, args.run_dir);
    for (const t of args.types ?? []) {
      if (!EVENT_TYPES.includes(t)) {
        const guess = didYouMean(t, EVENT_TYPES);
        throw new ToolError(
          `unknown event type "${t}"${guess ? `; did you mean "${guess}"?` : ''} Event types: ${EVENT_TYPES.join(', ')}`,
        );
      }
    }
    const cursor = Number(args.cursor ?? '0');
    const size = runLogSize(runDir);
    if (cursor > size)
      throw new ToolError(
        `cursor ${cursor} is past the end of the log of run ${runDir.split('/').pop()} (${size} bytes): pass a next_cursor that run_events returned for this run, or "0" to start over`,
      );
    const types = args.types;
    const page = readEventsPage(runDir, cursor, {
      limit: args.limit ?? MCP_SERVER_DEFAULTS.eventsPageSize,
      maxBytes: MCP_SERVER_DEFAULTS.eventsPageBytes,
      keep: types ? (e) => types.includes(e.type) : (e) => !NOISY_EVENT_TYPES.includes(e.type),
    });
    return dataReply({
      runId: runDir.split('/').pop(),
      events: page.events,
      next_cursor: String(page.next),
      more: page.more,
      running: liveLeaseHolder(runDir) !== undefined,
      ...(page.filtered ? { left_out: page.filtered } : {}),
      ...(page.skipped ? { unreadable_lines: page.skipped } : {}),
    });
  },
});

export const showInstanceTool = defineTool({
  name: 'show_instance',
  title: "An instance's conversation",
  description:
    "One instance of a run: its status, attempts, output and summary, and its agent's conversation from its session file (the latest items; as `orchestrate show <run> --instance KEY --json`).",
  input: {
    run: runArg,
    instance: instanceArg.describe('Instance key (or task/key, or a unique prefix) as run_status lists it'),
    run_dir: runDirArg,
    last: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`Conversation items to return, the latest (default ${MCP_SERVER_DEFAULTS.conversationItems})`),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async (args, _call, ctx) => {
    const shown = showInstance(locateRun(ctx, args.run, args.run_dir), args.instance);
    if (!shown.ok) throw new ToolError(`${shown.message}; instances: ${shown.instances.join(', ') || '(none yet)'}`);
    const { folder, instance: inst, conversation: conv } = shown;
    const keep = args.last ?? MCP_SERVER_DEFAULTS.conversationItems;
    const omitted = Math.max(0, conv.items.length - keep);
    const json = conversationJson(folder, inst, { ...conv, items: conv.items.slice(omitted) });
    return dataReply({ ...json, ...(omitted ? { omittedItems: omitted } : {}) });
  },
});

export const listRunsTool = defineTool({
  name: 'list_runs',
  title: 'List runs',
  description:
    'The runs recorded in a runs folder, newest first: id, recipe, name, start, status (running while a coordinator holds it) and cost.',
  input: {
    run_dir: runDirArg,
    limit: z.number().int().min(1).optional().describe('Most runs to list (default 20, the newest)'),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async (args, _call, ctx) => {
    const runsDir = runsDirOf(ctx, args.run_dir);
    const listed = listRunsIn(runsDir);
    if (!listed.ok) throw new ToolError(listed.message);
    const runs = listed.runs;
    const limit = args.limit ?? 20;
    return dataReply({
      runsDir,
      runs: runs
        .slice(0, limit)
        .map(({ holder: _h, ...r }) => ({ ...r, startedAt: new Date(r.startedAt).toISOString() })),
      ...(runs.length > limit ? { more: runs.length - limit } : {}),
    });
  },
});
