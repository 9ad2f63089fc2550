// Secrets kept out of a command's full-output temp file. The file is written as the output
// streams, so a secret may arrive split across two chunks: the redactor holds back the end of
// what it has seen until no secret can still be completing there, and never cuts inside an
// occurrence. Each secret becomes `[REDACTED:<name>]`, the placeholder the session files use.
//
// (The session layer redacts what it persists with the same placeholder; this is the streaming
// counterpart for the one file a tool writes itself.)

export interface ToolSecret {
  /** What the placeholder says: `[REDACTED:<name>]`. */
  name: string;
  value: string;
}

/** Values shorter than this are not secrets worth garbling every output for (the session layer's limit too). */
const MIN_SECRET_CHARS = 4;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The secrets compiled once (a tool makes one per stream it writes). */
interface SecretPattern {
  pattern: RegExp;
  placeholders: Map<string, string>;
  /** Characters that may be the start of a secret still arriving. */
  holdBack: number;
}

export class StreamRedactor {
  private carry = '';

  private constructor(private readonly secrets: SecretPattern) {}

  /**
   * A maker of redactors for `secrets` (each stream needs its own), or undefined when none is
   * long enough to redact. The pattern is compiled here, once.
   */
  static factory(secrets: readonly ToolSecret[] | undefined): (() => StreamRedactor) | undefined {
    const usable = (secrets ?? []).filter((s) => typeof s.value === 'string' && s.value.length >= MIN_SECRET_CHARS);
    if (usable.length === 0) return undefined;
    const placeholders = new Map(usable.map((s) => [s.value, `[REDACTED:${s.name}]`] as const));
    // Longest first, so a secret that contains another one is replaced whole.
    const values = [...placeholders.keys()].sort((a, b) => b.length - a.length);
    const compiled: SecretPattern = {
      pattern: new RegExp(values.map(escapeRegExp).join('|'), 'g'),
      placeholders,
      holdBack: (values[0]?.length ?? 1) - 1,
    };
    return () => new StreamRedactor(compiled);
  }

  /** A redactor for one stream, or undefined when no secret is long enough to redact. */
  static create(secrets: readonly ToolSecret[] | undefined): StreamRedactor | undefined {
    return StreamRedactor.factory(secrets)?.();
  }

  /** Takes the next piece of the stream; returns what can be written now, redacted. */
  push(text: string): string {
    const { pattern, holdBack } = this.secrets;
    const all = this.carry + text;
    let cut = Math.max(0, all.length - holdBack);
    // Never cut through an occurrence: it is written whole, as its placeholder, or not yet.
    pattern.lastIndex = 0;
    for (let m = pattern.exec(all); m !== null; m = pattern.exec(all)) {
      const end = m.index + m[0].length;
      if (m.index < cut && end > cut) {
        cut = end; // the match is complete in `all`: write it whole (as its placeholder)
        break;
      }
      if (m.index >= cut) break;
    }
    this.carry = all.slice(cut);
    return this.redact(all.slice(0, cut));
  }

  /** The rest of the stream, redacted. */
  end(): string {
    const rest = this.carry;
    this.carry = '';
    return this.redact(rest);
  }

  private redact(text: string): string {
    const { pattern, placeholders } = this.secrets;
    return text.replace(pattern, (m) => placeholders.get(m) ?? m);
  }
}
