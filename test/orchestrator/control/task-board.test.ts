// The coordinator's task board alone: claims, ownership, blockers, seeds, and that the events it
// records rebuild the same board through the run fold (what resume and every view read).
import { describe, expect, it } from 'vitest';
import { TaskBoard } from '../../../src/orchestrator/control/task-board.js';
import { applyEvent, createRunState } from '../../../src/run/run-fold.js';
import { RunEventSchema, type RunEventInput } from '../../../src/run/run-events.js';

function boardWithLog(restored?: Map<string, never>) {
  const log: RunEventInput[] = [];
  const board = new TaskBoard({ record: (e) => log.push(e), ...(restored ? { restored } : {}) });
  return { board, log };
}

function fold(log: RunEventInput[]) {
  const state = createRunState();
  for (const [i, e] of log.entries()) applyEvent(state, RunEventSchema.parse({ v: 1, ts: i + 1, runId: 'r', ...e }));
  return state;
}

describe('TaskBoard', () => {
  it('gives a task to the first agent that takes it; the second gets an error naming the owner', () => {
    const { board } = boardWithLog();
    expect(board.handle('lead', { op: 'create', subject: 'Write the parser' })).toMatchObject({
      ok: true,
      items: [{ id: '1', status: 'pending', createdBy: 'lead' }],
    });
    expect(board.handle('a', { op: 'update', id: '1', status: 'in_progress' })).toMatchObject({
      ok: true,
      items: [{ owner: 'a', status: 'in_progress' }],
    });
    const second = board.handle('b', { op: 'update', id: '1', status: 'in_progress' });
    expect(second.ok).toBe(false);
    expect(!second.ok && second.error).toMatch(/owned by a \(in progress\)/);
    // Nor may b take it by naming itself owner, or complete it.
    expect(board.handle('b', { op: 'update', id: '1', owner: 'b' }).ok).toBe(false);
    expect(board.handle('b', { op: 'update', id: '1', status: 'completed' }).ok).toBe(false);
    // b may still leave a note.
    expect(board.handle('b', { op: 'update', id: '1', notes: 'I can help with the lexer' }).ok).toBe(true);
    expect(board.handle('a', { op: 'update', id: '1', status: 'completed' })).toMatchObject({
      ok: true,
      items: [{ owner: 'a', status: 'completed', notes: [{ by: 'b', text: 'I can help with the lexer' }] }],
    });
  });

  it('a blocked task cannot be taken until every blocker is completed', () => {
    const { board } = boardWithLog();
    board.handle('lead', { op: 'create', subject: 'one' });
    board.handle('lead', { op: 'create', subject: 'two' });
    board.handle('lead', { op: 'create', subject: 'three', blocked_by: ['1', '2'] });
    const early = board.handle('a', { op: 'update', id: '3', status: 'in_progress' });
    expect(!early.ok && early.error).toMatch(/blocked by #1 \(pending\), #2 \(pending\)/);
    expect(board.handle('a', { op: 'update', id: '3', owner: 'a' }).ok).toBe(false);
    board.handle('a', { op: 'update', id: '1', status: 'completed' });
    board.handle('b', { op: 'update', id: '2', status: 'in_progress' });
    expect(board.handle('a', { op: 'update', id: '3', status: 'in_progress' }).ok).toBe(false);
    board.handle('b', { op: 'update', id: '2', status: 'completed' });
    expect(board.handle('a', { op: 'update', id: '3', status: 'in_progress' })).toMatchObject({ ok: true });
    expect(board.handle('lead', { op: 'create', subject: 'x', blocked_by: ['9'] })).toEqual({
      ok: false,
      error: 'blocked_by names no task: #9',
    });
  });

  it('lists with filters, gets one, and says which ids exist when one does not', () => {
    const { board } = boardWithLog();
    board.seed([
      { id: '1', subject: 'seeded', blockedBy: [] },
      { id: 'docs', subject: 'write docs', owner: 'w', blockedBy: ['1'] },
    ]);
    board.handle('w', { op: 'create', subject: 'mine' });
    board.handle('w', { op: 'update', id: '2', status: 'in_progress' });
    const list = (req: { status?: 'pending' | 'in_progress' | 'completed'; owner?: string }) => {
      const r = board.handle('x', { op: 'list', ...req });
      return r.ok ? r.items.map((i) => i.id) : r.error;
    };
    expect(list({})).toEqual(['1', 'docs', '2']);
    expect(list({ status: 'pending' })).toEqual(['1', 'docs']);
    expect(list({ owner: 'w' })).toEqual(['docs', '2']);
    expect(list({ owner: '' })).toEqual(['1']);
    expect(board.handle('x', { op: 'get', id: 'docs' })).toMatchObject({
      ok: true,
      items: [{ createdBy: 'recipe', openBlockers: ['1'] }],
    });
    expect(board.handle('x', { op: 'get', id: '7' })).toEqual({
      ok: false,
      error: 'no task #7 on the board (its tasks are #1, #docs, #2)',
    });
  });

  it('its events fold into the same board, and a board restored from the fold goes on from there', () => {
    const { board, log } = boardWithLog();
    board.seed([{ id: '1', subject: 'seeded', blockedBy: [] }]);
    board.handle('lead', { op: 'create', subject: 'two', blocked_by: ['1'] });
    board.handle('a', { op: 'update', id: '1', status: 'in_progress', notes: 'on it' });
    expect(log.map((e) => (e.type === 'board_task' ? `${e.change}:${e.item.id}:${e.by}` : e.type))).toEqual([
      'created:1:recipe',
      'created:2:lead',
      'claimed:1:a',
    ]);
    const state = fold(log);
    expect([...state.board.values()]).toEqual([...board.board.values()]);
    // Resume: the restored board knows a owns #1, and numbers new tasks after the old ones.
    const again = new TaskBoard({ record: () => {}, restored: state.board });
    expect(again.handle('b', { op: 'update', id: '1', status: 'in_progress' }).ok).toBe(false);
    expect(again.handle('a', { op: 'update', id: '1', status: 'completed' }).ok).toBe(true);
    expect(again.handle('b', { op: 'create', subject: 'three' })).toMatchObject({ ok: true, items: [{ id: '3' }] });
    expect(again.forEachItems(() => false).map((i) => i.id)).toEqual(['2', '3']);
    expect(again.forEachItems((id) => id === '1').map((i) => i.id)).toEqual(['1', '2', '3']);
  });
});

describe('TaskBoard when an agent ends for good', () => {
  it('its tasks in progress go back to pending with a note; finished and merely assigned ones stay', () => {
    const { board, log } = boardWithLog();
    for (const subject of ['a', 'b', 'c', 'd']) board.handle('lead', { op: 'create', subject });
    board.handle('w', { op: 'update', id: '1', status: 'in_progress' });
    board.handle('w', { op: 'update', id: '2', status: 'completed' });
    board.handle('lead', { op: 'update', id: '3', owner: 'w' });
    board.handle('p@worker', { op: 'update', id: '4', status: 'in_progress' });
    board.releaseInstance('w', 'failed (crashed)');
    board.releaseInstance('p', 'failed (timeout)');
    const items = [...fold(log).board.values()];
    expect(items.map((i) => `${i.id}:${i.status}:${i.owner ?? '-'}`)).toEqual([
      '1:pending:-',
      '2:completed:w',
      '3:pending:w',
      '4:pending:-',
    ]);
    expect(items[0]!.notes.at(-1)).toMatchObject({ by: 'orchestrate', text: 'released: w failed (crashed)' });
    expect(items[3]!.notes.at(-1)!.text).toBe('released: p@worker failed (timeout)');
    // Someone else can take it now.
    expect(board.handle('v', { op: 'update', id: '1', status: 'in_progress' }).ok).toBe(true);
  });
});
