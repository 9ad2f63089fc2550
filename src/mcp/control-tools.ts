// cancel, steer, approve and reject: the actions `orchestrate cancel` / `orchestrate steer` take on a live run,
// over the same control socket (service/run-control.ts), so the run's log records them as
// `control` events naming this server and its client, and a run nobody holds is told apart from a
// refused action (an unknown instance comes back with the close matches).
import { z } from 'zod';
import { deliverApproval } from '../service/approval.js';
import { controlBy, deliverRunControl } from '../service/run-control.js';
import { instanceArg, locateRun, runArg, runDirArg } from './tool-args.js';
import { defineTool, inToolTerms, ToolError, type ServerContext } from './tool-table.js';

/** Who the control event names: "mcp claude-code (pid 4242, user ana)". */
function byOf(ctx: ServerContext): string {
  const client = ctx.clientName();
  return controlBy(client ? `mcp ${client}` : 'mcp', ctx.env);
}

export const cancelTool = defineTool({
  name: 'cancel',
  title: 'Cancel an instance or a run',
  description:
    'With instance: end that instance of a live run as cancelled (its session is kept); the run goes on and its dependants follow on_failure. ' +
    'Without instance: interrupt the whole run like Ctrl-C (sessions kept; the resume tool continues it).',
  input: {
    run: runArg,
    instance: instanceArg
      .optional()
      .describe('Instance key as run_status lists it; leave it out to cancel the whole run'),
    run_dir: runDirArg,
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  handler: async (args, _call, ctx) => {
    const runDir = locateRun(ctx, args.run, args.run_dir);
    const by = byOf(ctx);
    const outcome = await deliverRunControl(
      runDir,
      'cancel',
      args.instance !== undefined ? { action: 'cancel', instance: args.instance, by } : { action: 'cancel_run', by },
    );
    if (!outcome.ok) throw new ToolError(outcome.message);
    return { text: inToolTerms(outcome.message, ctx.cwd) };
  },
});

export const steerTool = defineTool({
  name: 'steer',
  title: 'Steer an instance',
  description:
    'Send a message into the running agent of one instance of a live run; it reads it after its current step (a pair: its worker, unless the key names a member, e.g. build@planner).',
  input: {
    run: runArg,
    instance: instanceArg,
    message: z
      .string()
      .trim()
      .min(1, 'the steering message is empty: give its text')
      .describe('What the agent should know or do, e.g. "only touch src/"'),
    run_dir: runDirArg,
  },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  handler: async (args, _call, ctx) => {
    const runDir = locateRun(ctx, args.run, args.run_dir);
    const outcome = await deliverRunControl(runDir, 'steer', {
      action: 'steer',
      instance: args.instance,
      text: args.message,
      by: byOf(ctx),
    });
    if (!outcome.ok) throw new ToolError(outcome.message);
    return { text: inToolTerms(outcome.message, ctx.cwd) };
  },
});

/** approve / reject: answer a task's approval gate (`approve:`), live or, when no coordinator holds the run, for its next resume. */
function gateTool(action: 'approve' | 'reject') {
  return defineTool({
    name: action,
    title: action === 'approve' ? 'Approve a gated task' : 'Reject a gated task',
    description:
      action === 'approve'
        ? 'Approve a task waiting at its approval gate (approve: in the recipe): every waiting instance of it, or only `instance`; they run now (or, when no coordinator holds the run, on its next resume).'
        : 'Reject a task waiting at its approval gate (approve: in the recipe): every waiting instance of it, or only `instance`; they are skipped, with the tasks that need them.',
    input: {
      run: runArg,
      task: z
        .string()
        .min(1)
        .optional()
        .describe('The gated task (run_status shows it waiting for approval); with publish: only its publish gate'),
      publish: z
        .boolean()
        .optional()
        .describe(
          'Answer the publish gate (approve: in a publish: block; run_status lists publishGates): approved, the run pushes its branches and opens its pull requests',
        ),
      follow_up: z
        .boolean()
        .optional()
        .describe(
          'Answer the gate of a follow-up round waiting to push (approve: in publish.follow_up): approved, the next publish --follow-up --apply (or the follow_up tool) pushes it; rejected, it is dropped',
        ),
      instance: instanceArg.optional().describe('Only this instance of a fan-out; leave it out for all of them'),
      note: z.string().optional().describe('Why, for the log and the report'),
      run_dir: runDirArg,
    },
    annotations: {
      readOnlyHint: false,
      destructiveHint: action === 'reject',
      idempotentHint: false,
      openWorldHint: false,
    },
    handler: async (args, _call, ctx) => {
      const runDir = locateRun(ctx, args.run, args.run_dir);
      if (args.publish && args.follow_up) throw new ToolError('publish and follow_up answer different gates; give one');
      if (!args.publish && !args.follow_up && args.task === undefined)
        throw new ToolError(
          'give task (the gated task), publish: true for the publish gate, or follow_up: true for a follow-up round',
        );
      const d = await deliverApproval(runDir, {
        action,
        task: args.task ?? '*',
        ...(args.publish ? { gate: 'publish' as const } : args.follow_up ? { gate: 'follow_up' as const } : {}),
        ...(args.instance !== undefined ? { instance: args.instance } : {}),
        ...(args.note ? { note: args.note } : {}),
        by: byOf(ctx),
        via: 'mcp',
      });
      if (!d.ok) throw new ToolError(d.message);
      return { text: inToolTerms(d.message, ctx.cwd) };
    },
  });
}

export const approveTool = gateTool('approve');
export const rejectTool = gateTool('reject');
