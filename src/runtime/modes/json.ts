// JSON mode (`orchestrate agent --mode json "prompt"`): the session header as the first line,
// then every AgentSessionEvent as one JSON line, in order. Exit code as in print mode.
import type { AgentSession } from '../agent-session.js';
import { eventLineWriter, jsonLine } from './jsonl.js';
import { outcomeCode, sendPrompts, type ModeOutput } from './print.js';

export async function runJsonMode(session: AgentSession, prompts: readonly string[], out: ModeOutput): Promise<number> {
  out.stdout(jsonLine(session.header));
  const line = eventLineWriter();
  const unsubscribe = session.subscribe((event) => out.stdout(line(event)));
  try {
    if (!(await sendPrompts(session, prompts, out))) return 1;
    await session.waitForIdle();
  } finally {
    unsubscribe();
  }
  return outcomeCode(session, out);
}
