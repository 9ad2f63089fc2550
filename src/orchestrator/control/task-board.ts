// The run-wide task board, kept by the coordinator: the one truth agents share through the
// board tools (worker/board-tools.ts -> a `board` message on their port -> AgentLaunch -> here).
// Every change is recorded as a `board_task` event and applied with the run fold's own
// applyBoardEvent, so the log, resume after a crash and every view see the same board.
//
// Claims are atomic because the coordinator handles one port message at a time: of two agents
// racing for an item, the first message taken sets the owner and the second finds it owned and
// gets an error naming the owner. An item blocked by others cannot be taken (owner or
// in_progress) until every blocker is completed.
import { BOARD_STATUSES, type Board, type BoardChange, type BoardItem, openBlockers } from '../../run/board-record.js';
import { applyBoardEvent, boardItemForRecipe } from '../../run/board-record.js';
import type { RunEventInput } from '../../run/run-events.js';
import { instanceOfKey } from '../../run/instance-record.js';
import type { BoardSeed } from '../../recipe/index.js';
import { instanceId, itemKey } from '../../recipe/instance-key.js';
import type { BoardRequest, BoardAnswer } from '../protocol.js';

export interface TaskBoardOptions {
  /** Writes an event to run.jsonl (the coordinator's record). */
  record(e: RunEventInput): void;
  /** The board as the run's log left it (resume); absent for a new run. */
  restored?: Board;
}

type Fail = { ok: false; error: string };
const fail = (error: string): Fail => ({ ok: false, error });

export class TaskBoard {
  private readonly items: Board = new Map();
  /**
   * Kept as items change, so neither asks every item: the number the next created item takes (it
   * was the highest number on the board plus one, found by a scan per create) and, per instance,
   * the items its agents have in progress (an instance's end scanned the whole board): with N
   * items both made a run O(N^2).
   */
  private nextNumber = 1;
  private readonly inProgress = new Map<string, Set<string>>();

  constructor(private readonly opts: TaskBoardOptions) {
    for (const [, item] of opts.restored ?? []) this.put(structuredClone(item));
  }

  /** Stores an item and keeps the next number and the in-progress index current. */
  private put(item: BoardItem): void {
    const before = this.items.get(item.id);
    if (before?.status === 'in_progress' && before.owner !== undefined)
      this.inProgress.get(instanceOfKey(before.owner))?.delete(item.id);
    applyBoardEvent(this.items, { item });
    if (/^\d+$/.test(item.id)) this.nextNumber = Math.max(this.nextNumber, Number(item.id) + 1);
    if (item.status === 'in_progress' && item.owner !== undefined) {
      const owner = instanceOfKey(item.owner);
      const ids = this.inProgress.get(owner) ?? new Set<string>();
      ids.add(item.id);
      this.inProgress.set(owner, ids);
    }
  }

  /** The board now (read-only use: views and for_each read it). */
  get board(): ReadonlyMap<string, BoardItem> {
    return this.items;
  }

  /** Items not completed, in creation order. */
  openItems(): BoardItem[] {
    return [...this.items.values()].filter((i) => i.status !== 'completed');
  }

  /**
   * The items a `for_each: board` task fans out over when it starts: the open ones, plus those
   * it had already expanded before a resume (`expanded(id)`: an instance of that item exists), so
   * an item completed since keeps its finished instance.
   */
  forEachItems(expanded: (itemId: string) => boolean): Record<string, unknown>[] {
    return [...this.items.values()].filter((i) => i.status !== 'completed' || expanded(i.id)).map(boardItemForRecipe);
  }

  /** For forEachItems: whether task `taskId` already has the instance of board item `itemId` (its key is the item's id). */
  static forEachExpanded(taskId: string, has: (instanceId: string) => boolean): (itemId: string) => boolean {
    return (itemId) => has(instanceId(taskId, itemKey({ id: itemId })));
  }

  /** The recipe's `board:` items, once, when a new run starts (a resume finds them in the log). */
  seed(seeds: readonly BoardSeed[]): void {
    for (const s of seeds) {
      if (this.items.has(s.id)) continue;
      const item: BoardItem = {
        id: s.id,
        subject: s.subject,
        status: 'pending',
        blockedBy: [...s.blockedBy],
        notes: [],
        createdBy: 'recipe',
        ...(s.description !== undefined ? { description: s.description } : {}),
        ...(s.owner !== undefined ? { owner: s.owner } : {}),
      };
      this.commit('created', 'recipe', item);
    }
  }

  /** One agent's board call; `agent` is its instance id (an owner on the board). */
  handle(agent: string, req: BoardRequest): BoardAnswer {
    switch (req.op) {
      case 'create':
        return this.create(agent, req);
      case 'list': {
        let items = [...this.items.values()];
        if (req.status) items = items.filter((i) => i.status === req.status);
        if (req.owner !== undefined) items = items.filter((i) => (i.owner ?? '') === req.owner);
        return { ok: true, items: items.map((i) => this.view(i)) };
      }
      case 'get': {
        const item = this.items.get(req.id);
        return item ? { ok: true, items: [this.view(item)] } : fail(this.unknown(req.id));
      }
      case 'update':
        return this.update(agent, req);
    }
  }

  private create(agent: string, req: Extract<BoardRequest, { op: 'create' }>): BoardAnswer {
    const subject = req.subject.trim();
    if (!subject) return fail('a task needs a subject');
    const blockedBy = [...new Set(req.blocked_by ?? [])];
    const missing = blockedBy.filter((id) => !this.items.has(id));
    if (missing.length) return fail(`blocked_by names no task: ${missing.map((id) => `#${id}`).join(', ')}`);
    // The next number after the highest numbered item (named seeds such as `docs` take none).
    const item: BoardItem = {
      id: String(this.nextNumber),
      subject,
      status: 'pending',
      blockedBy,
      notes: [],
      createdBy: agent,
      ...(req.description ? { description: req.description } : {}),
      ...(req.owner ? { owner: req.owner } : {}),
    };
    this.commit('created', agent, item);
    return { ok: true, items: [this.view(item)] };
  }

  private update(agent: string, req: Extract<BoardRequest, { op: 'update' }>): BoardAnswer {
    const current = this.items.get(req.id);
    if (!current) return fail(this.unknown(req.id));
    if (req.status !== undefined && !BOARD_STATUSES.includes(req.status))
      return fail(`status must be one of ${BOARD_STATUSES.join(', ')}`);
    const next: BoardItem = structuredClone(current);
    const owner = current.owner;
    // Whoever owns an item is the only one who may change its owner or status; an unowned item is anyone's.
    const ownedByOther = owner !== undefined && owner !== agent;
    const changesOwner = req.owner !== undefined && req.owner !== (owner ?? '');
    const changesStatus = req.status !== undefined && req.status !== current.status;
    // Another agent asking for the status it already has (in_progress) is still a claim: refused.
    if (ownedByOther && (changesOwner || req.status !== undefined))
      return fail(
        `task #${current.id} is owned by ${owner}${current.status === 'in_progress' ? ' (in progress)' : ''}; only ${owner} can change its owner or status. Take another task (task_list shows which are free).`,
      );
    if (req.owner !== undefined) {
      if (req.owner === '') delete next.owner;
      else next.owner = req.owner;
    }
    if (req.status !== undefined) next.status = req.status;
    // Taking or completing an unowned task: the caller becomes its owner.
    if (next.status !== 'pending' && next.owner === undefined) next.owner = agent;
    const taking =
      (next.owner !== undefined && next.owner !== owner) || (changesStatus && next.status === 'in_progress');
    if (taking && next.status !== 'completed') {
      const open = openBlockers(this.items, current);
      if (open.length)
        return fail(
          `task #${current.id} is blocked by ${open.map((id) => `#${id} (${this.items.get(id)?.status ?? 'unknown'})`).join(', ')}; it can be taken once those are completed`,
        );
    }
    if (req.notes?.trim()) next.notes.push({ ts: Date.now(), by: agent, text: req.notes.trim() });
    const change: BoardChange =
      next.status === 'completed' && current.status !== 'completed'
        ? 'completed'
        : next.owner !== undefined && next.owner !== owner
          ? 'claimed'
          : owner !== undefined && next.owner === undefined
            ? 'released'
            : 'updated';
    this.commit(change, agent, next);
    return { ok: true, items: [this.view(next)] };
  }

  /**
   * An instance ended for good (failed or cancelled): the tasks it (or a member of its pair) had
   * in progress go back to pending without an owner, with a note saying why, so another agent
   * can take them. A task it finished or was merely assigned stays as it is.
   */
  releaseInstance(instance: string, why: string): void {
    for (const id of [...(this.inProgress.get(instance) ?? [])]) {
      const item = this.items.get(id);
      if (item?.status !== 'in_progress' || item.owner === undefined || instanceOfKey(item.owner) !== instance)
        continue;
      const next = structuredClone(item);
      next.status = 'pending';
      delete next.owner;
      next.notes.push({ ts: Date.now(), by: 'orchestrate', text: `released: ${item.owner} ${why}` });
      this.commit('released', 'orchestrate', next);
    }
  }

  private commit(change: BoardChange, by: string, item: BoardItem): void {
    this.opts.record({ type: 'board_task', change, by, item });
    this.put(item);
  }

  /** What an agent is shown: the item with its open blockers. */
  private view(item: BoardItem): BoardItem & { openBlockers: string[] } {
    return { ...structuredClone(item), openBlockers: openBlockers(this.items, item) };
  }

  private unknown(id: string): string {
    const ids = [...this.items.keys()];
    return ids.length
      ? `no task #${id} on the board (its tasks are ${ids.map((i) => `#${i}`).join(', ')})`
      : `no task #${id}: the board is empty (task_create adds one)`;
  }
}
