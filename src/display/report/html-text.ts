// Text into HTML safely: everything that comes from a run (agent output, tool results, file
// names) is untrusted and is escaped before it reaches the page.

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON for a `<script type="application/json">` block: `<` is written as \u003c so no string in
 * the data can close the script element, and U+2028/2029 are escaped for older parsers.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Cuts long text for the page and says how much was left out and where the rest is. */
export function truncateForPage(text: string, max: number, where?: string): { text: string; note?: string } {
  if (text.length <= max) return { text };
  // Never cut between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? '') ? max - 1 : max;
  const rest = text.length - end;
  return {
    text: text.slice(0, end),
    note: `${rest.toLocaleString('en-US')} more characters not shown${where ? ` (full text in ${where})` : ''}`,
  };
}
