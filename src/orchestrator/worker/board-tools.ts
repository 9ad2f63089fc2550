// The task board's tools inside a worker thread: task_create, task_list, task_get, task_update.
// Each call is one `board` message to the coordinator, whose TaskBoard (task-board.ts) holds the
// one board of the run and answers; a refusal (an item owned by another agent, blocked, unknown)
// becomes a tool error the model reads. The names live in recipe/board-tool-names.ts (validation
// and agent-file mapping use them too); they are re-exported here for the worker side.
import { z } from 'zod';
import type { AgentTool, AnyAgentTool } from '../../agent/types.js';
import { BOARD_TOOL_NAMES, type BoardToolName } from '../../recipe/board-tool-names.js';
import type { BoardAnswer, BoardRequest } from '../protocol.js';
import type { WorkerLink } from './worker-link.js';

export { BOARD_TOOL_NAMES, isBoardTool, type BoardToolName } from '../../recipe/board-tool-names.js';

type BoardView = Extract<BoardAnswer, { ok: true }>['items'][number];

const STATUS = z.enum(['pending', 'in_progress', 'completed']);
/** Models write ids as numbers too ("3" and 3 are the same task). */
const ID = z.union([z.string(), z.number()]).transform(String);

const CreateParams = z.object({
  subject: z.string().min(1).describe('A short title in the imperative, e.g. "Write the parser tests"'),
  description: z.string().optional().describe('What needs doing and what counts as done'),
  owner: z.string().optional().describe('The agent (instance id) it is for; leave out to let anyone take it'),
  blocked_by: z.array(ID).optional().describe('Ids of tasks that must be completed before this one can be taken'),
});
const ListParams = z.object({
  status: STATUS.optional().describe('Only tasks with this status'),
  owner: z.string().optional().describe('Only tasks of this owner ("" for unowned ones)'),
});
const GetParams = z.object({ id: ID.describe('The task id, e.g. "3"') });
const UpdateParams = z.object({
  id: ID.describe('The task id, e.g. "3"'),
  status: STATUS.optional().describe(
    'in_progress to take it (you become its owner), completed when done, pending to put it back',
  ),
  owner: z.string().optional().describe('Assign it (an agent id); "" releases it'),
  notes: z.string().optional().describe('A note kept with the task: what was done, found or is left'),
});

function ownerText(v: BoardView, self: string): string {
  if (v.owner === undefined) return 'unowned';
  return v.owner === self ? 'owner: you' : `owner: ${v.owner}`;
}

function line(v: BoardView, self: string): string {
  const blocked =
    v.status !== 'completed' && v.openBlockers.length
      ? `, blocked by ${v.openBlockers.map((b) => `#${b}`).join(', ')}`
      : '';
  return `#${v.id} [${v.status}] ${v.subject} (${ownerText(v, self)}${blocked})`;
}

function details(v: BoardView, self: string): string {
  const out = [line(v, self)];
  if (v.description) out.push(`Description: ${v.description}`);
  if (v.blockedBy.length) out.push(`Blocked by: ${v.blockedBy.map((b) => `#${b}`).join(', ')}`);
  out.push(`Created by: ${v.createdBy}`);
  for (const n of v.notes) out.push(`Note from ${n.by}: ${n.text}`);
  return out.join('\n');
}

/**
 * One board call. Each tool's parameters are named as the request's fields, and the parsed
 * parameters hold only the fields the model gave, so a tool passes them on as they are.
 */
async function call(link: WorkerLink, request: BoardRequest): Promise<BoardView[]> {
  const answer = await link.board(request);
  if (!answer.ok) throw new Error(answer.error);
  return answer.items;
}

const text = (t: string, details: unknown) => ({ content: [{ type: 'text' as const, text: t }], details });

/** Keeps each tool's own parameter type while they are stored side by side. */
const tool = <S extends z.ZodType>(t: AgentTool<S>): AnyAgentTool => t;

/** The board tools an agent was given (`tools` lists which), bound to its link; `self` is its instance id. */
export function createBoardTools(
  link: WorkerLink,
  self: string,
  names: readonly BoardToolName[] = BOARD_TOOL_NAMES,
): AnyAgentTool[] {
  const all: Record<BoardToolName, AnyAgentTool> = {
    task_create: tool({
      name: 'task_create',
      label: 'Create task',
      description:
        "Add a task to the run's shared task board, where every agent of the run can see and take it. Give blocked_by to make it wait for other tasks.",
      promptSnippet: 'add a task to the shared task board',
      parameters: CreateParams,
      argumentAliases: { title: 'subject', blockedBy: 'blocked_by', assignee: 'owner' },
      async execute(_id, p) {
        const [v] = await call(link, { op: 'create', ...p });
        return text(`Created task ${line(v!, self)}.`, v);
      },
    }),
    task_list: tool({
      name: 'task_list',
      label: 'List tasks',
      description:
        "List the tasks on the run's shared task board: id, status, subject, owner and what blocks each. Take a free one with task_update (status in_progress).",
      promptSnippet: 'list the shared task board',
      parameters: ListParams,
      async execute(_id, p) {
        const items = await call(link, { op: 'list', ...p });
        if (items.length === 0)
          return text(p.status || p.owner !== undefined ? 'No task matches.' : 'The board is empty.', items);
        return text(items.map((v) => line(v, self)).join('\n'), items);
      },
    }),
    task_get: tool({
      name: 'task_get',
      label: 'Get task',
      description: 'Show one task of the shared task board in full: description, blockers and notes.',
      promptSnippet: 'show one task of the shared board',
      parameters: GetParams,
      argumentAliases: { taskId: 'id', task_id: 'id' },
      async execute(_id, p) {
        const [v] = await call(link, { op: 'get', id: p.id });
        return text(details(v!, self), v);
      },
    }),
    task_update: tool({
      name: 'task_update',
      label: 'Update task',
      description:
        'Change a task of the shared task board: status in_progress takes it (atomic: if another agent owns it you get an error naming them), completed when it is done; owner assigns it ("" releases it); notes adds a note.',
      promptSnippet: 'take, complete, assign or annotate a task of the shared board',
      parameters: UpdateParams,
      argumentAliases: { taskId: 'id', task_id: 'id', note: 'notes' },
      async execute(_id, p) {
        const [v] = await call(link, { op: 'update', ...p });
        return text(`Task ${line(v!, self)}.`, v);
      },
    }),
  };
  return names.map((n) => all[n]);
}
