// What a `publish --rebase` re-run asks its agent: the instance rendered again from the run's
// recipe (its for_each item and rendered prompt as instance_start recorded them; for a run logged
// before that record, its task's for_each is expanded again and the instance found by its key),
// and the first message, which says the change was made on an older base and must be redone on
// the current one, with the earlier summary and patch as context (and, for `context: summaries`,
// the merged plan of the tasks it needs, as the run gave it).
import {
  type ExpressionScope,
  type InstanceSeed,
  type LoadedRecipe,
  type LoadedTask,
  type ResolvedInstance,
  expandTask,
  resolveInstance,
} from '../recipe/index.js';
import type { TaskResultView } from '../recipe/expressions.js';
import { renderNeedsContext } from '../run/merge-summaries.js';
import type { InstanceState as FoldedInstance, RunState } from '../run/run-fold.js';
import { type TaskState, planInput } from '../run/run-state.js';
import { restoredInstance } from '../orchestrator/execution/session-start.js';

export type RenderedInstance =
  | { ok: true; task: LoadedTask; resolved: ResolvedInstance }
  | { ok: false; error: string };

/** Longest part of the earlier patch quoted in the first message (the rest is cut, with a note). */
const PATCH_QUOTE_CHARS = 20_000;

/** The run's tasks as the coordinator saw them at its end (from the log), in the recipe's order. */
function taskStates(recipe: LoadedRecipe, fold: RunState): TaskState[] {
  return recipe.tasks.map((t) => {
    const keys = fold.tasks.get(t.id)?.keys ?? [];
    const instances = [...fold.instances.values()]
      .filter((i) => i.task === t.id)
      .sort((a, b) => keys.indexOf(a.key) - keys.indexOf(b.key))
      .map(restoredInstance);
    return { task: t, level: 0, status: 'done' as const, expanded: true, instances };
  });
}

/** The outputs and summaries of the run's finished tasks, as later tasks' templates saw them (`tasks.X.output`). */
function scopeOf(
  recipe: LoadedRecipe,
  states: readonly TaskState[],
  env: Readonly<Record<string, string | undefined>>,
): ExpressionScope {
  const tasks: Record<string, TaskResultView> = {};
  for (const t of states) {
    const done = t.instances.filter((i) => i.status === 'done');
    if (!done.length) continue;
    const view: TaskResultView = { output: t.task.forEach ? done.map((i) => i.output) : done[0]!.output };
    const summary = renderNeedsContext(planInput(recipe, states), [t.task.id]);
    if (summary) view.summary = summary;
    tasks[t.task.id] = view;
  }
  return { inputs: recipe.inputValues, env: { ...env, ...recipe.env }, tasks };
}

/** `context: summaries`: the merged plan of the tasks `task` needs, as the run gave it. */
export function rebaseContext(recipe: LoadedRecipe, fold: RunState, task: LoadedTask): string | undefined {
  if (task.context !== 'summaries' || task.needs.length === 0) return undefined;
  return renderNeedsContext(planInput(recipe, taskStates(recipe, fold)), task.needs) || undefined;
}

/** The instance `inst` of the run as its recipe renders it (cwd, writes, verify, env; the prompt it was given). */
export function renderRebasedInstance(
  recipe: LoadedRecipe,
  fold: RunState,
  inst: FoldedInstance,
  env: Readonly<Record<string, string | undefined>>,
): RenderedInstance {
  const task = recipe.tasks.find((t) => t.id === inst.task);
  if (!task)
    return {
      ok: false,
      error: `the recipe ${recipe.file} has no task "${inst.task}" any more; restore it as it was when the run ran to rebase ${inst.label}`,
    };
  const scope = scopeOf(recipe, taskStates(recipe, fold), env);
  let seed: InstanceSeed = { id: inst.key, taskId: task.id, index: 0 };
  if (task.forEach) {
    if (inst.item !== undefined) {
      seed = { ...seed, key: inst.key.slice(task.id.length + 1), item: inst.item };
    } else {
      // A run logged before instance_start recorded the item: expand the task again and find the key.
      const exp = expandTask(task, scope);
      const found = exp.ok ? exp.instances.find((s) => s.id === inst.key) : undefined;
      if (!found)
        return {
          ok: false,
          error: `cannot render ${inst.label} again: its run was recorded before orchestrate kept each instance's item, and task "${task.id}"'s for_each ${exp.ok ? `no longer yields the key "${inst.key}"` : `fails now (${exp.error})`}. Restore the recipe's for_each (and its inputs) as they were when the run ran, then rebase again`,
        };
      seed = found;
    }
  }
  const r = resolveInstance(task, seed, scope);
  if (!r.ok) return { ok: false, error: `cannot render ${inst.label} again: ${r.error}` };
  const resolved: ResolvedInstance = { ...r.instance, env: { ...recipe.env, ...r.instance.env } };
  // The prompt the instance was given (recorded), over the recipe's as it is now.
  if (inst.prompt !== undefined) resolved.prompt = inst.prompt;
  return { ok: true, task, resolved };
}

/** The first user message of a rebase: why, the task again, the earlier summary, the earlier patch. */
export function rebasePrompt(args: {
  prompt: string;
  summary?: string;
  base: string;
  fromCommit: string;
  baseCommit: string;
  oldPatch: string;
  patchFile: string;
}): string {
  const from = args.fromCommit.slice(0, 12);
  const to = args.baseCommit.slice(0, 12);
  const patch =
    args.oldPatch.length > PATCH_QUOTE_CHARS
      ? `${args.oldPatch.slice(0, PATCH_QUOTE_CHARS)}\n... (cut: ${args.oldPatch.length - PATCH_QUOTE_CHARS} more characters)`
      : args.oldPatch;
  return [
    `This change was made before, on an older commit of ${args.base} (${from}). ${args.base} has moved on to ${to} and the change no longer merges, so it must be redone on the current code: this working tree holds ${args.base} as it is now, without the earlier change. Do the task again here, keeping to what the earlier change did wherever it still fits, and adapting it where the code moved.`,
    `The task:\n${args.prompt.trim()}`,
    `Summary of the earlier change:\n${args.summary?.trim() || '(none was recorded)'}`,
    `The earlier change as a patch against ${from} (for reference only: it does not apply as it is; the run folder keeps it as ${args.patchFile}):\n\`\`\`diff\n${patch.trimEnd()}\n\`\`\``,
  ].join('\n\n');
}
