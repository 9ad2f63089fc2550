// The display over a real run: the coordinator runs a scripted (offline) recipe on worker
// threads, with a fan-out, a retry and a final failure; the plain log, the JSON stream, the
// report data and `show --instance` are checked against what it actually wrote.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { attachRunDisplay, type RunDisplay } from '../../src/display/attach-run-display.js';
import { formatConversation } from '../../src/display/conversation-text.js';
import { RunEventSchema, parseJsonLine } from '../../src/display/json-lines.js';
import { buildReportData } from '../../src/display/report/report-data.js';
import { findInstance, loadRunFolder, sessionFileOf } from '../../src/display/run-folder.js';
import { readConversation } from '../../src/display/session-conversation.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { readRunLog } from '../../src/run/run-store.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';

const FIXTURE = resolve(import.meta.dirname, 'fixtures/scripted-fanout');

let plain = '';
let summary = '';
let json = '';
let runDir = '';
let logged: RunEvent[] = [];

beforeAll(async () => {
  const project = mkdtempSync(join(tmpdir(), 'display-e2e-'));
  cpSync(FIXTURE, project, { recursive: true });
  const displays: RunDisplay[] = [];
  const result = await runRecipeFile(
    join(project, 'recipe.yaml'),
    { cwd: project, env: {} },
    {
      env: {},
      runsDir: join(project, 'runs'),
      onStore: (store) => {
        runDir = store.dir;
        displays.push(
          attachRunDisplay(store, {
            stream: {
              write: (s) => {
                plain += s;
                return true;
              },
            },
            stdout: {
              write: (s) => {
                summary += s;
                return true;
              },
            },
            isTTY: false,
            color: false,
            mode: 'live',
          }),
          attachRunDisplay(store, {
            stream: { write: () => true },
            stdout: {
              write: (s) => {
                json += s;
                return true;
              },
            },
            isTTY: false,
            color: false,
            mode: 'json',
          }),
        );
      },
    },
  );
  for (const d of displays) d.finish();
  expect(result.ok).toBe(true);
  logged = readRunLog(join(runDir, 'run.jsonl')).events;
}, 60_000);

describe('display over a real scripted run (fan-out, retry, failure)', () => {
  it('the plain log has one timestamped line per state change, including the retry and the final failure', () => {
    const lines = plain.trimEnd().split('\n');
    for (const l of lines) expect(l).toMatch(/^\d\d:\d\d:\d\d \S/);
    expect(lines.length).toBeLessThan(logged.length / 2);
    const text = lines.map((l) => l.slice(9)).join('\n');
    expect(text).toContain('plan: started (attempt 1)');
    expect(text).toMatch(/plan: done in [\d.]+m?s, 2 turns, [\d,]+ tokens, \$0\.0000/);
    expect(text).toMatch(/apply: expanded into 3 instances/);
    expect(text).toMatch(/apply\.slow: attempt 1 failed \(timeout\): .*; retrying in [\d.]+s/);
    expect(text).toContain('apply.slow: started (attempt 2');
    expect(text).toMatch(/apply\.slow: failed \(timeout\) after/);
    expect(text).toMatch(/review: skipped \(/);
    expect(text).toMatch(/run \S+ failed in/);
    expect(summary).toMatch(/apply\.slow\s+failed .*timeout/);
  });

  it('--json carries every logged event, each parsable by the schema, with every child agent event tagged', () => {
    const lines = json.trimEnd().split('\n');
    const parsed = lines.map((l) => {
      expect(RunEventSchema.safeParse(JSON.parse(l)).success, l).toBe(true);
      return parseJsonLine(l)!;
    });
    expect(parsed.map((e) => e.type)).toEqual(logged.map((e) => e.type));
    const agentKeys = new Set(parsed.flatMap((e) => (e.type === 'agent_event' ? [`${e.key}#${e.attempt}`] : [])));
    expect(agentKeys).toEqual(new Set(['plan#1', 'apply.alpha#1', 'apply.beta#1', 'apply.slow#1', 'apply.slow#2']));
    for (const e of parsed) {
      if (e.type !== 'agent_event') continue;
      expect(e.runId).toBe(parsed[0]!.runId);
      expect(e.parent).toBe(e.task);
      expect(e.key.startsWith(e.task)).toBe(true);
    }
  });

  it('the report has one timeline bar per attempt; the retried instance shows a retry bar then a failed one', () => {
    const data = buildReportData(loadRunFolder(runDir));
    const starts = logged.filter((e) => e.type === 'instance_start').length;
    expect(data.rows.reduce((n, r) => n + r.bars.length, 0)).toBe(starts);
    expect(data.rows.find((r) => r.label === 'apply.slow')!.bars.map((b) => b.outcome)).toEqual(['retry', 'failed']);
    expect(data.tasks.find((t) => t.task === 'apply')).toMatchObject({
      instances: 3,
      done: 2,
      failed: 1,
      status: 'failed',
    });
  });

  it("show --instance reads the planner's real session: the ls call and its result", () => {
    const folder = loadRunFolder(runDir);
    const inst = findInstance(folder.state, 'plan').found!;
    const text = formatConversation(readConversation(sessionFileOf(runDir, inst)), 'plan');
    expect(text).toContain('List the items');
    expect(text).toContain('→ ls({"path":"."})');
    expect(text).toMatch(/← ls\n {4}notes\.txt/);
    expect(text).toContain('{"items": ["alpha", "beta", "slow"]}');
  });
});
