// A small frontmatter reader: a `---` fenced YAML block at the top of a Markdown file.
import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');
let yaml: YamlModule | undefined;
/**
 * The YAML parser, loaded on the first frontmatter (yaml is CommonJS in Node, so a synchronous
 * require gives the same module an import would). Most agents have no skills: loading it up front
 * cost every agent thread ~35 ms.
 */
function yamlParser(): YamlModule {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yaml;
}

export interface Frontmatter {
  /** The YAML mapping ({} when there is none or it is invalid). */
  data: Record<string, unknown>;
  /** The text after the closing fence (the whole text when there is no frontmatter). */
  body: string;
  /** Why the frontmatter could not be read, if it could not. */
  error?: string;
}

/**
 * How to fix a YAML error on `line` (1-based) of a frontmatter block, when it is the everyday
 * one: a plain `key: value` whose value holds ": " (or starts with a quote, `, @, [, { or *
 * and goes on), which YAML reads as more syntax. Agent and skill descriptions do this a lot.
 */
export function yamlQuoteHint(yamlText: string, line: number): string | undefined {
  const lines = yamlText.split(/\r?\n/);
  // The error may sit on a continuation line; the key is on the nearest less-indented line above.
  for (let i = Math.min(line, lines.length) - 1; i >= 0; i--) {
    const text = lines[i]!;
    const m = /^([ \t]*)([A-Za-z_][\w-]*):[ \t]+(\S.*)$/.exec(text);
    if (m) {
      const key = m[2]!;
      return `quote the value of ${key}: write ${key}: '...' (double any ' inside), or put the text on indented lines after ${key}: > ; a plain value cannot hold ": " or start with a quote, \`, @, [, { or *`;
    }
    if (i < line - 1 && /^\S/.test(text)) break;
  }
  return undefined;
}

export function parseFrontmatter(source: string): Frontmatter {
  const text = (source.startsWith('\uFEFF') ? source.slice(1) : source).replace(/\r\n/g, '\n');
  if (!text.startsWith('---\n') && text !== '---') return { data: {}, body: text };
  const close = /^(?:---|\.\.\.)[ \t]*$/m;
  const rest = text.slice(4);
  const m = close.exec(rest);
  if (!m) return { data: {}, body: text, error: 'the frontmatter opened with --- is never closed' };
  const yamlText = rest.slice(0, m.index);
  const body = rest.slice(m.index + m[0].length).replace(/^\n/, '');
  let data: unknown;
  try {
    data = yamlParser().parse(yamlText);
  } catch (err) {
    // yaml's messages end "at line L, column C:" (lines of the frontmatter; the file's are one more).
    const first = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    const at = /at line (\d+), column (\d+):?$/.exec(first);
    const where = at ? ` (line ${Number(at[1]) + 1}, column ${at[2]})` : '';
    const hint = at ? yamlQuoteHint(yamlText, Number(at[1])) : undefined;
    return {
      data: {},
      body,
      error: `invalid YAML in frontmatter${where}: ${first.replace(/ at line \d+, column \d+:?$/, '')}${hint ? `; ${hint}` : ''}`,
    };
  }
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data))
    return { data: {}, body, error: 'frontmatter must be a YAML mapping (key: value lines)' };
  return { data: data as Record<string, unknown>, body };
}
