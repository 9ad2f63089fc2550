// The run view you can drive, without a terminal: keys go in through press() / the input's data
// events, actions come out through a recording RunControl (the view's caller), frames are read as
// plain lines. The pseudo-terminal tests (run-view-tty.test.ts) drive the real program.
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PlainLog } from '../../src/display/plain-log.js';
import { RunView } from '../../src/display/run-view.js';
import { parseKeys } from '../../src/display/terminal-keys.js';
import { SessionStore } from '../../src/session/session-store.js';
import { displayWidth, wrapToWidth } from '../../src/display/terminal-text.js';
import type { ControlAction, ControlReply, RunControl } from '../../src/run/run-control.js';
import type { RunEvent } from '../../src/run/run-events.js';

class FakeTty {
  writes: string[] = [];
  columns = 80;
  rows = 24;
  write(s: string): boolean {
    this.writes.push(s);
    return true;
  }
}

class FakeKeyboard extends EventEmitter {
  raw: boolean[] = [];
  paused = true;
  isTTY = true;
  setRawMode(on: boolean) {
    this.raw.push(on);
  }
  resume() {
    this.paused = false;
  }
  pause() {
    this.paused = true;
  }
  type(s: string) {
    this.emit('data', s);
  }
}

class RecordingControl implements RunControl {
  sent: ControlAction[] = [];
  async send(action: ControlAction): Promise<ControlReply> {
    this.sent.push(action);
    return action.action === 'retry'
      ? { ok: false, error: 'not in this test' }
      : { ok: true, message: `${action.action} accepted` };
  }
}

let ts = 1_000;
const ev = (e: Record<string, unknown>) => ({ v: 1, runId: 'r1', ts: ts++, ...e }) as RunEvent;

function fanOut(n: number): RunEvent[] {
  const keys = Array.from({ length: n }, (_, i) => `item-${String(i).padStart(3, '0')}`);
  const events = [
    ev({
      type: 'run_start',
      recipe: 'r.yaml',
      name: 'fan',
      recipeHash: 'h',
      inputs: {},
      plan: [{ task: 'apply', keys, needs: [], dynamic: false }],
    }),
  ];
  for (const k of keys) events.push(ev({ type: 'instance_start', task: 'apply', key: k, attempt: 1 }));
  return events;
}

function makeView(opts: { control?: RunControl; quit?: () => void; rows?: number; foreground?: () => boolean } = {}) {
  const out = new FakeTty();
  if (opts.rows) out.rows = opts.rows;
  const keyboard = new FakeKeyboard();
  const runDir = mkdtempSync(join(tmpdir(), 'run-view-'));
  let interrupted = 0;
  const view = new RunView(out, {
    color: false,
    now: () => 5_000,
    restoreOnExit: false,
    frameIntervalMs: 60_000,
    tickIntervalMs: 60_000,
    input: keyboard,
    runDir,
    control: opts.control,
    by: 'view (test)',
    onInterrupt: () => interrupted++,
    ...(opts.quit ? { onQuit: opts.quit } : {}),
    inForeground: opts.foreground ?? (() => true),
  });
  return { out, keyboard, view, runDir, interrupts: () => interrupted };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('run view keys', () => {
  it('parses arrows, page keys, Enter, Esc, Backspace, Ctrl-C and text from raw chunks', () => {
    expect(parseKeys('\x1b[A\x1b[B\x1b[5~\x1b[6~\r\x1b\x7f\x03hé').map((k) => k.ch ?? k.name)).toEqual([
      'up',
      'down',
      'pageup',
      'pagedown',
      'enter',
      'escape',
      'backspace',
      'ctrl-c',
      'h',
      'é',
    ]);
    expect(parseKeys('\x1b[1;5A x').map((k) => k.ch ?? k.name)).toEqual([' ', 'x']); // unknown CSI swallowed
  });

  it('wraps plain text to a width at spaces, never wider', () => {
    const lines = wrapToWidth('the quick brown fox jumps over the lazy dog, twice over and again', 20);
    expect(lines.every((l) => displayWidth(l) <= 20)).toBe(true);
    expect(lines.join(' ').replace(/\s+/g, ' ')).toBe(
      'the quick brown fox jumps over the lazy dog, twice over and again',
    );
  });
});

describe('run view (no terminal)', () => {
  it('selects with the arrows; the list of 100 scrolls to keep the selection on an 80x24 screen', () => {
    const { view, keyboard } = makeView();
    for (const e of fanOut(100)) view.absorb(e);
    view.start();
    let frame = view.frame();
    expect(frame.length).toBeLessThanOrEqual(23);
    expect(frame[3]).toMatch(/^> ▸ apply\/item-000/);
    expect(frame[frame.length - 1]).toMatch(/1\/100$/);
    for (let i = 0; i < 30; i++) keyboard.type('\x1b[B');
    frame = view.frame();
    const selected = frame.filter((l) => l.startsWith('> '));
    expect(selected).toHaveLength(1);
    expect(selected[0]).toMatch(/item-030/);
    expect(frame.some((l) => /item-000/.test(l))).toBe(false); // scrolled past the top
    expect(frame[frame.length - 1]).toMatch(/31\/100$/);
    keyboard.type('\x1b[F'); // End
    frame = view.frame();
    expect(frame.filter((l) => l.startsWith('> '))[0]).toMatch(/item-099/);
    for (const l of frame) expect(displayWidth(l)).toBeLessThanOrEqual(79);
    expect(frame.length).toBeLessThanOrEqual(23);
    view.stop();
  });

  it('s opens a prompt; Enter sends the steer with who sent it; c cancels; r on a running one says why not', async () => {
    const control = new RecordingControl();
    const { view, keyboard } = makeView({ control });
    for (const e of fanOut(3)) view.absorb(e);
    view.start();
    keyboard.type('\x1b[B'); // item-001
    keyboard.type('s');
    keyboard.type('focus on tests');
    keyboard.type('\x7f\x7f\x7f\x7f\x7f');
    keyboard.type('docs');
    expect(view.frame().at(-1)).toBe('steer apply/item-001> focus on docs_');
    keyboard.type('\r');
    await flush();
    expect(control.sent).toEqual([{ action: 'steer', instance: 'item-001', text: 'focus on docs', by: 'view (test)' }]);
    expect(view.frame().at(-1)).toMatch(/^steer apply\/item-001: steer accepted/);
    keyboard.type('c');
    await flush();
    expect(control.sent[1]).toEqual({ action: 'cancel', instance: 'item-001', by: 'view (test)' });
    keyboard.type('r');
    expect(view.frame().at(-1)).toMatch(/^retry: only a failed or cancelled instance; apply\/item-001 is running/);
    expect(control.sent).toHaveLength(2);
    view.stop();
  });

  it('a / x answer the approval gate of the selected waiting instance (watch says so); elsewhere they say why not', async () => {
    const control = new RecordingControl();
    const { view, keyboard } = makeView({ control, quit: () => undefined });
    view.absorb(
      ev({
        type: 'run_start',
        recipe: 'r.yaml',
        name: 'gate',
        recipeHash: 'h',
        inputs: {},
        plan: [{ task: 'publish', keys: ['publish'], needs: [], dynamic: false }],
      }),
    );
    view.absorb(
      ev({ type: 'approval_requested', task: 'publish', key: 'publish', prompt: 'Ship?', onTimeout: 'reject' }),
    );
    view.start();
    expect(view.frame().join('\n')).toContain('0 running · 0 queued · 1 awaiting');
    expect(view.frame().join('\n')).toContain('waiting for ap');
    expect(view.frame().at(-1)).toContain('a approve · x reject');
    keyboard.type('a');
    await flush();
    expect(control.sent).toEqual([
      { action: 'approve', task: 'publish', instance: 'publish', by: 'view (test)', via: 'watch' },
    ]);
    expect(view.frame().at(-1)).toMatch(/^approve publish: approve accepted/);
    view.absorb(
      ev({ type: 'approval_given', task: 'publish', key: 'publish', decision: 'approved', by: 'ana', via: 'cli' }),
    );
    keyboard.type('x');
    expect(view.frame().at(-1)).toBe('reject: publish is not waiting at an approval gate');
    expect(control.sent).toHaveLength(1);
    view.stop();
  });

  it('a waiting publish gate shows its prompt and preview; a / x answer it whatever is selected', async () => {
    const control = new RecordingControl();
    const { view, keyboard } = makeView({ control });
    view.absorb(
      ev({
        type: 'run_start',
        recipe: 'r.yaml',
        name: 'campaign',
        recipeHash: 'h',
        inputs: {},
        plan: [{ task: 'change', keys: ['change'], needs: [], dynamic: false }],
      }),
    );
    view.absorb(ev({ type: 'instance_start', task: 'change', key: 'change', attempt: 1 }));
    view.absorb(
      ev({
        type: 'approval_requested',
        gate: 'publish',
        task: 'change',
        key: 'change',
        prompt: 'Publish? — 2 changesets in repo-a, repo-b: 2 files changed',
        onTimeout: 'reject',
      }),
    );
    view.start();
    const frame = view.frame().join('\n');
    expect(frame).toContain('publish gate of change: Publish? — 2 changesets in repo-a, repo-b');
    expect(frame).toContain('1 awaiting');
    keyboard.type('x');
    await flush();
    expect(control.sent).toEqual([{ action: 'reject', task: '*', gate: 'publish', by: 'view (test)', via: 'view' }]);
    view.stop();
  });

  it('a cancelled instance shows as cancelled, its control events in its conversation, and r retries it', async () => {
    const control = new RecordingControl();
    const { view, keyboard, runDir } = makeView({ control });
    for (const e of fanOut(2)) view.absorb(e);
    view.absorb(
      ev({
        type: 'control',
        action: 'steer',
        instance: 'item-000',
        by: 'watch (pid 7, ana)',
        text: 'stop early',
        ok: true,
      }),
    );
    view.absorb(ev({ type: 'control', action: 'cancel', instance: 'item-000', by: 'watch (pid 7, ana)', ok: true }));
    view.absorb(
      ev({
        type: 'instance_failed',
        task: 'apply',
        key: 'item-000',
        attempt: 1,
        failure: 'cancelled',
        error: 'cancelled by watch (pid 7, ana)',
        final: true,
        durationMs: 10,
      }),
    );
    mkdirSync(join(runDir, 'sessions'));
    writeFileSync(join(runDir, 'sessions', 'item-000.jsonl'), '');
    view.start();
    const list = view.frame();
    expect(list[1]).toMatch(/1 cancelled/);
    expect(list.find((l) => l.includes('item-000'))).toMatch(/⊘ apply\/item-000\s+cancelled/);
    keyboard.type('\r');
    const conv = view.frame();
    expect(conv[0]).toMatch(/^apply\/item-000 · cancelled/);
    expect(conv.join('\n')).toMatch(/⚑ .* steer: "stop early" by watch \(pid 7, ana\): ok/);
    expect(conv.join('\n')).toMatch(/⚑ .* cancel by watch \(pid 7, ana\): ok/);
    expect(conv.at(-1)).toMatch(/Esc back/);
    keyboard.type('r');
    await flush();
    expect(control.sent).toEqual([{ action: 'retry', instance: 'item-000', by: 'view (test)' }]);
    expect(view.frame().at(-1)).toMatch(/retry apply\/item-000 refused: not in this test/);
    keyboard.type('\x1b');
    expect(view.frame()[3]).toMatch(/^> ⊘ apply\/item-000/);
    view.stop();
  });

  it("without a control every action key says read-only; q quits only when the caller allows it; Ctrl-C is the caller's", () => {
    let quits = 0;
    const { view, keyboard, interrupts } = makeView({ quit: () => quits++ });
    for (const e of fanOut(2)) view.absorb(e);
    view.start();
    expect(view.frame().at(-1)).toMatch(/^read-only: no coordinator/);
    keyboard.type('c');
    expect(view.frame().at(-1)).toMatch(/^read-only: /);
    keyboard.type('q');
    keyboard.type('\x03');
    expect(quits).toBe(1);
    expect(interrupts()).toBe(1);
    view.stop();
  });

  it('takes the keyboard in raw mode while live and gives it back on stop; the final frame is the plain live frame', () => {
    const { view, keyboard } = makeView();
    for (const e of fanOut(2)) view.absorb(e);
    view.start();
    expect(keyboard.raw).toEqual([true]);
    expect(keyboard.paused).toBe(false);
    view.stop();
    expect(keyboard.raw).toEqual([true, false]);
    expect(keyboard.paused).toBe(true);
    expect(keyboard.listenerCount('data')).toBe(0);
    expect(view.frame().some((l) => l.startsWith('> '))).toBe(false);
  });

  it('a background job leaves the keyboard alone until it is continued in the foreground', () => {
    let foreground = false;
    const { view, keyboard } = makeView({ foreground: () => foreground });
    for (const e of fanOut(2)) view.absorb(e);
    view.start();
    expect(keyboard.raw).toEqual([]);
    expect(keyboard.listenerCount('data')).toBe(0);
    process.emit('SIGCONT'); // `bg`: still in the background
    expect(keyboard.raw).toEqual([]);
    foreground = true;
    process.emit('SIGCONT'); // `fg` of a stopped job (a running one is noticed by polling)
    expect(keyboard.raw).toEqual([true]);
    keyboard.type('\x1b[B');
    expect(view.frame().find((l) => l.startsWith('> '))).toMatch(/item-001/);
    view.stop();
    expect(process.listenerCount('SIGCONT')).toBe(0);
  });
});

/** Answers `peek` with `writing` (the reply being written); records which instances were peeked. */
class PeekingControl implements RunControl {
  writing = '';
  peeks: string[] = [];
  async send(action: ControlAction): Promise<ControlReply> {
    if (action.action !== 'peek') return { ok: true, message: `${action.action} accepted` };
    this.peeks.push(action.instance);
    return { ok: true, message: this.writing };
  }
}

/** Bounded wait for a condition the view's own timers bring about. */
// A hang bound only (a loaded machine is slow).
async function until(what: string, probe: () => boolean, limitMs = 20_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the reply being written (peek)', () => {
  it('an open conversation of a running instance shows the text being written under the last message, until the session file has the message', async () => {
    const control = new PeekingControl();
    const { view, keyboard, runDir } = makeView({ control });
    for (const e of fanOut(2)) view.absorb(e);
    mkdirSync(join(runDir, 'sessions'));
    const store = SessionStore.create(join(runDir, 'sessions', 'item-000.jsonl'));
    store.appendMessage({ role: 'user', content: 'write a poem', timestamp: 1 });
    store.flush();
    view.start();
    // The list peeks at nothing.
    await flush();
    expect(control.peeks).toEqual([]);
    control.writing = 'Roses are red,\nviolets';
    keyboard.type('\r');
    await until('the partial text', () => view.frame().includes('  violets'));
    let body = view.frame().slice(1, -1);
    expect(body.slice(body.indexOf('assistant (writing…)'))).toEqual([
      'assistant (writing…)',
      '  Roses are red,',
      '  violets',
    ]);
    expect(body.findIndex((l) => l.includes('write a poem'))).toBeLessThan(body.indexOf('assistant (writing…)'));
    expect(control.peeks[0]).toBe('item-000');
    // It grows with the next peeks.
    control.writing = 'Roses are red,\nviolets are blue';
    await until('the longer partial text', () => view.frame().includes('  violets are blue'));
    // The finished reply reaches the session file: it replaces the text being written at once.
    store.appendMessage({
      role: 'assistant',
      content: [{ type: 'text', text: 'Roses are red,\nviolets are blue.' }],
      api: 'scripted',
      provider: 'scripted',
      model: 'scripted',
      usage: {
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: 'stop',
      timestamp: 2,
    });
    store.flush();
    body = view.frame().slice(1, -1);
    expect(body).toContain('  violets are blue.');
    expect(body).not.toContain('assistant (writing…)');
    control.writing = '';
    // Back in the list, nothing is peeked any more; a finished instance is never peeked.
    keyboard.type('\x1b');
    const count = control.peeks.length;
    view.absorb(ev({ type: 'instance_done', task: 'apply', key: 'item-001', attempt: 1, durationMs: 5 }));
    keyboard.type('\x1b[B');
    keyboard.type('\r');
    await flush(); // opening a conversation peeks at once when it peeks at all
    expect(control.peeks.length).toBe(count);
    view.stop();
    store.close();
  });
});

describe('control events in the plain log (no terminal: run and watch)', () => {
  it('one line per action, naming who did it and what the coordinator said', () => {
    const lines: string[] = [];
    const log = new PlainLog({
      write: (t: string) => {
        lines.push(t);
        return true;
      },
    });
    for (const e of fanOut(1)) log.absorb(e);
    log.handle(
      ev({
        type: 'control',
        action: 'steer',
        instance: 'item-000',
        by: 'watch (pid 7, ana)',
        text: 'look at\nthe tests',
        ok: true,
        message: 'delivered',
      }),
    );
    log.handle(
      ev({
        type: 'control',
        action: 'retry',
        instance: 'item-000',
        by: 'view (ana)',
        ok: false,
        message: 'apply/item-000 is running',
      }),
    );
    expect(lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''))).toEqual([
      'control: steer item-000 "look at the tests" by watch (pid 7, ana): ok, delivered\n',
      'control: retry item-000 by view (ana): refused, apply/item-000 is running\n',
    ]);
  });
});
