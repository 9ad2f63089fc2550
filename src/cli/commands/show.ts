// `orchestrate show <run>`: statuses, outputs, errors with their class, usage per instance and
// the merged plan. `--instance <key>`: that agent's conversation from its session file.
import { formatConversation } from '../../display/conversation-text.js';
import { loadRunFolder } from '../../display/run-folder.js';
import { formatRunDetails } from '../../display/run-details-text.js';
import { conversationJson, runJson } from '../../display/run-json.js';
import { makePainter, shouldUseColor } from '../../display/terminal-text.js';
import { showInstance } from '../../service/show-run.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';
import { givenOnce } from '../flag-values.js';
import { locateRunArg, RUN_ARG, RUN_DIR_OPTION } from '../locate-run.js';

export const showCommand: CliCommand = {
  command: 'show <run>',
  describe: "Show a run's instances, outputs, errors, usage and plan (--instance KEY: one agent's conversation)",
  builder: (y) =>
    y
      .positional('run', RUN_ARG)
      .option('instance', {
        type: 'string',
        describe: 'Instance key (or task/key, or a unique prefix): print its conversation',
      })
      .option('run-dir', RUN_DIR_OPTION)
      .option('json', {
        type: 'boolean',
        default: false,
        describe:
          "Print it as JSON on stdout (the run with its instances, or with --instance that agent's conversation)",
      })
      .option('color', {
        type: 'boolean',
        default: true,
        describe: 'Colour the output (--no-color, or NO_COLOR=1, turns it off)',
      })
      .check(givenOnce('instance', 'run-dir')),
  run: async (args, ctx) => {
    const runDir = locateRunArg(args, ctx);
    if (runDir === undefined) return EXIT.usage;
    const painter = makePainter(shouldUseColor({ isTTY: ctx.isTTY, noColorFlag: args.color === false, env: ctx.env }));
    const json = args.json === true;
    if (typeof args.instance !== 'string') {
      const folder = loadRunFolder(runDir);
      ctx.stdout(json ? `${JSON.stringify(runJson(folder), null, 2)}\n` : formatRunDetails(folder, painter));
      return EXIT.ok;
    }
    const shown = showInstance(runDir, args.instance);
    if (!shown.ok) {
      ctx.stderr(`orchestrate: ${shown.message}\n  instances: ${shown.instances.join(', ') || '(none)'}\n`);
      return EXIT.usage;
    }
    const { folder, instance: inst, conversation: conv } = shown;
    if (json) {
      ctx.stdout(`${JSON.stringify(conversationJson(folder, inst, conv), null, 2)}\n`);
      return EXIT.ok;
    }
    ctx.stdout(formatConversation(conv, `${inst.label} (${inst.status}) in run ${folder.state.runId}`, painter));
    return EXIT.ok;
  },
};
