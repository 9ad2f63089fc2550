import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DISPLAY_DEFAULTS } from '../../src/display/defaults.js';
import { buildFrame, instanceRow } from '../../src/display/live-frame.js';
import { applyEvent, createRunState, foldEvents, type RunState } from '../../src/run/run-fold.js';
import { displayWidth, makePainter, stripAnsi } from '../../src/display/terminal-text.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { syntheticSteps, writeSyntheticRun } from './fixtures/synthetic-run.js';

const frame = (s: RunState, width = 80, height = 30, color = false) =>
  buildFrame(s, { width, height, now: s.lastTs + 1_000, budgetUsd: 0.05, painter: makePainter(color) });

/** The state part-way through the synthetic run (up to a phase marker). */
function stateAt(phase: string, extra = 0): RunState {
  const s = createRunState();
  let ts = 1_000;
  for (const step of syntheticSteps(extra)) {
    if ('phase' in step) {
      if (step.phase === phase) break;
      continue;
    }
    ts += step.dt;
    applyEvent(s, { v: 1, runId: 'r', ts, ...step.event } as RunEvent);
  }
  return s;
}

describe('live frame layout', () => {
  it('shows a header with counts, progress and budget, then one row per running instance and the queue', () => {
    const lines = frame(stateAt('fanout-running'));
    expect(lines[0]).toMatch(/^orchestrate · rename-logger · run r · /);
    expect(lines[1]).toMatch(/1\/5\+? · 1 done · 3 running · 1 queued/);
    expect(lines[2]).toMatch(/^budget \[[█░]+\] \$0\.\d{4} of \$0\.0500 \(\d+%\) · [\d,]+ tokens/);
    expect(lines.filter((l) => l.startsWith('▸ '))).toHaveLength(3);
    expect(lines.some((l) => /^✓ plan\s+done\s+2 turns\s+2,300 tok\s+\$0\.0022/.test(l))).toBe(true);
    expect(lines[lines.length - 1]).toBe('· 1 queued: review');
  });

  it('shows the failed instance with its class and the retrying one with its delay', () => {
    const lines = frame(stateAt('after-failure'));
    expect(lines.some((l) => /^✗ apply\.repo-c\s+timeout: no pro/.test(l))).toBe(true);
    expect(lines.some((l) => /^↻ apply\.repo-b\s+retry in 0\.3s/.test(l))).toBe(true);
  });

  it('collapses finished rows to a count when there are many, keeping failures visible', () => {
    const lines = frame(stateAt('after-failure', 8));
    expect(lines.filter((l) => l.startsWith('✓ ') && !/collapsed/.test(l))).toHaveLength(0);
    expect(lines.some((l) => /^✓ 10 done \(rows collapsed\)/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('✗ apply.repo-c'))).toBe(true);
  });

  it('no line reaches the terminal width (so nothing wraps), with or without colour, at 80 and at 50 columns', () => {
    const { events } = writeSyntheticRun(mkdtempSync(join(tmpdir(), 'frame-')));
    for (const state of [stateAt('fanout-running', 8), stateAt('after-failure'), foldEvents(events)]) {
      for (const width of [80, 50]) {
        for (const color of [false, true]) {
          for (const l of frame(state, width, 30, color)) expect(displayWidth(l), stripAnsi(l)).toBeLessThan(width);
        }
      }
    }
  });

  it('never grows taller than the terminal: extra running rows become a "… N more running" line', () => {
    const s = createRunState();
    let ts = 1;
    const add = (e: Record<string, unknown>) => applyEvent(s, { v: 1, runId: 'r', ts: ts++, ...e } as RunEvent);
    add({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'wide',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 't', keys: [], needs: [], dynamic: true }],
    });
    for (let i = 0; i < 40; i++) add({ type: 'instance_start', task: 't', key: `t.k${i}`, attempt: 1 });
    const lines = frame(s, 80, 12);
    expect(lines.length).toBe(12 - DISPLAY_DEFAULTS.reservedRows);
    expect(lines[lines.length - 1]).toMatch(/^… \d+ more running$/);
    const shown = lines.filter((l) => l.startsWith('▸ ')).length;
    expect(Number(/… (\d+) more/.exec(lines[lines.length - 1]!)![1]) + shown).toBe(40);
  });

  it('takes the budget from run_start when the caller gives none, and says when there is no budget', () => {
    const s = createRunState();
    applyEvent(s, {
      v: 1,
      runId: 'r',
      ts: 1,
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'n',
      recipeHash: 'h',
      inputs: {},
      plan: [],
      budget: { usd: 2 },
    });
    expect(buildFrame(s, { width: 80, height: 30, now: 2, painter: makePainter(false) })[2]).toMatch(
      /^budget \[░+\] \$0\.0000 of \$2\.00 \(0%\)/,
    );
    const none = createRunState();
    applyEvent(none, {
      v: 1,
      runId: 'r',
      ts: 1,
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'n',
      recipeHash: 'h',
      inputs: {},
      plan: [],
    });
    expect(buildFrame(none, { width: 80, height: 30, now: 2, painter: makePainter(false) })[2]).toMatch(
      /^spent \$0\.0000 \(no budget set\)/,
    );
  });

  it('rows with emoji (❤️ ⚡ skin tones, ZWJ families) keep the columns aligned and never reach the width', () => {
    const state = stateAt('fanout-running');
    const inst = [...state.instances.values()].find((i) => i.status === 'running')!;
    const texts = [
      'plain activity text',
      'fixing ❤️ the ⚡ loader',
      'thumbs 👍🏽👍🏿 and 👨‍👩‍👧‍👦 family',
      '中文 and 🇯🇵 flags',
      'e\u0301 combining',
    ];
    for (const width of [80, 60]) {
      const widths = texts.map((activity) => {
        const row = instanceRow(
          { ...inst, label: 'apply.❤️-team', activity },
          { width, height: 30, now: state.lastTs + 1_000, budgetUsd: 0.05, painter: makePainter(true) },
        );
        expect(stripAnsi(row)).toContain(activity.slice(0, 1));
        return displayWidth(row);
      });
      expect(new Set(widths).size, `widths at ${width}: ${widths.join(', ')}`).toBe(1);
      expect(widths[0]).toBeLessThan(width);
    }
  });
});
