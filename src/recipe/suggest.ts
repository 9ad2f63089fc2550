// "Did you mean" hints: edit distance to the known names, plus keys users carry over from other
// tools (GitHub Actions, Argo, CrewAI, Goose) that are spelled differently here.

/**
 * Edit distance counting an insertion, deletion, substitution or swap of two neighbouring
 * characters as one edit ("modle" -> "model" is 1), with an early exit past `limit`.
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (prevPrev[j - 2] ?? 0) + 1);
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    prevPrev = prev;
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** Names other tools use for our keys. Only suggested when the target is valid where the typo is. */
const KNOWN_ALIASES: Record<string, string> = {
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

/** The closest candidate to `word`, if one is close enough to be a likely typo. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const alias = KNOWN_ALIASES[word];
  if (alias && candidates.includes(alias)) return alias;
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    // Allow about one edit per three characters: "colour"->"color" yes, "foo"->"env" no.
    const limit = Math.max(1, Math.floor(Math.max(word.length, c.length) / 3));
    const d = editDistance(lower, c.toLowerCase(), limit);
    if (d <= limit && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (best === undefined) {
    // A prefix or containment often means a truncated or decorated name (timeout_sec -> timeout).
    best = candidates.find((c) => c.length >= 3 && (lower.startsWith(c.toLowerCase()) || c.toLowerCase().startsWith(lower)) && lower.length >= 3);
  }
  return best;
}

/** A hint line: "did you mean X?" when a candidate is close, else the list of valid names. */
export function suggestionHint(word: string, candidates: readonly string[], what: string): string {
  const best = didYouMean(word, candidates);
  if (best) return `did you mean "${best}"?`;
  if (candidates.length === 0) return `no ${what} is defined`;
  const shown = candidates.slice(0, 12).join(', ');
  return `valid ${what}: ${shown}${candidates.length > 12 ? ', ...' : ''}`;
}
