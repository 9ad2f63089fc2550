// Reasons travel as data (issue 43): no product code decides anything by matching the wording of
// messages the product itself wrote (error messages, stop reasons, control replies, publish
// problems). Those carry fields instead: a FailureReason {failure, detail, scope}, a control
// reply's `code`, a publish result's `unmatched`, a compaction's skip `reason`. This test reads
// every source file under src/ and fails on (1) the known patterns that used to do it, (2) any
// regular expression that quotes a message the product writes, and (3) any match, regex or
// prefix test on a `.message` / `.error` / `.reason` / `.errorMessage` / `.detail` field, unless
// the line is allow-listed below with why: text from outside (provider bodies, library errors).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** Patterns that once parsed the product's own messages; none may come back. */
const KNOWN: { pattern: RegExp; what: string }[] = [
  {
    pattern: /\/\^?\(?Budget exhausted/,
    what: 'a regex over "Budget exhausted: ..." (a budget stop is FailureReason data)',
  },
  {
    pattern: /\/\^?\(?(Nothing to compact|Already compacted)/,
    what: 'a regex over a compaction skip (CompactionNotDoneError.reason)',
  },
  {
    pattern: /(startsWith|includes|endsWith)\(\s*['"`]no changeset/,
    what: "startsWith('no changeset') (PublishResult.unmatched)",
  },
  { pattern: /includes\(\s*['"`] matches ['"`]\s*\)/, what: "includes(' matches ') (PublishResult.unmatched)" },
  {
    pattern: /\/\^?\(?(budget|mcp_unavailable|timeout|stalled|cancelled|aborted|crashed)\\?s*:/,
    what: 'a regex over a "class: detail" stop reason (FailureReason)',
  },
  {
    pattern: /(reason|error|message)\??\.split\(\s*['"`]:['"`]\s*\)/,
    what: "splitting a reason on ':' to find its class (FailureReason.failure)",
  },
  {
    pattern: /\/[^/\n]*(is not live|closed the connection without)/,
    what: "the control client's wording (ControlReply.code)",
  },
];

/** Wording the product writes into messages: a regex or prefix test that quotes it parses our own text. */
const PRODUCT_PHRASES = [
  'Budget exhausted',
  'Permit refused',
  'Nothing to compact',
  'Already compacted',
  'no changeset',
  'did not answer within',
  'malformed request',
  'has already ended',
  'cancelled by',
  'could not carry out',
];

const FIELD = String.raw`\.(?:message|error|reason|errorMessage|detail)\b`;
/** A match, regex or prefix test applied to a message-like field. */
const FIELD_MATCH = new RegExp(
  [
    String.raw`\.(?:test|exec|search)\([^)]*${FIELD}`,
    String.raw`${FIELD}\??\.(?:match|matchAll|startsWith|endsWith|includes|search)\(`,
    String.raw`${FIELD}\??\.(?:replace|replaceAll|split)\(\s*\/`,
  ].join('|'),
);

/**
 * Lines that read a message field, each with why: text from outside (a provider, a library) is
 * parsed where it arrives. `debt`: the product's own text, re-worded or parsed; each is a known
 * follow-up of issue 43, listed so that no new one slips in unnoticed.
 */
const ALLOWED: { file: string; contains: string; why: string }[] = [
  {
    file: 'ai/provider-error.ts',
    contains: 'OVERLOADED_TEXT.test(f.message)',
    why: "a provider's error body, classified once in ai/",
  },
  {
    file: 'ai/openai-compatible.ts',
    contains: '/tool_choice/i.test(failure.message)',
    why: "an OpenAI-compatible server's refusal of tool_choice",
  },
  {
    file: 'orchestrator/schedule/failure-policy.ts',
    contains: 'return classifyErrorText(text);',
    why: "a provider's or SDK's wording of a server or connection failure (ai/'s own timeouts carry errorCause)",
  },
  {
    file: 'agent/tool-error-text.ts',
    contains: 'issue.message.replace(',
    why: "zod's issue wording, shortened for the model",
  },
];

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (/\.(ts|mts|cts)$/.test(name)) yield p;
  }
}

/** Code lines of a file (comment lines left out: prose may quote the messages). */
function codeLines(text: string): { n: number; line: string }[] {
  return text
    .split('\n')
    .map((line, i) => ({ n: i + 1, line }))
    .filter(({ line }) => !/^\s*(\/\/|\/\*|\*)/.test(line));
}

const escapeRegex = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Per phrase: in a regex literal (/...phrase.../), or the argument of a prefix / substring test. */
const PHRASE_USES = PRODUCT_PHRASES.map((phrase) => ({
  phrase,
  inRegex: new RegExp(String.raw`\/[^/\n]*${escapeRegex(phrase)}[^/\n]*\/[dgimsuy]*`),
  inTest: new RegExp(String.raw`(?:startsWith|endsWith|includes)\(\s*['"\x60][^'"\x60]*${escapeRegex(phrase)}`),
}));

/** What is wrong in one file, as "file:line: why" lines. */
export function messageParsingIn(file: string, text: string): string[] {
  const found: string[] = [];
  const allowed = ALLOWED.filter((a) => a.file === file);
  for (const { n, line } of codeLines(text)) {
    if (allowed.some((a) => line.includes(a.contains))) continue;
    for (const k of KNOWN) if (k.pattern.test(line)) found.push(`${file}:${n}: ${k.what}`);
    for (const u of PHRASE_USES)
      if (u.inRegex.test(line) || u.inTest.test(line))
        found.push(`${file}:${n}: quotes the product's message "${u.phrase}"`);
    if (FIELD_MATCH.test(line)) found.push(`${file}:${n}: matches a message field: ${line.trim()}`);
  }
  return found;
}

describe("no product code parses the product's own messages", () => {
  it('src/ has no known pattern, no regex quoting a product message, no match on a message field outside the allow-list', () => {
    const found = [...sourceFiles(SRC)].flatMap((f) => messageParsingIn(relative(SRC, f), readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });

  it('every allow-listed line still exists (a stale entry would hide a new one)', () => {
    for (const a of ALLOWED) {
      const text = readFileSync(join(SRC, a.file), 'utf8');
      expect(text.includes(a.contains), `${a.file}: ${a.contains}`).toBe(true);
    }
  });

  it('catches what the product used to do (the code before issue 43)', () => {
    const old: [string, string][] = [
      ['orchestrator/schedule/failure-policy.ts', "  if (/^Budget exhausted\\b/.test(text)) return 'budget';"],
      ['orchestrator/schedule/failure-policy.ts', "  const head = reason.split(':')[0]!.trim();"],
      ['orchestrator/worker/agent-host.ts', "      error: `Budget exhausted: ${reason.replace(/^budget:\\s*/, '')}`,"],
      [
        'orchestrator/schedule/attempt-lifecycle.ts',
        "runBudgetSpent: result.error.replace(/^Budget exhausted:\\s*/, '') };",
      ],
      ['service/run-control.ts', '  if (/ is not live: |closed the connection without a reply/.test(reply.error))'],
      [
        'cli/commands/publish.ts',
        "if (only && result.problems.some((p) => p.startsWith('no changeset') || p.includes(' matches '))) {",
      ],
      [
        'display/interactive/controller.ts',
        'if (!(err instanceof Error) || !/^Nothing to compact/.test(err.message)) throw err;',
      ],
    ];
    for (const [file, line] of old) expect(messageParsingIn(file, line), line).not.toEqual([]);
    // Text from outside is not flagged where it is allow-listed, and comments may quote messages.
    expect(messageParsingIn('ai/provider-error.ts', "  return OVERLOADED_TEXT.test(f.message) ? 'x' : 'y';")).toEqual(
      [],
    );
    expect(messageParsingIn('x.ts', '// "Budget exhausted: ..." is rendered by failureText')).toEqual([]);
  });
});
