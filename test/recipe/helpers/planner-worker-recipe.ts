// The recipe the provider and fallback tests vary: a planner on the default Anthropic model and a
// worker on model qwen-coder, with a local OpenAI-compatible provider declared. One text (issue
// #43), so the line and column each test expects is the same line in both files' recipes.
export interface PlannerWorkerRecipe {
  name: string;
  /** Further lines of provider `local` (each starting "\n    "). */
  localLines?: string;
  /** The lines under model qwen-coder, each a "key: value". */
  qwenCoder: string[];
  /** Agent planner's and agent worker's definitions (YAML flow text). */
  planner: string;
  worker: string;
}

/** recipe.yaml: tasks `plan` (agent planner) and `work` (agent worker). */
export function plannerWorkerRecipe({
  name,
  localLines = '',
  qwenCoder,
  planner,
  worker,
}: PlannerWorkerRecipe): string {
  return `name: ${name}
model: claude-sonnet-4-5
providers:
  local:
    type: openai-compatible
    base_url: http://127.0.0.1:11434/v1${localLines}
models:
  qwen-coder:
${qwenCoder.map((l) => `    ${l}\n`).join('')}agents:
  planner: ${planner}
  worker: ${worker}
tasks:
  - id: plan
    agent: planner
    prompt: "plan"
  - id: work
    agent: worker
    prompt: "work"
`;
}
