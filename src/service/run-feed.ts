// A run followed from another process, folded as it grows: what `orchestrate serve` (and any
// reader that keeps a run open) holds for one run. Each poll reads the lines appended to
// run.jsonl since the last one (a line still being written waits for the next poll) and applies
// them to the run's state with the one fold (run/run-fold.ts), so the page shows exactly what
// `show`, `watch` and the report show. The conversation of an instance is read from its session
// file again only when that file changed; the reply being written comes from a `peek` over the
// run's control socket, as the terminal's run view gets it.
import { join } from 'node:path';
import { RunLogFollower } from '../display/run-log-follower.js';
import { sessionFileOf } from '../display/run-folder.js';
import { ConversationCache } from '../display/conversation-cache.js';
import type { Conversation } from '../display/session-conversation.js';
import { readOnlyReason } from '../display/watch-run.js';
import { connectRunControl } from '../run/run-control-client.js';
import { applyEvent, createRunState, type InstanceState, isFinished, type RunState } from '../run/run-fold.js';
import { RUN_LOG } from '../run/run-store.js';

export class RunFeed {
  readonly state: RunState = createRunState();
  private readonly follower: RunLogFollower;
  private readonly conversations = new ConversationCache();

  constructor(readonly runDir: string) {
    this.follower = new RunLogFollower(join(runDir, RUN_LOG));
  }

  /** Folds what was appended since the last poll; true when anything was. */
  poll(): boolean {
    const events = this.follower.poll();
    for (const e of events) applyEvent(this.state, e);
    return events.length > 0;
  }

  /** Why acting on the run cannot work now (ended, nobody holds it, another host), or undefined. */
  readOnly(): string | undefined {
    return readOnlyReason(this.runDir, this.state);
  }

  /** The instance's conversation from its session file, read again only when the file changed. */
  conversation(inst: InstanceState): Conversation {
    return this.conversations.read(sessionFileOf(this.runDir, inst));
  }

  /**
   * What the instance's agent is writing right now (a `peek`: read only, never logged), or '' when
   * it writes nothing, the instance is finished, or no coordinator answers on this host.
   */
  async writing(inst: InstanceState): Promise<string> {
    if (isFinished(inst) || this.readOnly() !== undefined) return '';
    const reply = await connectRunControl(this.runDir).send({ action: 'peek', instance: inst.key });
    return reply.ok ? reply.message : '';
  }
}
