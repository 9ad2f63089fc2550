// The interactive app (ink-testing-library, real AgentSession on the scripted provider, real
// session files): a reopened session whose last turn a kill cut off is finished first, with a
// line saying so; Esc while /tree writes its branch summary cancels the rewind. Every step waits
// on the rendered frame (bounded), never on a fixed sleep.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../../src/agent/types.js';
import type { Context } from '../../../src/ai/types.js';
import type { ScriptedScript, ScriptedTurn } from '../../../src/ai/scripted.js';
import { RESUMED_ITEMS_PRINTED } from '../../../src/display/interactive/controller.js';
import { InteractiveController } from '../../../src/display/interactive/run-interactive.js';
import { helpText } from '../../../src/display/interactive/slash-commands.js';
import { createAgentSession, type AgentSession, type CreateAgentSessionOptions } from '../../../src/runtime/index.js';
import { messageText } from '../../helpers/session-file.js';
import { mountApp } from './helpers/app-driver.js';
import { QUIET_SESSION } from './helpers/quiet-session.js';

const KEYS = { enter: '\r', esc: '\x1b', up: '\x1b[A' };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workDir(): string {
  const cwd = mkdtempSync(join(tmpdir(), 'interactive-cut-off-'));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  writeFileSync(join(cwd, 'notes.txt'), 'note line 1\nnote line 2\n');
  return cwd;
}

function open(
  cwd: string,
  sessionFile: string,
  script: ScriptedTurn[] | ScriptedScript,
  extra: Partial<CreateAgentSessionOptions> = {},
): Promise<AgentSession> {
  return createAgentSession({
    cwd,
    sessionFile,
    provider: 'scripted',
    script,
    tools: ['read'],
    ...QUIET_SESSION,
    ...extra,
  });
}

/** The app around `session`, started as runInteractiveMode starts it. */
function mount(session: AgentSession, initialPrompt?: string) {
  const controller = new InteractiveController(session, { onExit: () => undefined });
  const driver = mountApp(controller, session, cleanups);
  const started = controller.start(initialPrompt);
  /** The frame with wrapped lines joined (notices wrap at the frame's width). */
  const flat = () => driver.frame().replace(/\s+/g, ' ');
  return { ...driver, controller, flat, started };
}

const lines = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
const entryTypes = (file: string): string[] => lines(file).map((l) => (JSON.parse(l) as { type: string }).type);
const roleAndText = (m: AgentMessage): string => `${m.role}: ${messageText(m)}`;

describe('interactive mode on a session whose last turn a kill cut off', () => {
  it('shows that the last turn was interrupted, finishes it (the read-only call runs again), then takes prompts', async () => {
    const cwd = workDir();
    const file = join(cwd, 'chat.jsonl');
    const turns: ScriptedTurn[] = [
      { tools: [{ name: 'read', id: 'call-1', args: { path: 'notes.txt' } }] },
      { text: 'The notes have two lines.' },
      { text: 'Next answer.' },
    ];
    // The real session code writes the whole turn; cutting the file after the reply with the call
    // leaves what a kill -9 while the tool ran leaves (the reply is written before the tool runs).
    const first = await open(cwd, file, turns);
    await first.prompt('read the notes');
    await first.dispose();
    const all = lines(file);
    const callAt = all.findIndex((l) => l.includes('"toolCall"'));
    expect(callAt).toBeGreaterThan(0);
    writeFileSync(file, `${all.slice(0, callAt + 1).join('\n')}\n`);

    const session = await open(cwd, file, turns, { continue: true });
    expect(session.messages.map(roleAndText)).toEqual(['user: read the notes', 'assistant: call:read']);
    const t = mount(session);
    await t.until((f) => f.includes('The notes have two lines.') && t.idle(f), 'the finished turn');
    await t.started;
    expect(t.flat()).toContain(
      'The last turn of this session was interrupted (its read call has no result): finishing it now. Esc stops.',
    );
    // The cut-off call is printed once, when it has its result (not first as waiting).
    expect(t.frame().match(/read notes\.txt/g)).toEqual(['read notes.txt']);
    expect(t.frame()).toMatch(/✓ read notes\.txt\n {2}⎿ 2 lines: note line 1/);
    expect(t.frame()).not.toContain('waiting…');
    expect(session.messages.map(roleAndText)).toEqual([
      'user: read the notes',
      'assistant: call:read',
      'toolResult: note line 1\nnote line 2',
      'assistant: The notes have two lines.',
    ]);

    await t.type('and now?');
    await t.key(KEYS.enter);
    await t.until((f) => f.includes('Next answer.') && t.idle(f), 'the reply to the next prompt');
    expect(session.messages.map(roleAndText).slice(4)).toEqual(['user: and now?', 'assistant: Next answer.']);
  });

  it('an initial prompt is sent after the cut-off turn is finished, as its own turn', async () => {
    const cwd = workDir();
    const file = join(cwd, 'chat.jsonl');
    const turns: ScriptedTurn[] = [{ text: 'Answer one.' }, { text: 'Answer two.' }, { text: 'Answer three.' }];
    const first = await open(cwd, file, turns);
    await first.prompt('one');
    await first.prompt('two');
    await first.dispose();
    // A kill while "two" was being answered: the file ends with the prompt.
    writeFileSync(file, `${lines(file).slice(0, -1).join('\n')}\n`);

    const session = await open(cwd, file, turns, { continue: true });
    const t = mount(session, 'three');
    await t.until((f) => f.includes('Answer three.') && t.idle(f), 'the answer to the initial prompt');
    expect(t.flat()).toContain(
      'The last turn of this session was interrupted (the last prompt has no reply): finishing it now.',
    );
    expect(session.messages.map(roleAndText)).toEqual([
      'user: one',
      'assistant: Answer one.',
      'user: two',
      'assistant: Answer two.',
      'user: three',
      'assistant: Answer three.',
    ]);
  });

  it('a session that ended normally opens without a notice and makes no model call', async () => {
    const cwd = workDir();
    const file = join(cwd, 'chat.jsonl');
    let calls = 0;
    const turns: ScriptedTurn[] = [
      { text: 'Answer one.' },
      () => {
        calls++;
        return { text: 'unexpected' };
      },
    ];
    const first = await open(cwd, file, turns);
    await first.prompt('one');
    await first.dispose();
    const session = await open(cwd, file, turns, { continue: true });
    const t = mount(session);
    await t.started;
    await t.until((f) => f.includes('Answer one.') && t.idle(f), 'the reopened conversation');
    expect(t.frame()).not.toContain('interrupted');
    expect(t.frame().match(/Answer one\./g)).toHaveLength(1);
    expect(calls).toBe(0);
  });

  it('a long reopened session prints its last items once and says how many earlier ones it left out', async () => {
    const cwd = workDir();
    const file = join(cwd, 'long.jsonl');
    const count = RESUMED_ITEMS_PRINTED / 2 + 5;
    const turns: ScriptedTurn[] = Array.from({ length: count + 1 }, (_, i) => ({ text: `Answer ${i + 1}.` }));
    const first = await open(cwd, file, turns);
    for (let i = 1; i <= count; i++) await first.prompt(`question ${i}`);
    await first.dispose();
    const session = await open(cwd, file, turns, { continue: true });
    const t = mount(session);
    await t.started;
    await t.until((f) => f.includes(`Answer ${count}.`) && t.idle(f), 'the reopened conversation');
    // Two items per turn: the first five turns are left out, the rest printed once each, in order.
    expect(t.frame()).toMatch(
      /^… 10 earlier items of this session not shown \(\/tree lists them\)\n\n› question 6\n\nAnswer 6\.\n/m,
    );
    expect(t.frame()).not.toMatch(/Answer 5\./);
    for (const n of [6, 30, count]) expect(t.frame().match(new RegExp(`Answer ${n}\\.`, 'g'))).toHaveLength(1);
  });
});

describe('Esc while /tree writes its branch summary', () => {
  it('cancels the rewind: the session is unchanged; /tree again rewinds with the summary', async () => {
    const cwd = workDir();
    const file = join(cwd, 'tree.jsonl');
    // Branch summaries asked of the (scripted) model: the first is written slowly enough to stay
    // in flight until Esc, the second at once.
    let summaryCalls = 0;
    const script: ScriptedScript = {
      turns: [{ text: 'Answer one.' }, { text: 'Answer two.' }],
      conversations: [
        {
          match: /^<conversation>/,
          turns: [
            (_c: Context) =>
              summaryCalls++ === 0
                ? { text: 'A slow summary that never finishes.', chunkDelayMs: 600_000 }
                : { text: 'The branch tried "two".' },
          ],
        },
      ],
    };
    const session = await open(cwd, file, script, { summaries: 'model' });
    const t = mount(session);
    await t.started;
    for (const [p, a] of [
      ['one', 'Answer one.'],
      ['two', 'Answer two.'],
    ] as const) {
      await t.type(p);
      await t.key(KEYS.enter);
      await t.until((f) => f.includes(a) && t.idle(f), a);
    }
    const leafBefore = session.store.leafId;
    const fileBefore = readFileSync(file, 'utf8');

    const pickTwo = async () => {
      await t.type('/tree');
      await t.key(KEYS.enter);
      await t.until((f) => f.includes('Rewind to'), 'the tree picker');
      for (let i = 0; i < 10 && !/^>.*user: two$/m.test(t.frame()); i++) {
        const before = t.frame();
        await t.key(KEYS.up);
        await t.until((f) => f !== before, 'the selection to move');
      }
      await t.until((f) => /^>.*user: two$/m.test(f), '"user: two" selected');
      await t.key(KEYS.enter);
    };
    await pickTwo();
    await t.until((f) => f.includes('summarizing branch · Esc cancels'), 'the summary in flight');
    await t.key(KEYS.esc);
    await t.until((f) => f.includes('Rewind cancelled') && t.idle(f), 'the cancelled rewind');
    expect(t.flat()).toContain(
      'Rewind cancelled while the branch summary was being written: the session is unchanged. /tree starts over.',
    );
    expect(t.frame()).toContain('Answer two.');
    expect(session.store.leafId).toBe(leafBefore);
    expect(readFileSync(file, 'utf8')).toBe(fileBefore);
    expect(entryTypes(file)).not.toContain('branch_summary');
    expect(summaryCalls).toBe(1);

    // Not cancelled, the same rewind goes through with its summary.
    await pickTwo();
    await t.until((f) => f.includes('Rewound before that prompt') && t.idle(f), 'the rewind');
    // The scrollback keeps the branch left; below the separator the conversation goes on without it.
    const below = t.frame().split('── rewound to before user: two ──');
    expect(below).toHaveLength(2);
    expect(below[0]).toContain('Answer two.');
    expect(below[1]).toContain('The branch tried "two".');
    expect(below[1]).not.toContain('Answer two.');
    expect(entryTypes(file)).toContain('branch_summary');
  });

  it('/help says what Esc does during a /tree rewind', () => {
    expect(helpText()).toMatch(/^ {2}Esc +abort the run or \/compact; cancel a \/tree rewind$/m);
    for (const line of helpText().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});
