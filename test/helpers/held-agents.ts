// Bash agents on the scripted model, and agents held inside a bash call until the test creates a
// file, so an instance stays running exactly as long as a test of run control needs (no clock
// involved). One setup for the run tests that script bash agents, in-process and through the CLI
// (issue #43): each test still writes its own tasks and what each agent does.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A bash command that returns (printing "released") once `file` exists. */
export function holdUntil(file: string): string {
  return `while [ ! -f '${file}' ]; do sleep 0.05; done; echo released`;
}

/** One turn of a scripted conversation: a bash call, or a text reply. */
export type ScriptedStep = { bash: string } | { text: string };

/** script.yaml of the scripted provider: each conversation is picked by `match` and plays its steps in order. */
export function conversationsScript(conversations: Record<string, ScriptedStep[]>): string {
  const turn = (s: ScriptedStep) =>
    'bash' in s
      ? `      - tools: [{ name: bash, args: { command: ${JSON.stringify(s.bash)} } }]`
      : `      - text: ${JSON.stringify(s.text)}`;
  return `conversations:\n${Object.entries(conversations)
    .map(([match, steps]) => `  - match: ${JSON.stringify(match)}\n    turns:\n${steps.map(turn).join('\n')}\n`)
    .join('')}`;
}

/** recipe.yaml on the scripted model (script.yaml) with one agent `w` that has bash, then `tasks` (YAML list lines). */
export function bashAgentRecipe(name: string, concurrency: number, tasks: string): string {
  return `name: ${name}
provider: scripted
script: script.yaml
concurrency: ${concurrency}
agents:
  w: { tools: [bash] }
tasks:
${tasks}`;
}

/** Writes recipe.yaml and script.yaml into `dir`. */
export function writeRecipeAndScript(dir: string, recipe: string, script: string): void {
  writeFileSync(join(dir, 'recipe.yaml'), recipe);
  writeFileSync(join(dir, 'script.yaml'), script);
}
