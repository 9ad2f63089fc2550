// loadRecipe: the normalized LoadedRecipe (defaults merged, durations in ms, retries filled in,
// paths absolute, agent files read), inputs from --set, and command-line overrides.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LoadOptions, loadRecipe } from '../../src/recipe/load.js';
import { RECIPE_DEFAULTS } from '../../src/recipe/defaults.js';
import { lookupModelPrice } from '../../src/recipe/prices.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

let temp: TempRecipe | undefined;
afterEach(() => temp?.cleanup());

function load(yaml: string, files: Record<string, string> = {}, opts: LoadOptions = {}) {
  temp = tempRecipe(yaml, files);
  return loadRecipe(temp.file, { cwd: temp.dir, env: {}, ...opts });
}
function loaded(yaml: string, files: Record<string, string> = {}, opts: LoadOptions = {}) {
  const r = load(yaml, files, opts);
  if (!r.ok) throw new Error(r.problems.map((p) => `${p.line}:${p.col} ${p.message}`).join('\n'));
  return r.recipe;
}
const messages = (r: ReturnType<typeof load>) => (r.ok ? [] : r.problems.map((p) => p.message));

const WORKER_MD =
  '---\nname: worker\ndescription: Does the work\ntools: read, bash\nmodel: claude-haiku-4-5\n---\nYou are the worker.\n';

describe('normalization', () => {
  it('turns durations into ms and fills in the retry policy', () => {
    const r = loaded(
      'name: r\ntasks:\n  - id: a\n    prompt: p\n    timeout: 1h30m\n    idle_timeout: 90\n    retries: 2\n  - id: b\n    prompt: p\n    retries: { on: [timeout], backoff: { initial: 500ms, factor: 3 } }\n',
    );
    const [a, b] = r.tasks;
    expect(a).toMatchObject({
      timeoutMs: 5_400_000,
      idleTimeoutMs: 90_000,
      retries: { count: 2, backoff: RECIPE_DEFAULTS.retries.backoff, on: [...RECIPE_DEFAULTS.retries.on] },
    });
    expect(b!.retries).toEqual({
      count: 1,
      backoff: { initialMs: 500, maxMs: RECIPE_DEFAULTS.retries.backoff.maxMs, factor: 3 },
      on: ['timeout'],
    });
    expect(b!.timeoutMs).toBeUndefined();
  });

  it('merges defaults under each task; the task value wins', () => {
    const r = loaded(
      'name: r\ndefaults:\n  timeout: 10m\n  on_failure: continue\n  context: summaries\n  max_parallel: 2\n  env: { A: "1", B: "2" }\ntasks:\n  - id: a\n    prompt: p\n  - id: b\n    needs: [a]\n    for_each: [x]\n    prompt: "${{ item }}"\n    timeout: 1m\n    env: { B: "3" }\n',
    );
    const [a, b] = r.tasks;
    expect(a).toMatchObject({
      timeoutMs: 600_000,
      onFailure: 'continue',
      context: 'summaries',
      env: { A: '1', B: '2' },
    });
    expect(a!.maxParallel).toBeUndefined();
    expect(b).toMatchObject({ timeoutMs: 60_000, maxParallel: 2, env: { A: '1', B: '3' } });
  });

  it('resolves paths against the recipe folder and reads agent files', () => {
    const r = loaded(
      'name: r\nprovider: scripted\nscript: s.yaml\nagents:\n  worker: { system_file: agents/worker.md }\ntasks:\n  - id: a\n    prompt: p\n    cwd: sub\n',
      {
        'agents/worker.md': WORKER_MD,
        's.yaml': '- text: hi\n',
      },
    );
    const worker = r.agents.worker!;
    expect(worker).toMatchObject({
      name: 'worker',
      description: 'Does the work',
      tools: ['read', 'bash'],
      model: 'claude-haiku-4-5',
      system: 'You are the worker.',
      provider: 'scripted',
    });
    expect(worker.systemFile).toBe(join(r.dir, 'agents/worker.md'));
    expect(worker.script).toBe(join(r.dir, 's.yaml'));
    expect(r.tasks[0]).toMatchObject({
      agent: 'worker',
      cwd: 'sub',
      dir: r.dir,
      kind: 'agent',
      location: { line: 7, col: 5 },
    });
  });

  it('recipe agent fields override the agent file, and models resolve in order', () => {
    const r = loaded(
      'name: r\nmodel: claude-opus-4-1\nagents:\n  worker: { system_file: agents/worker.md, tools: [read], model: claude-sonnet-4-5 }\n  helper: { system: "Help." }\ntasks:\n  - id: a\n    agent: helper\n    prompt: p\n',
      { 'agents/worker.md': WORKER_MD },
    );
    expect(r.agents.worker).toMatchObject({ tools: ['read'], model: 'claude-sonnet-4-5' });
    expect(r.agents.helper).toMatchObject({ model: 'claude-opus-4-1', system: 'Help.' });
    const fromEnv = loaded(
      'name: r\ntasks:\n  - id: a\n    prompt: p\n',
      {},
      { env: { ORCHESTRATE_MODEL: 'claude-haiku-4-5' } },
    );
    expect(fromEnv.model).toBe('claude-haiku-4-5');
    expect(fromEnv.agents.default!.model).toBe('claude-haiku-4-5');
  });

  it('with no agents a prompt task gets the built-in default agent; with one agent, that one', () => {
    const none = loaded('name: r\ntasks:\n  - id: a\n    prompt: p\n');
    expect(none.tasks[0]!.agent).toBe('default');
    expect(none.agents.default).toMatchObject({
      implicit: true,
      tools: ['read', 'bash', 'edit', 'write'],
      model: RECIPE_DEFAULTS.model,
    });
    const one = loaded('name: r\nagents:\n  solo: { system: s }\ntasks:\n  - id: a\n    prompt: p\n');
    expect(one.tasks[0]!.agent).toBe('solo');
    expect(Object.keys(one.agents)).toEqual(['solo']);
  });

  it('normalizes pairs, shell steps, verify steps, needs and for_each forms', () => {
    const r = loaded(
      'name: r\nagents:\n  p: { system: plan }\n  w: { system: work }\ntasks:\n  - id: s\n    run: make\n  - id: pair\n    needs: s\n    pair: { planner: p, worker: w }\n    prompt: build\n    verify: make test\n  - id: fan\n    needs: [s, s]\n    agent: w\n    for_each: { glob: "x/*" }\n    prompt: "${{ item }}"\n    output_schema: { type: object }\n',
    );
    const [s, pair, fan] = r.tasks;
    expect(s).toMatchObject({ kind: 'run', run: 'make', needs: [] });
    expect(s!.agent).toBeUndefined();
    expect(pair).toMatchObject({
      kind: 'pair',
      pair: { planner: 'p', worker: 'w', maxRounds: RECIPE_DEFAULTS.pairMaxRounds },
      needs: ['s'],
      verify: [{ run: 'make test' }],
    });
    expect(fan).toMatchObject({
      needs: ['s'],
      forEach: { kind: 'glob', pattern: 'x/*', type: 'dir' },
      output: 'json',
      as: 'item',
    });
  });
});

describe('inputs and overrides', () => {
  const YAML =
    'name: r\ninputs:\n  n: { type: number, default: 1 }\n  on: { type: boolean, default: false }\n  list: { type: list, default: [a] }\n  s: { default: x }\nenv:\n  LABEL: "n=${{ inputs.n }}"\ntasks:\n  - id: a\n    prompt: p\n';

  it('--set values are converted to the declared type and reach env', () => {
    const r = loaded(YAML, {}, { set: ['n=42', 'on=yes', 'list=["p", "q"]', 's=a=b'] });
    expect(r.inputValues).toEqual({ n: 42, on: true, list: ['p', 'q'], s: 'a=b' });
    expect(r.env).toEqual({ LABEL: 'n=42' });
    expect(loaded(YAML, {}, { set: ['list=u, v'] }).inputValues.list).toEqual(['u', 'v']);
  });

  it('bad --set values are problems that say what was expected', () => {
    // Problems come sorted by position, so compare as a set.
    expect(messages(load(YAML, {}, { set: ['n=many', 'on=perhaps', 'list=[oops', 'nn=1', 'novalue'] })).sort()).toEqual(
      [
        '--set n: input "n" expects a number, got "many"',
        '--set on: input "on" expects true or false, got "perhaps"',
        '--set list: input "list" expects a list: a,b,c or a JSON array, got "[oops"',
        '--set nn: the recipe has no input "nn"',
        '--set novalue: expected key=value',
      ].sort(),
    );
  });

  it('required inputs must be set for a run but not for validate', () => {
    const yaml =
      'name: r\ninputs:\n  target: { required: true }\ntasks:\n  - id: a\n    prompt: "${{ inputs.target }}"\n';
    expect(messages(load(yaml))).toEqual(['input "target" is required']);
    expect(load(yaml, {}, { allowMissingInputs: true }).ok).toBe(true);
    expect(loaded(yaml, {}, { set: ['target=x'] }).inputValues).toEqual({ target: 'x' });
  });

  it('--model, --provider, --concurrency and --budget-usd override the recipe', () => {
    const yaml =
      'name: r\nmodel: claude-opus-4-1\nconcurrency: 2\nbudget: { usd: 5, tokens: 400k }\nscript: s.yaml\nagents:\n  w: { model: claude-sonnet-4-5 }\ntasks:\n  - id: a\n    prompt: p\n';
    const r = loaded(
      yaml,
      { 's.yaml': '- text: ok\n' },
      { model: 'claude-haiku-4-5', provider: 'scripted', concurrency: 9, budgetUsd: 0.5 },
    );
    expect(r).toMatchObject({
      model: 'claude-haiku-4-5',
      provider: 'scripted',
      concurrency: 9,
      budget: { usd: 0.5, tokens: 400_000 },
    });
    expect(r.agents.w).toMatchObject({ model: 'claude-haiku-4-5', provider: 'scripted' });
  });

  it('--provider scripted needs a script for every agent', () => {
    const r = load(
      'name: r\nagents:\n  w: { system: s }\ntasks:\n  - id: a\n    prompt: p\n',
      {},
      { provider: 'scripted' },
    );
    expect(messages(r)).toEqual(['--provider scripted: agent "w" has no script to replay']);
  });

  it('a model the recipe declares under models: is accepted, with its price and limits (defaults for what it leaves out)', () => {
    const r = loaded(
      'name: r\nmodel: Anthropic/Claude-Future-7\nmodels:\n  claude-future-7: { price: { input: 2, output: 10 }, context_window: 1M }\n  claude-other: { price: { input: 1, output: 2, cache_read: 0.5, cache_write: 3 }, max_tokens: 64k }\nagents:\n  v: { tools: [read] }\n  w: { model: claude-other }\ntasks:\n  - id: a\n    agent: v\n    prompt: p\n  - id: b\n    agent: w\n    prompt: p\n',
    );
    expect(r.agents.v!.modelSpec).toEqual({
      cost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
      contextWindow: 1_000_000,
      maxTokens: 32_000,
    });
    expect(r.agents.w!.modelSpec).toEqual({
      cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 3 },
      contextWindow: 200_000,
      maxTokens: 64_000,
      maxTokensDeclared: true,
    });
    expect(lookupModelPrice('claude-future-7', 'anthropic', r.models)).toMatchObject({
      input: 2,
      output: 10,
      cacheRead: 0.2,
      cacheWrite: 2.5,
      known: true,
    });
    expect(lookupModelPrice('claude-future-7', 'anthropic')).toMatchObject({ known: false });
  });

  it('an undeclared unknown model points at models:, and declared limits too small to answer in are refused where they are written', () => {
    const r = load('name: r\nmodel: claude-future-7\ntasks:\n  - id: a\n    prompt: p\n');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]!.hint).toContain('models: { claude-future-7: { price:');
    const bad = load(
      'name: r\nmodel: claude-future-7\nmodels:\n  claude-future-7: { price: { input: 1, output: 1 }, context_window: 10, max_tokens: 0 }\ntasks:\n  - id: a\n    prompt: p\n',
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.problems.map((p) => [p.message, p.line])).toEqual([
        ['models.claude-future-7.context_window must be at least 1000', 4],
        ['models.claude-future-7.max_tokens must be at least 1', 4],
      ]);
    }
  });

  it('unknown models are caught where they are named, unless the provider is scripted', () => {
    expect(messages(load('name: r\nagents:\n  w: { model: gpt-5 }\ntasks:\n  - id: a\n    prompt: p\n'))).toEqual([
      'unknown model "gpt-5"',
    ]);
    expect(messages(load('name: r\ntasks:\n  - id: a\n    prompt: p\n', {}, { model: 'claude-sonet' }))).toEqual([
      '--model names unknown model "claude-sonet"',
    ]);
    expect(
      load(
        'name: r\nscript: s.yaml\ntasks:\n  - id: a\n    prompt: p\n',
        { 's.yaml': '- text: ok\n' },
        { model: 'anything', provider: 'scripted' },
      ).ok,
    ).toBe(true);
  });
});
