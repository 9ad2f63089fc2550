// The run-wide task board as the run log records it: each `board_task` event carries the whole
// item after one change (created, claimed, updated, completed), so applying an event is a plain
// replace and the board after a crash is exactly the board of the last line written. The live
// coordinator (orchestrator/control/task-board.ts), resume and every view apply the same events through
// applyBoardEvent: one truth, one way it changes.
import { z } from 'zod';

export const BOARD_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type BoardStatus = (typeof BOARD_STATUSES)[number];

export const BoardNoteSchema = z.object({ ts: z.number(), by: z.string(), text: z.string() });

export const BoardItemSchema = z.object({
  id: z.string(),
  subject: z.string(),
  description: z.string().optional(),
  status: z.enum(BOARD_STATUSES),
  /** The agent (instance id) working on it, or the one it is assigned to. */
  owner: z.string().optional(),
  /** Board items that must be completed before this one can be taken. */
  blockedBy: z.array(z.string()),
  notes: z.array(BoardNoteSchema),
  /** Who created it: an agent's instance id, or `recipe` for a `board:` seed. */
  createdBy: z.string(),
});
export type BoardItem = z.infer<typeof BoardItemSchema>;

/** What one board_task event says happened (for the log and the views; the item says the rest). */
export const BOARD_CHANGES = ['created', 'claimed', 'released', 'updated', 'completed'] as const;
export type BoardChange = (typeof BOARD_CHANGES)[number];

/** The board: items by id, in the order they were created. */
export type Board = Map<string, BoardItem>;

/** Applies one board_task event: the item it carries replaces the one of the same id. */
export function applyBoardEvent(board: Board, e: { item: BoardItem }): void {
  board.set(e.item.id, structuredClone(e.item));
}

/** Blockers of `item` that are not completed yet (unknown ids count as open: a typo must not unblock). */
export function openBlockers(board: Board, item: BoardItem): string[] {
  return item.blockedBy.filter((id) => board.get(id)?.status !== 'completed');
}

/** Items not completed, in creation order. */
export function openBoardItems(board: Board): BoardItem[] {
  return [...board.values()].filter((i) => i.status !== 'completed');
}

/**
 * A board item as a recipe sees it (`for_each: board` items, `${{ item.subject }}`): the
 * recipe's snake_case names, and only what a prompt needs.
 */
export function boardItemForRecipe(item: BoardItem): Record<string, unknown> {
  return {
    id: item.id,
    subject: item.subject,
    ...(item.description !== undefined ? { description: item.description } : {}),
    status: item.status,
    ...(item.owner !== undefined ? { owner: item.owner } : {}),
    blocked_by: [...item.blockedBy],
  };
}
