// An instance's conversation held between reads: the terminal's run view and the web page's feed
// (service/run-feed.ts) look at an open conversation several times a second, and parsing its
// whole session file each time would grow with the conversation. The file is parsed again only
// when its size or modification time changed (or it appeared).
import { statSync } from 'node:fs';
import { type Conversation, readConversation } from './session-conversation.js';

export interface ConversationCacheOptions {
  /**
   * Drop the warning that the file's last line is incomplete: while the run is live that line is
   * still being appended, not damage, and the next read has it whole.
   */
  whileLive?: boolean;
}

export class ConversationCache {
  private last: { file: string; size: number; mtimeMs: number; conv: Conversation } | undefined;

  constructor(private readonly options: ConversationCacheOptions = {}) {}

  /** The conversation in `file`: the one read last when the file has not changed since. */
  read(file: string): Conversation {
    let size = -1;
    let mtimeMs = -1;
    try {
      const st = statSync(file);
      size = st.size;
      mtimeMs = st.mtimeMs;
    } catch {
      // Not there yet: readConversation says so.
    }
    const c = this.last;
    if (c && c.file === file && c.size === size && c.mtimeMs === mtimeMs) return c.conv;
    const conv = readConversation(file);
    if (this.options.whileLive) conv.warnings = conv.warnings.filter((w) => !/ is incomplete \(/.test(w));
    this.last = { file, size, mtimeMs, conv };
    return conv;
  }

  /** Reads the file again next time, changed or not. */
  forget(): void {
    this.last = undefined;
  }
}
