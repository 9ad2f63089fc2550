// Fault injection at the model API: 16 agents (a fan-out over 16 folders) run against the fake
// Anthropic server while it answers 20 % of the requests with a fault (429 with retry-after,
// 529, 500, a stream cut mid-message, a stream that ends early, a slow stream, a 400 prompt too
// long), drawn with a seeded RNG. Every task must finish correctly, and every side effect must
// happen exactly once: each agent appends one line to a file with bash, so a tool call run
// twice (a retried turn that re-executed its tools) shows as a second line.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic-server.js';
import {
  cleanupTempDirs,
  conversationResponder,
  events,
  ofType,
  tempProject,
} from '../orchestrator/helpers/run-fixtures.js';
import { checkJsonl, printSummary } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

const NAMES = Array.from({ length: 16 }, (_, i) => `f${String(i).padStart(2, '0')}`);

const RECIPE = `name: api-faults
provider: anthropic
model: claude-haiku-4-5
concurrency: 8
agents:
  writer: { tools: [bash] }
tasks:
  - id: write
    for_each: { glob: "dirs/*" }
    agent: writer
    cwd: \${{ item }}
    prompt: "Write the marker for \${{ item }}"
    retries: { count: 3, on: [rate_limit, overloaded, timeout, stalled, crashed, error], backoff: { initial: 20ms, max: 200ms } }
`;

describe('model API faults (fake Anthropic, seeded 20 % fault rate)', { timeout: 120_000 }, () => {
  it('16 agents all finish correctly and every tool side effect happens exactly once', async () => {
    const files: Record<string, string> = { 'recipe.yaml': RECIPE };
    for (const n of NAMES) files[`dirs/${n}/.keep`] = '';
    const dir = tempProject(files);
    const server = await startFakeAnthropic({
      respond: conversationResponder([
        {
          match: /Write the marker for dirs\/(f\d\d)\b/,
          turns: [
            {
              tools: [{ name: 'bash', args: { command: 'printf "marker-%s\\n" "$(basename "$PWD")" >> written.txt' } }],
            },
            { text: 'marker written' },
          ],
        },
      ]),
      faults: { rate: 0.2, seed: Number(process.env.FAULT_SEED ?? 20240607), retryAfterMs: 30, slowDelayMs: 15 },
    });
    try {
      const t0 = Date.now();
      const r = await runRecipeFile(
        join(dir, 'recipe.yaml'),
        { cwd: dir },
        {
          runsDir: join(dir, 'runs'),
          env: {
            ANTHROPIC_API_KEY: 'sk-ant-fault-test',
            ANTHROPIC_BASE_URL: server.url,
            ORCHESTRATE_RETRY_BASE_MS: '20',
            PATH: process.env.PATH,
          },
        },
      );
      if (!r.ok) throw new Error(JSON.stringify(r));
      const out = r.outcome;
      const log = events(out.dir);
      const failures = ofType(log, 'instance_failed').map((e) => `${e.key}: [${e.failure}] ${e.error}`);
      expect(failures, failures.join('\n')).toEqual([]);
      expect(out.status).toBe('succeeded');

      // Every task correct: one file per folder, exactly one line, the right marker.
      for (const n of NAMES) expect(readFileSync(join(dir, 'dirs', n, 'written.txt'), 'utf8'), n).toBe(`marker-${n}\n`);
      const result = JSON.parse(readFileSync(join(out.dir, 'result.json'), 'utf8')) as {
        status: string;
        instances: { id: string; status: string; output: unknown }[];
      };
      expect(result.instances.map((i) => [i.status, i.output])).toEqual(NAMES.map(() => ['done', 'marker written']));

      // Each session holds exactly one execution of the bash call, and every line parses.
      let toolResults = 0;
      for (const n of NAMES) {
        const s = checkJsonl(join(out.dir, 'sessions', `write.dirs-${n}.jsonl`));
        expect(s.bad).toEqual([]);
        expect(s.torn).toBeUndefined();
        const results = s.lines
          .map((l) => JSON.parse(l) as { type: string; message?: { role: string } })
          .filter((e) => e.type === 'message' && e.message?.role === 'toolResult');
        expect(results, n).toHaveLength(1);
        toolResults += results.length;
      }

      // The dice really rolled: a fault of (nearly) every kind was injected, and they were ridden out.
      const byKind: Record<string, number> = {};
      for (const f of server.faults) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
      expect(server.faults.length).toBeGreaterThanOrEqual(Math.floor(server.requests.length / 5) - 1);
      expect(Object.keys(byKind).length).toBeGreaterThanOrEqual(5);
      // Transient faults are ridden out inside the agent (provider and session retries); only a
      // prompt-too-long that compaction cannot shrink (a tiny session) reaches the task's retries.
      const taskRetries = ofType(log, 'instance_retry');
      expect(taskRetries.filter((e) => !/prompt is too long/.test(e.error)).map((e) => e.error)).toEqual([]);
      const sessionRetries = log.filter((e) => e.type === 'agent_event' && e.event.type === 'auto_retry_start').length;
      printSummary('api-faults', {
        agents: NAMES.length,
        requests: server.requests.length,
        faults: server.faults.length,
        ...Object.fromEntries(Object.entries(byKind).map(([k, v]) => [`fault_${k}`, v])),
        retried_requests: server.requests.length - 2 * NAMES.length,
        session_retries: sessionRetries,
        task_retries: taskRetries.length,
        tasks_completed: ofType(log, 'instance_done').length,
        tool_executions: toolResults,
        duplicated_side_effects: 0,
        ms: Date.now() - t0,
      });
    } finally {
      await server.close();
    }
  });
});
