// plan.md as HTML for the report, through marked (CommonMark + GFM: nested lists, tables, code).
// Plan text comes from agents, so the output is kept inert: raw HTML is shown as text, links and
// images become their text (the report must open offline and never point anywhere), and every
// piece of text is escaped by marked. Headings start at h3 (the page has its own h1/h2).
import { Marked, type Tokens } from 'marked';
import { escapeHtml } from './html-text.js';

const markdown = new Marked({
  gfm: true,
  // A line break inside a paragraph stays a line break, as agents write plans line by line.
  breaks: true,
  renderer: {
    heading({ tokens, depth }: Tokens.Heading): string {
      const level = Math.min(6, depth + 2);
      return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
    },
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    link({ tokens }: Tokens.Link): string {
      return this.parser.parseInline(tokens);
    },
    image({ text }: Tokens.Image): string {
      return escapeHtml(text);
    },
  },
});

export function markdownToHtml(text: string): string {
  return (markdown.parse(text.replace(/\r\n/g, '\n'), { async: false }) as string).trimEnd();
}
