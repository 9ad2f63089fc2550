import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attachRunDisplay } from '../../src/display/attach-run-display.js';
import { RUN_EVENT_VERSION, RunEventSchema, parseJsonLine } from '../../src/display/json-lines.js';
import { RunStore } from '../../src/run/run-store.js';
import { syntheticSteps } from './fixtures/synthetic-run.js';

function runJson(mode: 'json' | 'json-full') {
  const store = RunStore.create(mkdtempSync(join(tmpdir(), 'json-lines-')), 'run-j');
  let out = '';
  let err = '';
  const display = attachRunDisplay(store, {
    stream: {
      write: (s: string) => {
        err += s;
        return true;
      },
    },
    stdout: {
      write: (s: string) => {
        out += s;
        return true;
      },
    },
    isTTY: false,
    color: false,
    mode,
  });
  const inputs = syntheticSteps().flatMap((s) => ('phase' in s ? [] : [s.event]));
  for (const e of inputs) store.append(e);
  display.finish();
  return { inputs, lines: out.trimEnd().split('\n'), err };
}

describe('--json event stream', () => {
  it('every line parses with the exported, versioned schema and carries the run id', () => {
    const { lines } = runJson('json');
    for (const line of lines) {
      const parsed = RunEventSchema.safeParse(JSON.parse(line));
      expect(parsed.success, line).toBe(true);
      expect(parseJsonLine(line)).toMatchObject({ v: RUN_EVENT_VERSION, runId: 'run-j' });
    }
  });

  it("every child's agent events are present and tagged with task, instance key, attempt and parent; token deltas are left out", () => {
    const { inputs, lines } = runJson('json');
    const events = lines.map((l) => parseJsonLine(l)!);
    const wanted = inputs.filter((e) => !(e.type === 'agent_event' && e.event.type === 'message_update'));
    expect(events.map((e) => e.type)).toEqual(wanted.map((e) => e.type));
    const agent = events.filter((e) => e.type === 'agent_event');
    expect(new Set(agent.map((e) => e.type === 'agent_event' && `${e.key}#${e.attempt}`))).toEqual(
      new Set(['plan#1', 'apply.repo-a#1', 'apply.repo-b#2', 'apply.repo-c#1']),
    );
    for (const e of agent) {
      if (e.type !== 'agent_event') continue;
      expect(e.event.type).not.toBe('message_update');
      expect(typeof e.task).toBe('string');
      if (e.task === 'apply') expect(e.parent).toBe('apply');
    }
    expect(agent.some((e) => e.type === 'agent_event' && e.event.type === 'tool_execution_update')).toBe(true);
  });

  it('--json=full also carries the message deltas', () => {
    const { inputs, lines } = runJson('json-full');
    expect(lines).toHaveLength(inputs.length);
    const deltas = lines
      .map((l) => parseJsonLine(l)!)
      .filter((e) => e.type === 'agent_event' && e.event.type === 'message_update');
    expect(deltas.length).toBe(
      inputs.filter((e) => e.type === 'agent_event' && e.event.type === 'message_update').length,
    );
    expect(deltas.length).toBeGreaterThan(0);
  });

  it('prints nothing else: no progress on stderr, no summary after run_end', () => {
    const { lines, err } = runJson('json');
    expect(err).toBe('');
    expect(parseJsonLine(lines[lines.length - 1]!)?.type).toBe('run_end');
  });
});

describe('the event schema comment of json-lines.ts', () => {
  it('documents every event type a line can have', () => {
    const source = readFileSync(join(import.meta.dirname, '../../src/display/json-lines.ts'), 'utf8');
    const comment = source.slice(0, source.indexOf('*/'));
    const types = RunEventSchema.options.map((o) => o.shape.type.value);
    expect(types.length).toBeGreaterThan(20);
    expect(types.filter((t) => !new RegExp(`\\b${t}\\b`).test(comment))).toEqual([]);
  });
});
