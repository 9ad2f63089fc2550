// `${{ ... }}` expressions in the GitHub Actions style: a hand-written tokenizer and
// recursive-descent parser producing a small AST. Nothing is ever handed to eval or Function.
//
// Grammar (lowest precedence first):
//   or      := and ('||' and)*
//   and     := eq ('&&' eq)*
//   eq      := unary (('==' | '!=') unary)*
//   unary   := '!' unary | postfix
//   postfix := primary ('.' NAME | '[' or ']')*
//   primary := NAME '(' args? ')' | NAME | STRING | NUMBER | true | false | null | '(' or ')'
// Names may contain '-' after the first character (task ids such as `fix-tests`), as in GHA.

export type BinaryOp = '==' | '!=' | '&&' | '||';

/** Every node keeps `pos`, its offset in the template text, so errors can point inside a YAML scalar. */
export type Expr =
  | { kind: 'literal'; value: string | number | boolean | null; pos: number }
  | { kind: 'name'; name: string; pos: number }
  | { kind: 'member'; object: Expr; property: string; pos: number }
  | { kind: 'index'; object: Expr; index: Expr; pos: number }
  | { kind: 'call'; callee: string; args: Expr[]; pos: number }
  | { kind: 'not'; operand: Expr; pos: number }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr; pos: number };

export type TemplatePart =
  | { kind: 'text'; text: string }
  | { kind: 'expr'; expr: Expr; source: string; offset: number };

export interface ParsedTemplate {
  parts: TemplatePart[];
  /** The text is exactly one expression (whitespace around allowed): it keeps its type when evaluated. */
  whole: boolean;
}

/** A syntax error at `offset` in the template text. */
export interface ExpressionSyntaxIssue {
  message: string;
  offset: number;
  hint?: string;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: ExpressionSyntaxIssue };

class SyntaxFailure extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly hint?: string,
  ) {
    super(message);
  }
}

type Token =
  | { type: 'name'; value: string; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'number'; value: number; pos: number }
  | { type: 'punct'; value: string; pos: number }
  | { type: 'end'; pos: number };

const PUNCT = ['==', '!=', '&&', '||', '!', '.', '[', ']', '(', ')', ','] as const;

function tokenize(source: string, base: number): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const pos = base + i;
    if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(source.slice(i))!;
      // A trailing '-' belongs to no sane name; leave it to produce a clear error.
      const word = m[0].replace(/-+$/, '');
      tokens.push({ type: 'name', value: word, pos });
      i += word.length;
      continue;
    }
    if (/[0-9]/.test(ch) || (ch === '-' && /[0-9]/.test(source[i + 1] ?? ''))) {
      const m = /^-?\d+(?:\.\d+)?/.exec(source.slice(i))!;
      tokens.push({ type: 'number', value: Number(m[0]), pos });
      i += m[0].length;
      continue;
    }
    if (ch === "'" || ch === '"') {
      // GHA style: a quote inside a string is written twice ('it''s').
      let value = '';
      let j = i + 1;
      for (;;) {
        if (j >= source.length) throw new SyntaxFailure('unterminated string literal', pos, `close it with ${ch}`);
        const c = source[j]!;
        if (c === ch) {
          if (source[j + 1] === ch) {
            value += ch;
            j += 2;
            continue;
          }
          break;
        }
        value += c;
        j++;
      }
      tokens.push({ type: 'string', value, pos });
      i = j + 1;
      continue;
    }
    const punct = PUNCT.find((p) => source.startsWith(p, i));
    if (!punct) {
      const hint = ch === '=' ? 'compare with ==' : ch === '&' || ch === '|' ? 'use && or ||' : undefined;
      throw new SyntaxFailure(`unexpected character "${ch}" in expression`, pos, hint);
    }
    tokens.push({ type: 'punct', value: punct, pos });
    i += punct.length;
  }
  tokens.push({ type: 'end', pos: base + source.length });
  return tokens;
}

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  parseAll(): Expr {
    const first = this.peek();
    if (first.type === 'end')
      throw new SyntaxFailure('empty expression', first.pos, 'write something between ${{ and }}');
    const expr = this.or();
    const rest = this.peek();
    if (rest.type !== 'end') throw new SyntaxFailure(`unexpected ${describe(rest)} after the expression`, rest.pos);
    return expr;
  }

  private peek(): Token {
    return this.tokens[this.i]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private isPunct(value: string): boolean {
    const t = this.peek();
    return t.type === 'punct' && t.value === value;
  }
  private expectPunct(value: string): Token {
    const t = this.next();
    if (t.type !== 'punct' || t.value !== value)
      throw new SyntaxFailure(`expected "${value}" but found ${describe(t)}`, t.pos);
    return t;
  }

  /** One precedence level of left-associative operators: `operand (op operand)*`. */
  private binary(ops: readonly BinaryOp[], operand: () => Expr): Expr {
    let left = operand();
    while (ops.some((o) => this.isPunct(o))) {
      const op = this.next() as { value: BinaryOp; pos: number };
      left = { kind: 'binary', op: op.value, left, right: operand(), pos: op.pos };
    }
    return left;
  }
  private or(): Expr {
    return this.binary(['||'], () => this.and());
  }
  private and(): Expr {
    return this.binary(['&&'], () => this.eq());
  }
  private eq(): Expr {
    return this.binary(['==', '!='], () => this.unary());
  }
  private unary(): Expr {
    if (this.isPunct('!')) {
      const op = this.next();
      return { kind: 'not', operand: this.unary(), pos: op.pos };
    }
    return this.postfix();
  }
  private postfix(): Expr {
    let expr = this.primary();
    for (;;) {
      if (this.isPunct('.')) {
        this.next();
        const t = this.next();
        if (t.type !== 'name')
          throw new SyntaxFailure(`expected a property name after "." but found ${describe(t)}`, t.pos);
        expr = { kind: 'member', object: expr, property: t.value, pos: t.pos };
      } else if (this.isPunct('[')) {
        const open = this.next();
        const index = this.or();
        this.expectPunct(']');
        expr = { kind: 'index', object: expr, index, pos: open.pos };
      } else {
        return expr;
      }
    }
  }
  private primary(): Expr {
    const t = this.next();
    switch (t.type) {
      case 'string':
      case 'number':
        return { kind: 'literal', value: t.value, pos: t.pos };
      case 'name': {
        if (t.value === 'true' || t.value === 'false')
          return { kind: 'literal', value: t.value === 'true', pos: t.pos };
        if (t.value === 'null') return { kind: 'literal', value: null, pos: t.pos };
        if (this.isPunct('(')) {
          this.next();
          const args: Expr[] = [];
          if (!this.isPunct(')')) {
            args.push(this.or());
            while (this.isPunct(',')) {
              this.next();
              args.push(this.or());
            }
          }
          this.expectPunct(')');
          return { kind: 'call', callee: t.value, args, pos: t.pos };
        }
        return { kind: 'name', name: t.value, pos: t.pos };
      }
      case 'punct':
        if (t.value === '(') {
          const inner = this.or();
          this.expectPunct(')');
          return inner;
        }
        throw new SyntaxFailure(`unexpected "${t.value}"`, t.pos);
      case 'end':
        throw new SyntaxFailure('the expression ends too early', t.pos);
    }
  }
}

function describe(t: Token): string {
  switch (t.type) {
    case 'end':
      return 'the end of the expression';
    case 'name':
      return `"${t.value}"`;
    case 'string':
      return 'a string';
    case 'number':
      return `the number ${t.value}`;
    case 'punct':
      return `"${t.value}"`;
  }
}

/** Parses the inside of one `${{ }}`; `base` is its offset in the template text. */
export function parseExpression(source: string, base = 0): ParseResult<Expr> {
  try {
    return { ok: true, value: new Parser(tokenize(source, base)).parseAll() };
  } catch (e) {
    if (e instanceof SyntaxFailure) return { ok: false, error: { message: e.message, offset: e.offset, hint: e.hint } };
    throw e;
  }
}

/**
 * Offset of the `}}` closing an expression that starts at `from`, skipping quoted strings; when
 * there is none, `openQuote` is where an unclosed string began (the likelier mistake).
 */
function findClose(text: string, from: number): { close: number; openQuote?: number } {
  let quote: string | undefined;
  let quoteAt = -1;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
      quoteAt = i;
    } else if (c === '}' && text[i + 1] === '}') {
      return { close: i };
    }
  }
  return quote ? { close: -1, openQuote: quoteAt } : { close: -1 };
}

/** True when `text` contains an expression (an escaped `$${{` does not count). */
export function hasExpression(text: string): boolean {
  return /(^|[^$])\$\{\{/.test(text);
}

/**
 * Splits text into literal parts and `${{ expr }}` parts. `$${{` stands for a literal `${{`
 * (for prompts that talk about GitHub Actions syntax).
 */
export function parseTemplate(text: string): ParseResult<ParsedTemplate> {
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('${{', i);
    if (open < 0) {
      literal += text.slice(i);
      break;
    }
    if (open > 0 && text[open - 1] === '$') {
      literal += `${text.slice(i, open - 1)}\${{`;
      i = open + 3;
      continue;
    }
    literal += text.slice(i, open);
    const { close, openQuote } = findClose(text, open + 3);
    if (openQuote !== undefined) {
      return {
        ok: false,
        error: { message: 'unterminated string literal', offset: openQuote, hint: `close it with ${text[openQuote]}` },
      };
    }
    if (close < 0) {
      return {
        ok: false,
        error: {
          message: 'unterminated expression: "${{" without a closing "}}"',
          offset: open,
          hint: 'close it with }}, or write $${{ for a literal ${{',
        },
      };
    }
    const source = text.slice(open + 3, close);
    const parsed = parseExpression(source, open + 3);
    if (!parsed.ok) return parsed;
    if (literal) parts.push({ kind: 'text', text: literal });
    literal = '';
    parts.push({ kind: 'expr', expr: parsed.value, source: source.trim(), offset: open });
    i = close + 2;
  }
  if (literal) parts.push({ kind: 'text', text: literal });
  const exprParts = parts.filter((p) => p.kind === 'expr');
  const whole = exprParts.length === 1 && parts.every((p) => p.kind === 'expr' || p.text.trim() === '');
  return { ok: true, value: { parts, whole } };
}
