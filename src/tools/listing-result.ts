// The result of a listing tool (ls, find, grep): the lines kept within the byte limit, and one
// bracketed notice line saying what was cut and how to get more. Notices are optional pieces
// with the details they add, so each tool states only its own limits.
import type { AgentToolResult } from '../agent/types.js';
import { textResult } from './tool-result.js';
import { formatSize, truncateHead, type TruncationResult } from './truncate.js';

export interface ListingNotice<TDetails> {
  /** Whether this limit was hit. */
  hit: boolean;
  text: string;
  details: Partial<TDetails>;
}

/** `limit` comes before the byte-limit notice, `after` after it (the order the model reads them). */
export function listingResult<TDetails extends { truncation?: TruncationResult }>(
  lines: readonly string[],
  maxBytes: number,
  limit: ListingNotice<TDetails>,
  after: ListingNotice<TDetails>[] = [],
): AgentToolResult<TDetails> {
  const truncation = truncateHead(lines.join('\n'), { maxLines: Number.MAX_SAFE_INTEGER, maxBytes });
  const size: ListingNotice<TDetails> = {
    hit: truncation.truncated,
    text: `${formatSize(maxBytes)} limit reached`,
    details: { truncation } as Partial<TDetails>,
  };
  const details: Partial<TDetails> = {};
  const notices: string[] = [];
  for (const n of [limit, size, ...after]) {
    if (!n.hit) continue;
    notices.push(n.text);
    Object.assign(details, n.details);
  }
  const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join('. ')}]` : truncation.content;
  return textResult(text, notices.length > 0 ? (details as TDetails) : undefined);
}
