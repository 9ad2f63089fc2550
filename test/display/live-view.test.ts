import { describe, expect, it } from 'vitest';
import { LiveView } from '../../src/display/live-view.js';
import type { RunEvent } from '../../src/run/run-events.js';

class FakeTty {
  writes: string[] = [];
  columns = 80;
  rows = 30;
  write(s: string): boolean {
    this.writes.push(s);
    return true;
  }
}

const CLEAR_LINE = '\x1b[2K';
let ts = 1_000;
const ev = (e: Record<string, unknown>) => ({ v: 1, runId: 'r', ts: ts++, ...e }) as RunEvent;

function view(out: FakeTty) {
  // Huge intervals: nothing draws on a timer during the test, so every write is accounted for.
  return new LiveView(out, {
    color: false,
    now: () => 5_000,
    restoreOnExit: false,
    frameIntervalMs: 60_000,
    tickIntervalMs: 60_000,
  });
}

/** A view of a run whose one task `t` has the instances `keys` (its run_start absorbed). */
function viewOfTask(out: FakeTty, keys: string[]) {
  const v = view(out);
  v.absorb(
    ev({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'n',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 't', keys, needs: [], dynamic: false }],
    }),
  );
  return v;
}

describe('live view drawing', () => {
  it('hides the cursor while live and shows it again on stop', () => {
    const out = new FakeTty();
    const v = view(out);
    v.start();
    expect(out.writes[0]).toBe('\x1b[?25l');
    v.stop();
    expect(out.writes[out.writes.length - 1]).toBe('\x1b[?25h');
  });

  it('a redraw moves up over the previous frame and rewrites only the lines that changed, in one write', () => {
    const out = new FakeTty();
    const v = viewOfTask(out, ['t.a', 't.b']);
    v.absorb(ev({ type: 'instance_start', task: 't', key: 't.a', attempt: 1 }));
    v.absorb(ev({ type: 'instance_start', task: 't', key: 't.b', attempt: 1 }));
    v.start();
    const first = v.frame();
    const writesBefore = out.writes.length;
    // One tool starts on t.b: only its row changes.
    v.handle(
      ev({
        type: 'agent_event',
        task: 't',
        key: 't.b',
        attempt: 1,
        event: { type: 'tool_execution_start', toolCallId: 'c', toolName: 'grep', args: { pattern: 'log' } },
      }),
    );
    v.stop(); // draws the pending frame now
    const redraw = out.writes[writesBefore]!;
    expect(out.writes.length).toBe(writesBefore + 2); // the frame, then show-cursor
    expect(redraw.startsWith(`\x1b[${first.length}A`)).toBe(true);
    expect(redraw.split(CLEAR_LINE)).toHaveLength(2); // exactly one line cleared and rewritten
    expect(redraw).toContain('grep log');
    expect(redraw).not.toContain('t.a ');
  });

  it('coalesces bursts of events into one frame per interval', () => {
    const out = new FakeTty();
    const v = viewOfTask(out, ['t']);
    v.absorb(ev({ type: 'instance_start', task: 't', key: 't', attempt: 1 }));
    v.start();
    const after = out.writes.length;
    for (let i = 0; i < 200; i++)
      v.handle(ev({ type: 'agent_event', task: 't', key: 't', attempt: 1, event: { type: 'turn_end' } }));
    expect(out.writes.length).toBe(after); // nothing drawn synchronously per event
    v.stop();
    expect(out.writes.length).toBe(after + 2);
    expect(out.writes[after]).toContain('200 turns');
  });

  it('a shorter frame clears the leftover lines of the taller one below it', () => {
    const out = new FakeTty();
    const v = viewOfTask(out, ['t']);
    v.absorb(ev({ type: 'instance_queued', task: 't', key: 't', attempt: 1 }));
    v.start();
    const n = out.writes.length;
    v.handle(ev({ type: 'instance_start', task: 't', key: 't', attempt: 1 }));
    v.stop();
    // Frame went from header + queued line to header + running row: same height, no clear-down.
    expect(out.writes[n]).not.toContain('\x1b[0J');
    const out2 = new FakeTty();
    const w = viewOfTask(out2, ['t']);
    w.absorb(ev({ type: 'instance_queued', task: 't', key: 't', attempt: 1 }));
    out2.columns = 80;
    w.start();
    const m = out2.writes.length;
    w.handle(ev({ type: 'instance_skipped', task: 't', key: 't', attempt: 1, reason: 'x' }));
    w.handle(
      ev({
        type: 'run_end',
        status: 'failed',
        durationMs: 1,
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 },
      }),
    );
    out2.rows = 4; // a smaller terminal: the frame shrinks to fit, old lines are cleared
    w.stop();
    expect(out2.writes[m]).toContain('\x1b[0J');
  });

  it('a note is printed above the frame: the frame is cleared, the text written, the frame drawn again below it', () => {
    const out = new FakeTty();
    const v = viewOfTask(out, ['t']);
    v.start();
    const height = v.frame().length;
    const n = out.writes.length;
    v.note('orchestrate: interrupting');
    const written = out.writes.slice(n).join('');
    expect(written.startsWith(`\x1b[${height}A\x1b[1G\x1b[0J`)).toBe(true);
    const after = written.slice(written.indexOf('orchestrate: interrupting\n') + 'orchestrate: interrupting\n'.length);
    expect(after.split(CLEAR_LINE)).toHaveLength(height + 1); // every frame line written again
    v.stop();
  });
});
