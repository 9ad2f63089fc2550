// `orchestrate show <run>`: statuses, outputs, errors with their class, usage per instance and
// the merged plan. `--instance <key>`: that agent's conversation from its session file.
import { resolve } from 'node:path';
import { formatConversation } from '../../display/conversation-text.js';
import { defaultRunsDir, findRun } from '../../display/find-run.js';
import { findInstance, loadRunFolder, sessionFileOf } from '../../display/run-folder.js';
import { formatRunDetails } from '../../display/run-details-text.js';
import { instancesInTaskOrder } from '../../display/run-state.js';
import { readConversation } from '../../display/session-conversation.js';
import { makePainter, shouldUseColor } from '../../display/terminal-text.js';
import { EXIT } from '../cli-io.js';
import { type CliCommand } from '../command.js';

export const showCommand: CliCommand = {
  command: 'show <run>',
  describe: "Show a run's instances, outputs, errors, usage and plan (--instance KEY: one agent's conversation)",
  builder: (y) =>
    y
      .positional('run', { type: 'string', describe: 'Run id, unique prefix of one, or run folder path', demandOption: true })
      .option('instance', { type: 'string', describe: 'Instance key (or task/key, or a unique prefix): print its conversation' })
      .option('run-dir', { type: 'string', describe: 'Folder holding run records (default .orchestrate/runs)' })
      .option('color', { type: 'boolean', default: true, describe: 'Colour the output (--no-color, or NO_COLOR=1, turns it off)' }),
  run: async (args, ctx) => {
    const runsDir = typeof args['run-dir'] === 'string' ? resolve(ctx.cwd, args['run-dir']) : defaultRunsDir(ctx.cwd);
    const located = findRun(runsDir, String(args.run), ctx.cwd);
    if (!located.ok) {
      ctx.stderr(`orchestrate: ${located.message}\n`);
      return EXIT.usage;
    }
    const folder = loadRunFolder(located.dir);
    const painter = makePainter(shouldUseColor({ isTTY: ctx.isTTY, noColorFlag: args.color === false, env: ctx.env }));
    if (typeof args.instance !== 'string') {
      ctx.stdout(formatRunDetails(folder, painter));
      return EXIT.ok;
    }
    const { found: inst, candidates } = findInstance(folder.state, args.instance);
    if (!inst) {
      const all = instancesInTaskOrder(folder.state).map((i) => i.label);
      const why = candidates.length > 1 ? `"${args.instance}" matches ${candidates.length} instances: ${candidates.map((c) => c.label).join(', ')}` : `no instance "${args.instance}" in run ${folder.state.runId}`;
      ctx.stderr(`orchestrate: ${why}\n  instances: ${all.join(', ') || '(none)'}\n`);
      return EXIT.usage;
    }
    const conv = readConversation(sessionFileOf(folder.dir, inst));
    ctx.stdout(formatConversation(conv, `${inst.label} (${inst.status}) in run ${folder.state.runId}`, painter));
    return EXIT.ok;
  },
};
