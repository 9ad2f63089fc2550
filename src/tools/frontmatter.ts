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
    return { data: {}, body, error: `invalid YAML in frontmatter: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) return { data: {}, body, error: 'frontmatter must be a YAML mapping (key: value lines)' };
  return { data: data as Record<string, unknown>, body };
}
