// Validation of command hooks in a recipe: the recipe's `hooks:`, each agent's `hooks:`, and the
// user-side settings files the run will read (recipe-hooks.ts). Problems come from the runtime's
// own parseHooksConfig, so a recipe, an agent file and a settings.json are held to one rule; a
// problem in the recipe points at the key (file:line:col), one in a settings file names the file.
import { HooksConfigError, parseHooksConfig, type HookWarningPlace } from '../runtime/command-hooks.js';
import type { PendingProblem } from './problems.js';
import { loadUserHooks } from './recipe-hooks.js';
import { inputExists } from '../util/input-files.js';
import { isRecord } from '../util/unknown-value.js';

type Path = (string | number)[];
type Obj = Record<string, unknown>;

/** "hooks.PreToolUse[0].hooks[1].timeout" -> ['PreToolUse', 0, 'hooks', 1, 'timeout']. */
export function hookKeyPath(key: string): Path {
  return key
    .replace(/^hooks\.?/, '')
    .split(/\.|\[(\d+)\]/)
    .filter((s): s is string => s !== undefined && s !== '')
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** ['agents', 'a', 'hooks', 'Stop', 0] -> agents.a.hooks.Stop[0]. */
const shown = (path: Path) => path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

const HINT =
  'hooks are written as in Claude Code: {PreToolUse: [{matcher: "Bash", hooks: [{type: command, command: "...", timeout: 30}]}]}';

function checkHooksAt(value: unknown, base: Path, problem: (p: PendingProblem) => void): void {
  // Each warning comes with its key and its bare problem (the parser's data), not only the worded message.
  const warnings: { problem: string; key?: string }[] = [];
  try {
    parseHooksConfig(value, 'hooks', (message, key, place) =>
      warnings.push({ problem: place?.problem ?? message, ...(key ? { key } : {}) }),
    );
  } catch (err) {
    if (!(err instanceof HooksConfigError)) throw err;
    const rel = err.key ? hookKeyPath(err.key) : [];
    problem({
      code: 'bad_hooks',
      path: [...base, ...rel],
      key: err.problem?.startsWith('unknown') === true,
      message: `${shown([...base, ...rel])}: ${err.problem ?? err.message}`,
      hint: HINT,
    });
    return;
  }
  for (const w of warnings) {
    const rel = w.key ? hookKeyPath(w.key) : [];
    problem({
      code: 'bad_hooks',
      severity: 'warning',
      path: [...base, ...rel],
      key: true,
      message: `${shown([...base, ...rel])}: ${w.problem}`,
    });
  }
}

/** Every hooks problem of the recipe `raw` in `dir`, the user-side settings files included. */
export function checkRecipeHooks(
  raw: Obj,
  ctx: { dir: string; env?: Readonly<Record<string, string | undefined>> },
  problem: (p: PendingProblem) => void,
): void {
  if (raw.hooks !== undefined) checkHooksAt(raw.hooks, ['hooks'], problem);
  if (isRecord(raw.agents))
    for (const [name, a] of Object.entries(raw.agents))
      if (isRecord(a) && a.hooks !== undefined) checkHooksAt(a.hooks, ['agents', name, 'hooks'], problem);
  // What the settings files hold that is skipped (an event not fired here, another hook type) is
  // said at its own line: a guard that silently never runs is worse than a loud one.
  const skipped: { message: string; place: HookWarningPlace }[] = [];
  try {
    loadUserHooks(ctx.dir, ctx.env ?? process.env, (_message, key, place) => {
      if (place) skipped.push({ message: `${key ? `${key}: ` : ''}${place.problem}`, place });
    });
    for (const { message, place } of skipped)
      problem({
        code: 'bad_hooks',
        severity: 'warning',
        path: ['hooks'],
        ...(place.file ? { at: { file: place.file, line: place.line ?? 1, col: place.col ?? 1 } } : {}),
        message: `settings file every agent of this recipe reads: ${message}`,
      });
  } catch (err) {
    if (!(err instanceof HooksConfigError)) throw err;
    const file = err.message.slice(0, err.message.indexOf(': '));
    problem({
      code: 'bad_hooks',
      path: ['hooks'],
      ...(inputExists(file) ? { at: { file, line: 1, col: 1 } } : {}),
      message: `settings file with hooks every agent of this recipe would run: ${err.message}`,
      hint: `fix the file, or move it away; ${HINT}`,
    });
  }
}
