// `orchestrate init [example]`: copies one of the package's examples (a recipe with its agents,
// script and sample inputs, or the scripts of `orchestrate agent`) into the current folder and
// prints the command that runs it. A recipe run from an installed package would write its
// workspace inside the package; a copy runs where the user is. Nothing is ever overwritten.
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Argv } from 'yargs';
import { didYouMean } from '../../recipe/suggest.js';
import { productGit } from '../../tools/product-git.js';
import { type CliContext, EXIT } from '../cli-io.js';
import type { CliCommand, CommandArgs } from '../command.js';

/** The package's recipes/ folder: src/cli/commands/ and dist/cli/commands/ are both three levels below the package root. */
export const RECIPES_DIR = fileURLToPath(new URL('../../../recipes/', import.meta.url));

export interface InitExample {
  /** Folder under recipes/ and the name `orchestrate init` takes. */
  name: string;
  describe: string;
  /** The command that runs the copy offline, from the folder it was copied into. */
  next: string;
  /**
   * A campaign example: one empty bare repository `remotes/<name>.git` per folder of this
   * folder of the example (its repositories' templates), where `orchestrate publish --apply`
   * pushes the branches, so the whole loop runs offline.
   */
  remotesFor?: string;
  /** What to do after the run, printed under the command. */
  afterRun?: string;
}

/** The examples, the default first. Each runs offline as copied (the scripted model). */
export const INIT_EXAMPLES: readonly InitExample[] = [
  {
    name: 'fan-out',
    describe: 'one read-only agent per sample project in parallel, then a merge',
    next: 'orchestrate recipe.yaml',
  },
  {
    name: 'planner-worker',
    describe: 'a planner/worker pair building a small feature behind a test gate',
    next: 'orchestrate recipe.yaml',
  },
  {
    name: 'batch-refactor',
    describe: 'a refactor across several git repositories, one patch each, then a review and a branch per repository',
    next: 'orchestrate recipe.yaml',
    remotesFor: 'templates',
    afterRun:
      'then: orchestrate publish <run> previews a branch per changed repository; --apply pushes them to ./remotes',
  },
  {
    name: 'agent',
    describe: 'scripts for one offline agent (orchestrate agent --script)',
    next: 'orchestrate agent --script hello.yaml "Say hello"',
  },
];

/** The recipe JSON Schema, copied beside a recipe so the editor modeline in it keeps working. */
const SCHEMA_FILE = 'recipe.schema.json';
/** What a run in the repository leaves in an example folder: never part of a copy. */
const NOT_COPIED = new Set(['.orchestrate', 'work', 'remotes', '.gitignore', 'node_modules']);

/** Files of one example (relative paths, `/`-separated), what a copy is made of. */
function exampleFiles(dir: string, under = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(dir, under), { withFileTypes: true })) {
    if (NOT_COPIED.has(entry.name)) continue;
    const rel = under ? `${under}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...exampleFiles(dir, rel));
    else if (entry.isFile()) files.push(rel);
  }
  return files.sort();
}

/**
 * The copy's content of one file: a recipe's references to where it lives in the repository
 * (`recipes/fan-out/recipe.yaml` in comments, `../recipe.schema.json`) point at the copy instead.
 */
function copiedText(example: string, rel: string, text: string): string {
  if (rel !== 'recipe.yaml') return text;
  return text.replaceAll(`$schema=../${SCHEMA_FILE}`, `$schema=${SCHEMA_FILE}`).replaceAll(`recipes/${example}/`, '');
}

/** Folders of a file list shown as `agents/ (2 files)`, top-level files by name. */
function summarize(files: readonly string[]): string {
  const groups = new Map<string, number>();
  for (const f of files) {
    const top = f.includes('/') ? `${f.slice(0, f.indexOf('/'))}/` : f;
    groups.set(top, (groups.get(top) ?? 0) + 1);
  }
  return [...groups]
    .map(([name, n]) => (name.endsWith('/') ? `${name} (${n} file${n > 1 ? 's' : ''})` : name))
    .join(', ');
}

/**
 * Files where a folder of the copy goes (a file named `agents` for agents/editor.md): mkdir failed
 * on them with a stack trace. Named as `agents (a file, where the folder agents/ goes)`.
 */
function filesInTheWay(cwd: string, targets: readonly string[]): string[] {
  const folders = new Set(
    targets.flatMap((rel) =>
      rel
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  return [...folders]
    .filter((folder) => statSync(join(cwd, folder), { throwIfNoEntry: false })?.isDirectory() === false)
    .map((folder) => `${folder} (a file, where the folder ${folder}/ goes)`);
}

export async function runInit(args: CommandArgs, ctx: CliContext): Promise<number> {
  const name = typeof args.example === 'string' ? args.example : INIT_EXAMPLES[0]!.name;
  const example = INIT_EXAMPLES.find((e) => e.name === name);
  if (!example) {
    const guess = didYouMean(
      name,
      INIT_EXAMPLES.map((e) => e.name),
    );
    ctx.stderr(
      `orchestrate init: no example "${name}"\n${guess ? `  hint: did you mean "orchestrate init ${guess}"?\n` : ''}  examples: ${INIT_EXAMPLES.map((e) => e.name).join(', ')}\n`,
    );
    return EXIT.usage;
  }
  const source = join(RECIPES_DIR, example.name);
  const files = exampleFiles(source);
  const isRecipe = files.includes('recipe.yaml');
  const targets = [...files, ...(isRecipe ? [SCHEMA_FILE] : [])];
  const taken = [...filesInTheWay(ctx.cwd, targets), ...targets.filter((rel) => existsSync(join(ctx.cwd, rel)))];
  if (taken.length > 0) {
    ctx.stderr(
      `orchestrate init: ${taken.length === 1 ? 'this file exists' : 'these files exist'} in ${ctx.cwd} and would be overwritten: ${taken.join(', ')}\n` +
        `  nothing was copied; run it in an empty folder, e.g. mkdir ${example.name} && cd ${example.name} && orchestrate init${name === INIT_EXAMPLES[0]!.name ? '' : ` ${name}`}\n`,
    );
    return EXIT.usage;
  }
  try {
    for (const rel of files) {
      const from = join(source, rel);
      const to = join(ctx.cwd, ...rel.split('/'));
      mkdirSync(dirname(to), { recursive: true });
      if (rel === 'recipe.yaml') writeFileSync(to, copiedText(example.name, rel, readFileSync(from, 'utf8')));
      else copyFileSync(from, to); // keeps nothing but the content; scripts are run with an interpreter
    }
    if (isRecipe) copyFileSync(join(RECIPES_DIR, SCHEMA_FILE), join(ctx.cwd, SCHEMA_FILE));
  } catch (e) {
    ctx.stderr(
      `orchestrate init: could not copy the ${example.name} example into ${ctx.cwd}: ${(e as Error).message}\n  hint: run it in a folder you can write to\n`,
    );
    return EXIT.taskFailed;
  }
  const remotes = example.remotesFor ? await makeBareRemotes(join(source, example.remotesFor), ctx.cwd) : undefined;
  ctx.stdout(
    `copied the ${example.name} example into ${ctx.cwd}: ${summarize(targets)}\n` +
      `run it offline (the scripted model, no API key):\n  ${example.next}\n` +
      (isRecipe
        ? `with a real model: ${example.next} --provider anthropic  (needs ANTHROPIC_API_KEY)\nruns are recorded in ./.orchestrate/runs (orchestrate runs lists them)\n`
        : `with a real model: drop --script and set ANTHROPIC_API_KEY\n`) +
      (remotes ? `${remotes}\n` : '') +
      (example.afterRun ? `${example.afterRun}\n` : ''),
  );
  return EXIT.ok;
}

/**
 * One empty bare repository remotes/<name>.git per folder of `templates` (through product git:
 * sanitized environment, sandboxed where that works). Says what was made, or why not.
 */
async function makeBareRemotes(templates: string, cwd: string): Promise<string> {
  const names = readdirSync(templates, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const made: string[] = [];
  for (const name of names) {
    const dir = join(cwd, 'remotes', `${name}.git`);
    if (existsSync(dir)) continue;
    mkdirSync(dir, { recursive: true });
    try {
      const r = await productGit(['init', '-q', '--bare', dir], { cwd, writable: [dir] });
      if (r.code !== 0) return `could not make the bare remotes in ./remotes: ${r.stderr.trim()}`;
    } catch (err) {
      return `could not make the bare remotes in ./remotes: ${err instanceof Error ? err.message : String(err)}`;
    }
    made.push(`remotes/${name}.git`);
  }
  return `bare remotes for publishing: ${made.join(', ') || '(already there)'}`;
}

/**
 * A note for running a recipe that sits in an installed package (or any folder this user cannot
 * write): tasks without a `cwd` work in the recipe's folder, so a `run:` step or an edit there
 * would fail (EACCES) or change the package. Undefined when the folder is an ordinary one.
 */
export function installedRecipeNote(recipeDir: string): string | undefined {
  let writable = true;
  try {
    accessSync(recipeDir, constants.W_OK);
  } catch {
    writable = false;
  }
  const installed = recipeDir.split(sep).includes('node_modules');
  if (writable && !installed) return undefined;
  const name = basename(recipeDir);
  const init = INIT_EXAMPLES.some((e) => e.name === name) ? `orchestrate init ${name}` : 'orchestrate init';
  return (
    `orchestrate: note: this recipe's folder ${recipeDir} is ${installed ? 'inside an installed package' : 'not writable'}; ` +
    `tasks without a cwd work there. To run it here instead: mkdir my-run && cd my-run && ${init}\n`
  );
}

function initOptions(y: Argv): Argv<object> {
  return y
    .positional('example', {
      type: 'string',
      describe: `Which example (default ${INIT_EXAMPLES[0]!.name}): ${INIT_EXAMPLES.map((e) => `${e.name}: ${e.describe}`).join('; ')}`,
    })
    .example([
      [
        'orchestrate init',
        `copy the ${INIT_EXAMPLES[0]!.name} example here, then run it with: ${INIT_EXAMPLES[0]!.next}`,
      ],
      ['mkdir pair && cd pair && orchestrate init planner-worker', 'another example, in a folder of its own'],
      [
        'orchestrate init agent',
        `scripts for one offline agent: ${INIT_EXAMPLES.find((e) => e.name === 'agent')!.next}`,
      ],
    ]);
}

export const initCommand: CliCommand = {
  command: 'init [example]',
  describe:
    'Copy an example recipe (agents, script, sample inputs) into this folder and print the command that runs it',
  builder: initOptions,
  run: runInit,
};
