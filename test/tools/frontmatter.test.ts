import { describe, expect, it } from 'vitest';
import { parseFrontmatter, yamlQuoteHint } from '../../src/tools/frontmatter.js';

describe('frontmatter', () => {
  it('reads the YAML block and the body, with or without a BOM and CRLF', () => {
    expect(parseFrontmatter('\uFEFF---\r\nname: x\r\ndescription: "a: b"\r\n---\r\nbody\r\n')).toEqual({
      data: { name: 'x', description: 'a: b' },
      body: 'body\n',
    });
    expect(parseFrontmatter('no frontmatter')).toEqual({ data: {}, body: 'no frontmatter' });
  });

  it('invalid YAML names the file line and column and says to quote the value', () => {
    const r = parseFrontmatter('---\nname: pdf\ndescription: Use when: the user asks for PDFs\n---\nbody');
    expect(r.error).toBe(
      "invalid YAML in frontmatter (line 3, column 14): Nested mappings are not allowed in compact mappings; quote the value of description: write description: '...' (double any ' inside), or put the text on indented lines after description: > ; a plain value cannot hold \": \" or start with a quote, `, @, [, { or *",
    );
    expect(r.body).toBe('body');
  });

  it('finds the key of a continuation line', () => {
    expect(yamlQuoteHint('name: a\ndescription: first line\n  second line\n  "quoted" then', 4)).toMatch(
      /^quote the value of description:/,
    );
    expect(yamlQuoteHint('- just a list', 1)).toBeUndefined();
  });
});
