// Public surface of the recipe module: load, validate, plan, expand, estimate.
export { RETRY_FAILURE_CLASSES } from './failure-classes.js';
export {
  BUILTIN_TOOLS,
  PROVIDERS,
  RecipeSchema,
  recipeJsonSchema,
  type ProviderName,
  type RecipeDocument,
} from './schema.js';
export { RECIPE_DEFAULTS, type RetryFailureClass } from './defaults.js';
export { RecipeError, formatProblem, sortProblems, type RecipeProblem, type RecipeProblemCode } from './problems.js';
export { validateRecipeFile, validateRecipeText, type ValidateResult, type ValidatedRecipe } from './validate.js';
export { displayPath } from '../util/display-path.js';
export { loadRecipe, type LoadOptions, type LoadResult } from './load.js';
export type {
  LoadedRecipe,
  LoadedTask,
  ApproveGate,
  LoadedAgent,
  ForEachSpec,
  BoardSeed,
  TaskRetries,
  VerifyStep,
  Budget,
  ProviderLimits,
  RecipeOverrides,
} from './loaded-recipe.js';
export { IMPLICIT_AGENT } from './normalize.js';
export { BOARD_TOOL_NAMES, isBoardTool, type BoardToolName } from './board-tool-names.js';
export {
  buildPlan,
  expandTask,
  resolveInstance,
  staticScope,
  type InstanceSeed,
  type ResolvedInstance,
  type RecipePlan,
  type PlanTask,
  type PlanLevel,
  type ExpandResult,
  type ResolveResult,
} from './plan.js';
export {
  evaluateExpression,
  renderTemplate,
  renderText,
  checkTemplate,
  EXPRESSION_FUNCTIONS,
  type ExpressionScope,
  type TaskResultView,
} from './expressions.js';
export { parseExpression, parseTemplate, hasExpression } from './expression-parser.js';
export { estimateRecipe, type RecipeEstimate, type TaskEstimate } from './estimate.js';
export { dryRun, type DryRunReport, type DryRunResult } from './dry-run.js';
export { parseDuration, parseTokenCount } from './duration.js';
export { expandGlob, globToRegExp } from './glob.js';
export { lookupModelPrice, type ModelPrice } from './prices.js';
export { coerceInput, type InputSpec } from './inputs.js';
