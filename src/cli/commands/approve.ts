// `orchestrate approve|reject <run> --task T [--instance K] [--note TEXT] [--as NAME]`: answer a
// task's approval gate (`approve:` in the recipe); `--publish [--task T]` answers the run's publish
// gate (`approve:` in a publish: block) instead: approved, the run publishes its changesets;
// `--follow-up [--task T] [--instance K]` answers the gate of a follow-up round waiting to push
// (publish.follow_up.approve): `publish --follow-up --apply` then pushes or drops it. A live run gets the answer through its control
// socket and goes on at once; a run no coordinator holds (interrupted, or killed while it waited)
// gets it written into its log under the run's lease, and the next `orchestrate resume` obeys it.
// Exit codes: 0 answered; 1 refused (no such gate, already answered...); 2 bad usage, or a
// coordinator holds the run but does not answer.
import type { ApprovalAnswer } from '../../run/run-control.js';
import { EXIT, type CliContext } from '../cli-io.js';
import type { CliCommand, CommandArgs } from '../command.js';
import { userName } from '../control-actor.js';
import { givenOnce } from '../flag-values.js';
import { locateRunArg, RUN_ARG, RUN_DIR_OPTION } from '../locate-run.js';
import { deliverApproval } from '../../service/approval.js';

async function answer(action: 'approve' | 'reject', args: CommandArgs, ctx: CliContext): Promise<number> {
  const runDir = locateRunArg(args, ctx);
  if (runDir === undefined) return EXIT.usage;
  const by = typeof args.as === 'string' && args.as.trim() !== '' ? args.as.trim() : userName(ctx.env);
  const publish = args.publish === true;
  const followUp = args['follow-up'] === true;
  if (publish && followUp) {
    ctx.stderr(`orchestrate: --publish and --follow-up answer different gates; give one\n`);
    return EXIT.usage;
  }
  if (!publish && !followUp && typeof args.task !== 'string') {
    ctx.stderr(
      `orchestrate: ${action} needs --task T (the gated task), --publish (the publish gate before the changesets are published) or --follow-up (a follow-up round waiting to push)\n`,
    );
    return EXIT.usage;
  }
  if (publish && typeof args.instance === 'string') {
    ctx.stderr(`orchestrate: --instance answers a task's gate; a publish gate is per task: --publish --task T\n`);
    return EXIT.usage;
  }
  const a: ApprovalAnswer = {
    action,
    task: typeof args.task === 'string' ? args.task : '*',
    ...(publish ? { gate: 'publish' as const } : followUp ? { gate: 'follow_up' as const } : {}),
    ...(typeof args.instance === 'string' ? { instance: args.instance } : {}),
    ...(typeof args.note === 'string' && args.note !== '' ? { note: args.note } : {}),
    by,
    via: 'cli',
  };
  const d = await deliverApproval(runDir, a);
  if (d.ok) {
    ctx.stdout(`${d.message}\n`);
    return EXIT.ok;
  }
  ctx.stderr(`orchestrate: ${d.message}\n`);
  return d.code === 'not_live' ? EXIT.usage : EXIT.taskFailed;
}

function gateCommand(action: 'approve' | 'reject'): CliCommand {
  const verb = action === 'approve' ? 'Approve' : 'Reject';
  return {
    command: `${action} <run>`,
    describe: `${verb} a task waiting at its approval gate (approve: in the recipe)${action === 'reject' ? '; it is skipped, with the tasks that need it' : ''}; --publish: the run's publish gate (approve: in publish:)`,
    builder: (y) =>
      y
        .positional('run', RUN_ARG)
        .option('task', {
          type: 'string',
          describe: 'The gated task (with --publish: only the publish gate of this task; default all)',
        })
        .option('publish', {
          type: 'boolean',
          default: false,
          describe:
            action === 'approve'
              ? 'Answer the publish gate (approve: in a publish: block): the run publishes its changesets'
              : 'Answer the publish gate (approve: in a publish: block): nothing is pushed',
        })
        .option('follow-up', {
          type: 'boolean',
          default: false,
          describe:
            action === 'approve'
              ? 'Answer the gate of a follow-up round (approve: in publish.follow_up): publish --follow-up --apply pushes it'
              : 'Answer the gate of a follow-up round (approve: in publish.follow_up): the round is dropped, never pushed',
        })
        .option('instance', {
          type: 'string',
          describe: 'Only this instance of a fan-out (its key, e.g. publish.alpha); default: every waiting instance',
        })
        .option('note', { type: 'string', describe: 'Why, for the log and the report' })
        .option('as', { type: 'string', describe: 'Who answers, as the log records it (default: your user name)' })
        .option('run-dir', RUN_DIR_OPTION)
        .check(givenOnce('task', 'instance', 'note', 'as', 'run-dir'))
        .example(
          `orchestrate ${action} 20260101-1200-ab12 --task publish --note "checked the diff"`,
          action === 'approve' ? 'the task runs now' : 'the task and its dependants are skipped',
        )
        .example(
          `orchestrate ${action} 20260101-1200-ab12 --publish`,
          action === 'approve' ? 'the run pushes its branches and opens its pull requests' : 'nothing is pushed',
        ),
    run: (args, ctx) => answer(action, args, ctx),
  };
}

export const approveCommand = gateCommand('approve');
export const rejectCommand = gateCommand('reject');
