// Tolerant JSON for streamed tool arguments: parses a prefix of a JSON document and returns
// what is complete so far (unfinished strings are kept, unfinished keys/literals dropped).
import { aiDefaults } from './defaults.js';

const INCOMPLETE = Symbol('incomplete');
type Parsed = unknown | typeof INCOMPLETE;

class SyntaxFailure extends Error {}

class PrefixParser {
  private pos = 0;
  constructor(private readonly src: string) {}

  parseDocument(): unknown {
    const v = this.value();
    return v === INCOMPLETE ? undefined : v;
  }

  private eof(): boolean {
    this.skipWs();
    return this.pos >= this.src.length;
  }

  private skipWs(): void {
    const s = this.src;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.pos++;
      else break;
    }
  }

  private value(): Parsed {
    if (this.eof()) return INCOMPLETE;
    const c = this.src[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string().value;
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    return this.literal();
  }

  private object(): Record<string, unknown> {
    this.pos++;
    const out: Record<string, unknown> = {};
    for (;;) {
      if (this.eof()) return out;
      if (this.src[this.pos] === '}') {
        this.pos++;
        return out;
      }
      if (this.src[this.pos] !== '"') throw new SyntaxFailure('expected a key');
      const key = this.string();
      if (!key.complete || this.eof()) return out;
      if (this.src[this.pos] !== ':') throw new SyntaxFailure('expected ":"');
      this.pos++;
      const v = this.value();
      if (v === INCOMPLETE) return out;
      out[key.value] = v;
      if (this.eof()) return out;
      const sep = this.src[this.pos];
      this.pos++;
      if (sep === '}') return out;
      if (sep !== ',') throw new SyntaxFailure('expected "," or "}"');
    }
  }

  private array(): unknown[] {
    this.pos++;
    const out: unknown[] = [];
    for (;;) {
      if (this.eof()) return out;
      if (this.src[this.pos] === ']') {
        this.pos++;
        return out;
      }
      const v = this.value();
      if (v === INCOMPLETE) return out;
      out.push(v);
      if (this.eof()) return out;
      const sep = this.src[this.pos];
      this.pos++;
      if (sep === ']') return out;
      if (sep !== ',') throw new SyntaxFailure('expected "," or "]"');
    }
  }

  /** A string; at end of input the text so far is returned with complete=false. */
  private string(): { value: string; complete: boolean } {
    const s = this.src;
    let i = this.pos + 1;
    let out = '';
    let runStart = i;
    while (i < s.length) {
      const c = s[i];
      if (c === '"') {
        out += s.slice(runStart, i);
        this.pos = i + 1;
        return { value: out, complete: true };
      }
      if (c === '\\') {
        out += s.slice(runStart, i);
        const esc = s[i + 1];
        if (esc === undefined) break;
        if (esc === 'u') {
          const hex = s.slice(i + 2, i + 6);
          if (hex.length < 4) break;
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new SyntaxFailure('bad \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          const mapped = ESCAPES[esc];
          if (mapped === undefined) throw new SyntaxFailure('bad escape');
          out += mapped;
          i += 2;
        }
        runStart = i;
        continue;
      }
      i++;
    }
    if (runStart < s.length && i >= s.length) out += s.slice(runStart);
    this.pos = s.length;
    return { value: out, complete: false };
  }

  private number(): Parsed {
    const m = NUMBER_PREFIX.exec(this.src.slice(this.pos));
    const text = m?.[0] ?? '';
    this.pos += text.length;
    const atEnd = this.pos >= this.src.length;
    // A number cut by the end of input keeps its longest valid prefix ("1." -> 1, "-" -> incomplete).
    const valid = VALID_NUMBER.exec(text)?.[0] ?? '';
    if (valid.length !== text.length && !atEnd) throw new SyntaxFailure('bad number');
    return valid === '' ? INCOMPLETE : Number(valid);
  }

  private literal(): Parsed {
    const rest = this.src.slice(this.pos, this.pos + 5);
    for (const [word, val] of LITERALS) {
      if (rest.startsWith(word)) {
        this.pos += word.length;
        return val;
      }
      if (this.pos + rest.length >= this.src.length && word.startsWith(rest)) {
        this.pos = this.src.length;
        return INCOMPLETE;
      }
    }
    throw new SyntaxFailure('unexpected character');
  }
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const NUMBER_PREFIX = /^-?[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?/;
const VALID_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/;
const LITERALS: [string, unknown][] = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/** Parses a possibly incomplete JSON text; undefined when nothing usable can be read. */
export function parsePartialJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // fall through to the tolerant parser
  }
  try {
    return new PrefixParser(text).parseDocument();
  } catch {
    return undefined;
  }
}

/** Tool-call arguments from streamed JSON: always an object, `{}` on total failure. */
export function parseToolArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const v = parsePartialJson(text);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * The arguments of a tool call as they stream in. Re-parsing the whole buffer on every delta
 * costs O(n) per delta, O(n^2) for the call: a model writing a 3 MB file through a tool would
 * spend minutes of CPU in the parser. So the live value is re-parsed on every delta only while
 * the buffer is small, and after that whenever it has grown by a fixed factor (O(n) in all).
 * The live value is a preview; `final()` parses the complete text.
 */
export class StreamedToolArguments {
  private text = '';
  private parsedLength = 0;
  private current: Record<string, unknown> = {};
  /** Parses done so far (tests check the amortized bound). */
  parses = 0;

  constructor(
    private readonly eagerChars: number = aiDefaults.partialArgumentsEagerChars,
    private readonly growth: number = aiDefaults.partialArgumentsGrowth,
  ) {}

  get json(): string {
    return this.text;
  }

  /** Adds a delta; returns the (possibly slightly stale) partial arguments. */
  push(delta: string): Record<string, unknown> {
    this.text += delta;
    const n = this.text.length;
    if (n <= this.eagerChars || n >= this.parsedLength * this.growth) {
      this.current = parseToolArguments(this.text);
      this.parsedLength = n;
      this.parses++;
    }
    return this.current;
  }

  /** The arguments from the complete text. */
  final(): Record<string, unknown> {
    if (this.parsedLength !== this.text.length) {
      this.current = parseToolArguments(this.text);
      this.parsedLength = this.text.length;
      this.parses++;
    }
    return this.current;
  }
}
