// JSON mode (`orchestrate agent --mode json "prompt"`): the session header as the first line,
// then every AgentSessionEvent as one JSON line, in order. Exit code as in print mode.
// A reopened session whose last turn a kill cut off (cutOffTurn) is finished first, with its
// events in the stream after a `cut_off_turn_resume` line, and only then are the prompts sent.
import type { AgentSession } from '../agent-session.js';
import { cutOffTurn, type CutOffTurn } from '../session-resume.js';
import { eventLineWriter, jsonLine } from './jsonl.js';
import { outcomeCode, resumeCutOffTurn, sendPrompts, type ModeOutput } from './print.js';

/**
 * The line json mode writes before finishing a cut-off turn. Not an AgentSessionEvent: the
 * session itself does not decide to resume, this mode does; it is written in the same shape
 * (`type`, then what happened, then a `message` a person can read, as run_stopped has).
 */
export interface CutOffTurnResumeLine {
  type: 'cut_off_turn_resume';
  /** dangling: tool calls of the last reply have no results; unanswered: the last prompt has no reply. */
  kind: CutOffTurn['kind'];
  /** The calls without results (empty for unanswered): read-only ones run again, the others are answered as interrupted. */
  toolCalls: { id: string; name: string }[];
  message: string;
}

export function cutOffTurnResumeLine(cut: CutOffTurn, hasPrompt: boolean): CutOffTurnResumeLine {
  const calls = cut.kind === 'dangling' ? cut.calls : [];
  const what =
    cut.kind === 'dangling'
      ? `its ${calls.map((c) => c.name).join(', ')} call${calls.length === 1 ? ' has' : 's have'} no result`
      : 'its last prompt has no reply';
  return {
    type: 'cut_off_turn_resume',
    kind: cut.kind,
    toolCalls: calls.map((c) => ({ id: c.id, name: c.name })),
    message: `The last turn of this session was interrupted (${what}); finishing it${hasPrompt ? ' before the prompt' : ''}.`,
  };
}

/**
 * Runs the prompts (none is allowed: then only a cut-off turn is finished). A cut-off turn that
 * cannot be finished (it fails, is aborted or stopped by a cap) ends the mode with exit 1 and
 * the reason on stderr; the prompts are not sent, since they were meant to follow that turn.
 */
export async function runJsonMode(session: AgentSession, prompts: readonly string[], out: ModeOutput): Promise<number> {
  out.stdout(jsonLine(session.header));
  const line = eventLineWriter();
  const unsubscribe = session.subscribe((event) => out.stdout(line(event)));
  try {
    const cut = cutOffTurn(session.messages);
    if (cut) {
      out.stdout(jsonLine(cutOffTurnResumeLine(cut, prompts.length > 0)));
      const reason = await resumeCutOffTurn(session);
      if (reason !== undefined) {
        out.stderr(
          `The interrupted turn could not be finished${prompts.length > 0 ? ', so the prompt was not sent' : ''}: ${reason}\n`,
        );
        return 1;
      }
    }
    if (!(await sendPrompts(session, prompts, out))) return 1;
    await session.waitForIdle();
  } finally {
    unsubscribe();
  }
  return outcomeCode(session, out);
}
