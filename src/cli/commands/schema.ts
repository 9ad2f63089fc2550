// `orchestrate schema`: the recipe JSON Schema, for editors (yaml-language-server) and CI.
import { recipeJsonSchema } from '../../recipe/index.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';

export const schemaCommand: CliCommand = {
  command: 'schema',
  describe: 'Print the recipe JSON Schema (draft 2020-12)',
  builder: (y) => y,
  run: async (_args, ctx) => {
    ctx.stdout(`${JSON.stringify(recipeJsonSchema(), null, 2)}\n`);
    return EXIT.ok;
  },
};
