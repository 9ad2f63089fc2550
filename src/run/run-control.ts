// Driving a live run from outside its coordinator: the actions a user can take on one instance
// (cancel it, steer it with a message, retry it), shared by the run's own live view, `orchestrate
// watch` from another terminal, and the `cancel` / `steer` commands. The coordinator listens on
// a unix socket in the run folder (owner-only); a request is one JSON line, the reply one JSON line.
// Every action is written to run.jsonl as a `control` event, so the log and the report show who
// did what; `peek` is a read, not an action, and is never logged.

import type { ApprovalChannel } from './run-events.js';

/** The socket's file name inside the run folder. */
export const CONTROL_SOCKET_NAME = 'control.sock';

export type ControlAction =
  /** End the instance as `cancelled` (its session is kept); the run goes on, its dependants follow `on_failure`. */
  | { action: 'cancel'; instance: string; by?: string }
  /** Deliver a steering message into the instance's running agent loop. */
  | { action: 'steer'; instance: string; text: string; by?: string }
  /** Run a failed or cancelled instance again (a new attempt, from its session). */
  | { action: 'retry'; instance: string; by?: string }
  /** Cancel the whole run (like Ctrl-C: sessions kept, resumable). */
  | { action: 'cancel_run'; by?: string }
  /**
   * Answer an approval gate (a task's `approve:`): every instance of `task` waiting at it, or only
   * `instance`. Approved instances are queued; rejected ones are skipped (a task whose instances
   * are all skipped is skipped, and so are its dependants). `via`: the channel, for the log.
   */
  | ApprovalAnswer
  /**
   * Read only: the text the instance's agent is writing right now (the reply's message; '' when
   * it is not writing). Streams that agent's text to the coordinator for a few seconds after.
   * A pair's key answers with the member that is writing.
   */
  | { action: 'peek'; instance: string };

/** approve or reject (two members, so `a.action === 'approve' || a.action === 'reject'` narrows a union). */
export type ApprovalAnswer = ({ action: 'approve' } | { action: 'reject' }) & ApprovalFields;

interface ApprovalFields {
  /** The gated task; with gate `publish`, the task whose publish gate it is, or '*' for every waiting one. */
  task: string;
  /**
   * `publish`: answer a publish gate (publish.approve) rather than a task's approve:; `follow_up`:
   * the gate of a follow-up round waiting to push (publish.follow_up.approve; `task` may be '*').
   */
  gate?: 'publish' | 'follow_up';
  instance?: string;
  note?: string;
  by?: string;
  via?: ApprovalChannel;
}

/**
 * Why a control action failed, as data (so no caller parses the wording): `refused`, the
 * coordinator understood and said no; `malformed_request`, it could not read the action;
 * `failed`, carrying it out threw. The client's own: `not_live`, nobody listens on the socket;
 * `no_reply`, the connection closed without a reply; `timeout`, no reply in time; `unreachable`,
 * another socket error; `malformed_reply`, the reply could not be read.
 */
export type ControlErrorCode =
  | 'refused'
  | 'malformed_request'
  | 'failed'
  | 'not_live'
  | 'no_reply'
  | 'timeout'
  | 'unreachable'
  | 'malformed_reply';

/** `code` is absent on replies of older coordinators and in-process answers: a refusal. */
export type ControlReply = { ok: true; message: string } | { ok: false; error: string; code?: ControlErrorCode };

/** Something that carries control actions to a run's coordinator (in-process or over the socket). */
export interface RunControl {
  send(action: ControlAction): Promise<ControlReply>;
}
