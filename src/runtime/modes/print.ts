// Print mode (`orchestrate agent "prompt"`): runs the prompts in order and prints the final
// answer's text. A run that ends in an error or an abort prints the reason on stderr, exit 1.
import type { AssistantMessage } from '../../ai/types.js';
import type { AgentSession } from '../agent-session.js';

/** Where a mode writes; each call gets whole text (newlines included). */
export interface ModeOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The last assistant reply of the session's context, if any. */
export function lastReply(session: AgentSession): AssistantMessage | undefined {
  const messages = session.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant') return m;
  }
  return undefined;
}

/**
 * Finishes the turn a crash cut off (session.resume()): undefined when it was finished, else why
 * not (resume threw, or its reply ended in an error or an abort).
 */
export async function resumeCutOffTurn(session: AgentSession): Promise<string | undefined> {
  try {
    await session.resume();
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const last = lastReply(session);
  if (last && (last.stopReason === 'error' || last.stopReason === 'aborted'))
    return last.errorMessage ?? `Request ${last.stopReason}`;
  return undefined;
}

/** 0 when the last reply succeeded, else 1 (with the reason on stderr). */
export function outcomeCode(session: AgentSession, out: ModeOutput): number {
  const last = lastReply(session);
  if (last && (last.stopReason === 'error' || last.stopReason === 'aborted')) {
    out.stderr(`${last.errorMessage ?? `Request ${last.stopReason}`}\n`);
    return 1;
  }
  return 0;
}

/** Sends each prompt and awaits it; a prompt that cannot be sent at all is reported and ends the mode. */
export async function sendPrompts(
  session: AgentSession,
  prompts: readonly string[],
  out: ModeOutput,
): Promise<boolean> {
  for (const p of prompts) {
    try {
      await session.prompt(p);
    } catch (err) {
      out.stderr(`${err instanceof Error ? err.message : String(err)}\n`);
      return false;
    }
    const last = lastReply(session);
    if (last && (last.stopReason === 'error' || last.stopReason === 'aborted')) break;
  }
  return true;
}

export async function runPrintMode(
  session: AgentSession,
  prompts: readonly string[],
  out: ModeOutput,
): Promise<number> {
  if (!(await sendPrompts(session, prompts, out))) return 1;
  const code = outcomeCode(session, out);
  if (code !== 0) return code;
  const last = lastReply(session);
  for (const block of last?.content ?? [])
    if (block.type === 'text' && block.text !== '')
      out.stdout(block.text.endsWith('\n') ? block.text : `${block.text}\n`);
  return 0;
}
