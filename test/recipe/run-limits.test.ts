// Recipe keys that bound agents: max_turns (agent and task), loop: thresholds, pair.on_max_rounds,
// and the failure classes retries.on may name; as loadRecipe normalizes them and as the worker
// receives them (agentSpec, the instance task).
import { afterEach, describe, expect, it } from 'vitest';
import { agentSpec } from '../../src/orchestrator/execution/instance-runner.js';
import { loadRecipe } from '../../src/recipe/load.js';
import { RECIPE_DEFAULTS } from '../../src/recipe/defaults.js';
import { type TempRecipe, tempRecipe } from './recipe-files.js';

let temp: TempRecipe | undefined;
afterEach(() => temp?.cleanup());

function loaded(yaml: string) {
  temp = tempRecipe(yaml);
  const r = loadRecipe(temp.file, { cwd: temp.dir, env: {} });
  if (!r.ok) throw new Error(r.problems.map((p) => `${p.line}:${p.col} ${p.message}`).join('\n'));
  return r.recipe;
}

describe('bounded-agent recipe keys', () => {
  it('loop: false turns detection off, a map changes only the thresholds it names, absent keeps the runtime defaults', () => {
    const r = loaded(`name: r
agents:
  off: { loop: false }
  tuned: { loop: { identical_calls: 6, grace_turns: 0 }, max_turns: 40 }
  plain: {}
tasks:
  - { id: a, agent: off, prompt: p }
`);
    expect(agentSpec(r.agents.off!).loop).toEqual({ enabled: false });
    expect(agentSpec(r.agents.tuned!).loop).toEqual({ enabled: true, identicalCalls: 6, graceTurns: 0 });
    expect(agentSpec(r.agents.plain!).loop).toBeUndefined();
    expect(r.agents.tuned!.maxTurns).toBe(40);
    expect(r.agents.plain!.maxTurns).toBeUndefined();
  });

  it("a task's max_turns is its own; pairs fail without approval unless on_max_rounds: accept", () => {
    const r = loaded(`name: r
agents:
  p: {}
  w: {}
tasks:
  - { id: a, agent: w, prompt: p, max_turns: 0 }
  - { id: b, pair: { planner: p, worker: w }, prompt: p }
  - { id: c, pair: { planner: p, worker: w, on_max_rounds: accept }, prompt: p }
`);
    const [a, b, c] = r.tasks;
    expect(a!.maxTurns).toBe(0);
    expect(b!.pair).toEqual({
      planner: 'p',
      worker: 'w',
      maxRounds: RECIPE_DEFAULTS.pairMaxRounds,
      onMaxRounds: 'fail',
    });
    expect(c!.pair!.onMaxRounds).toBe('accept');
  });

  it('the new classes are not retried by default but may be listed in retries.on', () => {
    const r = loaded(`name: r
tasks:
  - { id: a, prompt: p, retries: 2 }
  - { id: b, prompt: p, retries: { count: 1, on: [max_turns, loop, not_approved, write_scope] } }
`);
    for (const c of ['loop', 'max_turns', 'compaction', 'not_approved', 'write_scope'])
      expect(r.tasks[0]!.retries.on).not.toContain(c);
    expect(r.tasks[1]!.retries.on).toEqual(['max_turns', 'loop', 'not_approved', 'write_scope']);
  });
});
