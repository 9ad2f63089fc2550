// The text of message content: a plain string, or the text blocks joined by newlines (images
// and other blocks are left out). Every layer that summarizes or shows a conversation needs it.
import type { ImageContent, TextContent } from './types.js';

export function contentText(content: string | readonly (TextContent | ImageContent | { type: string })[]): string {
  if (typeof content === 'string') return content;
  let out = '';
  let first = true;
  for (const b of content) {
    if (b.type !== 'text') continue;
    out += (first ? '' : '\n') + (b as TextContent).text;
    first = false;
  }
  return out;
}
