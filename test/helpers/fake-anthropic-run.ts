// Launching agents in a test: a recipe run in a temp project through the real coordinator, worker
// threads and Anthropic SDK, against a fake Messages API on 127.0.0.1. One setup for the tests
// that run agents end to end (issue #43), so each test shows only what it varies: its recipe, its
// responder and the options it runs with.
import { join } from 'node:path';
import { runRecipeFile, type RunOptions } from '../../src/orchestrator/run-recipe.js';
import { type Conversation, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { type FakeAnthropic, type FakeAnthropicOptions, startFakeAnthropic } from './fake-anthropic-server.js';

export type RunOutcome = Extract<Awaited<ReturnType<typeof runRecipeFile>>, { ok: true }>['outcome'];

/** The agent most run tests launch: it lists the folder, then answers "checked". */
export const CHECK_ITEM: Conversation = {
  match: /Check item/,
  turns: [{ tools: [{ name: 'ls', args: { path: '.' } }] }, { text: 'checked' }],
};

/** Starts a fake Anthropic API, hands it to `use` and closes it after, whatever `use` did. */
export async function withFakeAnthropic<T>(
  options: FakeAnthropicOptions,
  use: (server: FakeAnthropic) => Promise<T>,
): Promise<T> {
  const server = await startFakeAnthropic(options);
  try {
    return await use(server);
  } finally {
    await server.close();
  }
}

export interface FakeRunOptions {
  /** Further files of the temp project, next to recipe.yaml. */
  files?: Record<string, string>;
  /** The API key the run is given (a test that looks for it in the log picks its own). */
  apiKey?: string;
  /** Run options besides the runs folder and the environment. */
  run?: Omit<RunOptions, 'runsDir' | 'env'>;
  /** Told the temp project's folder before the run starts (its runs go to <project>/runs). */
  onProject?: (dir: string) => void;
}

/**
 * Runs `recipe` (the text of recipe.yaml) in a new temp project with the API key and base URL of
 * `server`; the runs go to <project>/runs. A run that could not start throws with its problems.
 */
export async function runOnFakeAnthropic(
  server: FakeAnthropic,
  recipe: string,
  { files = {}, apiKey = 'sk-test', run = {}, onProject }: FakeRunOptions = {},
): Promise<{ dir: string; outcome: RunOutcome }> {
  const dir = tempProject({ 'recipe.yaml': recipe, ...files });
  onProject?.(dir);
  const r = await runRecipeFile(
    join(dir, 'recipe.yaml'),
    { cwd: dir },
    {
      ...run,
      runsDir: join(dir, 'runs'),
      env: { ...process.env, ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: server.url },
    },
  );
  if (!r.ok) throw new Error(JSON.stringify(r));
  return { dir, outcome: r.outcome };
}

export interface CheckItemsRecipe {
  name: string;
  /** One instance of task `check` per item, each asked "Check item <item>". */
  items: string[];
  /** How agent `checker` is defined (YAML flow text). */
  agent?: string;
  /** Further top-level recipe lines (`concurrency: 4`, `rate_limit: 3`). */
  top?: string[];
}

/** recipe.yaml of the fan-out CHECK_ITEM answers: agent `checker` on claude-haiku-4-5 checks every item. */
export function checkItemsRecipe({ name, items, agent = '{ tools: [ls] }', top = [] }: CheckItemsRecipe): string {
  return [
    `name: ${name}`,
    'model: claude-haiku-4-5',
    ...top,
    'agents:',
    `  checker: ${agent}`,
    'tasks:',
    '  - id: check',
    `    for_each: [${items.join(', ')}]`,
    '    agent: checker',
    '    prompt: "Check item ${{ item }}"',
    '',
  ].join('\n');
}
