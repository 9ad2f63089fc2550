// "Did you mean" for recipe problems: the shared edit-distance suggestion (util/did-you-mean.ts)
// plus keys users carry over from other tools (GitHub Actions, Argo, CrewAI, Goose) that are
// spelled differently here.
import { didYouMean as closest, suggestionHint as hintFor } from '../util/did-you-mean.js';

/** Names other tools use for our keys. Only suggested when the target is valid where the typo is. */
export const KNOWN_ALIASES: Readonly<Record<string, string>> = {
  file: 'system_file',
  agent_file: 'system_file',
  system_prompt: 'system',
  instructions: 'system',
  task: 'prompt',
  message: 'prompt',
  depends_on: 'needs',
  dependsOn: 'needs',
  dependencies: 'needs',
  after: 'needs',
  steps: 'tasks',
  nodes: 'tasks',
  jobs: 'tasks',
  matrix: 'for_each',
  foreach: 'for_each',
  forEach: 'for_each',
  with_items: 'for_each',
  withItems: 'for_each',
  items: 'for_each',
  command: 'run',
  cmd: 'run',
  shell: 'run',
  script: 'run',
  max_retries: 'retries',
  retry: 'retries',
  parallelism: 'concurrency',
  max_concurrency: 'concurrency',
  workdir: 'cwd',
  working_directory: 'cwd',
  dir: 'cwd',
  continue_on_error: 'on_failure',
  fail_fast: 'max_failed',
  timeout_minutes: 'timeout',
  parameters: 'inputs',
  params: 'inputs',
  vars: 'inputs',
  variables: 'inputs',
  model_name: 'model',
  prompt_file: 'system_file',
};

/** The closest recipe name to `word` (aliases of other tools included), if one is a likely typo. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  return closest(word, candidates, KNOWN_ALIASES);
}

/** A hint line: "did you mean X?" when a candidate is close, else the list of valid names. */
export function suggestionHint(word: string, candidates: readonly string[], what: string): string {
  return hintFor(word, candidates, what, KNOWN_ALIASES);
}
