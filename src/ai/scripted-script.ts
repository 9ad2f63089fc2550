// Script files for the scripted provider (YAML or JSON), used by `--provider scripted --script FILE`
// and by recipes that run offline. Format:
//
//   # either a bare list of turns, or a map:
//   turns: [...]                 # the default conversation
//   conversations:               # optional; the first whose regex matches wins
//     - match: "Rename .* in (\\S+)"   # tested on the first user message + "\n" + system prompt
//       flags: i                 # optional regex flags (i, m, s, u)
//       turns: [...]
//
//   # a turn (keys combine; at least one of text / thinking / tools / error):
//   - text: "final answer"                       # a text reply (stop)
//   - thinking: "..."                            # streamed before the text
//     text: "optional text"
//     tools:                                     # tool calls (stop reason toolUse)
//       - { name: edit, args: { path: a.txt, edits: [{ oldText: x, newText: y }] }, id: optional }
//   - error: "overloaded_error: Overloaded"      # an error turn; fires once per provider
//     stop_reason: error                         # or aborted
//     after_blocks: 1                            # stream this many blocks of the turn first
//   - delay_ms: 50                               # wait before replying (any turn)
//     text: "slow"
//   - stream_delay_ms: 100                       # wait before each streamed chunk (a reply written slowly)
//     text: "written over a few seconds"
//   stop_reason on a reply may be stop, length or toolUse.
//
// Strings may use {{match.1}} or {{match.name}}: capture groups of the conversation's regex.
// Turn selection is described in scripted.ts.
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import {
  createScriptedProvider,
  type ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedScript,
  type ScriptedTurnSpec,
} from './scripted.js';

const ToolCallFile = z.strictObject({
  name: z.string().min(1, 'a tool call needs a name'),
  args: z.record(z.string(), z.unknown()).optional(),
  id: z.string().min(1).optional(),
});

const TurnFile = z
  .strictObject({
    text: z.string().optional(),
    thinking: z.string().optional(),
    tools: z.array(ToolCallFile).optional(),
    error: z.string().min(1).optional(),
    stop_reason: z.enum(['stop', 'length', 'toolUse', 'error', 'aborted']).optional(),
    after_blocks: z.number().int().min(0).optional(),
    delay_ms: z.number().int().min(0).optional(),
    stream_delay_ms: z.number().int().min(0).optional(),
  })
  .superRefine((t, ctx) => {
    if (t.text === undefined && t.thinking === undefined && t.tools === undefined && t.error === undefined) {
      ctx.addIssue({ code: 'custom', message: 'a turn needs at least one of text, thinking, tools or error' });
    }
    const failing = t.stop_reason === 'error' || t.stop_reason === 'aborted';
    if (t.error === undefined && failing) {
      ctx.addIssue({
        code: 'custom',
        path: ['stop_reason'],
        message: `stop_reason "${t.stop_reason}" needs an error text (error: "...")`,
      });
    }
    if (t.error !== undefined && t.stop_reason !== undefined && !failing) {
      ctx.addIssue({
        code: 'custom',
        path: ['stop_reason'],
        message: 'an error turn ends with stop_reason error or aborted',
      });
    }
    if (t.error === undefined && t.after_blocks !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['after_blocks'], message: 'after_blocks only applies to error turns' });
    }
  });

const TurnsFile = z.array(TurnFile);

const ConversationFile = z
  .strictObject({
    match: z.string().min(1),
    flags: z
      .string()
      .regex(/^[imsu]*$/, 'flags may only contain i, m, s, u')
      .optional(),
    turns: TurnsFile,
  })
  .superRefine((c, ctx) => {
    try {
      new RegExp(c.match, c.flags);
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        path: ['match'],
        message: `invalid regular expression: ${(err as Error).message}`,
      });
    }
  });

const ScriptMapFile = z
  .strictObject({ turns: TurnsFile.optional(), conversations: z.array(ConversationFile).optional() })
  .refine((s) => s.turns !== undefined || s.conversations !== undefined, 'a script needs turns or conversations');

type TurnFileT = z.infer<typeof TurnFile>;

/** A script file that cannot be used; `message` lists every problem with file:line:col. */
export class ScriptFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`Invalid script file ${file}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ScriptFileError';
  }
}

function toTurn(t: TurnFileT): ScriptedTurnSpec {
  const base = {
    text: t.text,
    thinking: t.thinking,
    tools: t.tools?.map((c) => ({ name: c.name, args: c.args ?? {}, id: c.id })),
    delayMs: t.delay_ms,
    ...(t.stream_delay_ms !== undefined ? { chunkDelayMs: t.stream_delay_ms } : {}),
  };
  if (t.error !== undefined) {
    return {
      ...base,
      error: t.error,
      stopReason: t.stop_reason === 'aborted' ? 'aborted' : 'error',
      afterBlocks: t.after_blocks,
    };
  }
  const stopReason =
    t.stop_reason === 'stop' || t.stop_reason === 'length' || t.stop_reason === 'toolUse' ? t.stop_reason : undefined;
  return { ...base, stopReason };
}

/** "conversations[1] turn 3: tools[0].name" — says which turn, then where inside it. */
function describePath(path: readonly PropertyKey[]): string {
  const parts: string[] = [];
  let i = 0;
  let inner = '';
  while (i < path.length) {
    const seg = path[i];
    const next = path[i + 1];
    if (seg === 'conversations' && typeof next === 'number') {
      parts.push(`conversations[${next}]`);
      i += 2;
    } else if (seg === 'turns' && typeof next === 'number') {
      parts.push(`turn ${next}`);
      i += 2;
    } else if (typeof seg === 'number' && i === 0) {
      parts.push(`turn ${seg}`);
      i += 1;
    } else {
      inner += typeof seg === 'number' ? `[${seg}]` : `${inner ? '.' : ''}${String(seg)}`;
      i += 1;
    }
  }
  return [parts.join(' '), inner].filter(Boolean).join(': ');
}

/** line:col of the deepest node on the path (a key node for unknown keys). */
function locate(doc: Document, lc: LineCounter, path: readonly PropertyKey[], key?: string): string {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : (doc.getIn(path.slice(0, n) as unknown[], true) as unknown);
    if (!node || typeof node !== 'object' || !('range' in node)) continue;
    let offset = (node as { range?: [number, number, number] }).range?.[0];
    if (key !== undefined && n === path.length && isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
      const r = pair && isScalar(pair.key) ? pair.key.range : undefined;
      if (r) offset = r[0];
    }
    if (offset === undefined) continue;
    const pos = lc.linePos(offset);
    return `${pos.line}:${pos.col}`;
  }
  return '1:1';
}

/** Parses script text (YAML or JSON); `file` names the source in errors. */
export function parseScript(source: string, file = '<script>'): ScriptedScript {
  const lc = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    throw new ScriptFileError(
      file,
      doc.errors.map(
        (e) =>
          `${file}:${e.linePos?.[0]?.line ?? 1}:${e.linePos?.[0]?.col ?? 1}: ${e.code}: ${e.message.split('\n')[0]}`,
      ),
    );
  }
  const data: unknown = doc.toJS();
  if (data === null || data === undefined)
    throw new ScriptFileError(file, [`${file}: the script is empty; write a list of turns or a map with turns:`]);
  const parsed = Array.isArray(data) ? TurnsFile.safeParse(data) : ScriptMapFile.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
      const where = locate(doc, lc, issue.path, keys[0]);
      const path = describePath(issue.path);
      const message = keys.length
        ? `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}`
        : issue.message;
      return `${file}:${where}: ${path ? `${path}: ` : ''}${message}`;
    });
    throw new ScriptFileError(file, problems);
  }
  if (Array.isArray(parsed.data)) return { turns: parsed.data.map(toTurn) };
  const map = parsed.data as z.infer<typeof ScriptMapFile>;
  return {
    turns: (map.turns ?? []).map(toTurn),
    conversations: map.conversations?.map((c) => ({ match: new RegExp(c.match, c.flags), turns: c.turns.map(toTurn) })),
  };
}

/** Reads and validates a script file; throws ScriptFileError with file:line:col and turn numbers. */
export function loadScriptFile(path: string): ScriptedScript {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ScriptFileError(path, [`${path}: cannot read the script file: ${(err as Error).message}`]);
  }
  return parseScript(text, path);
}

/** A scripted provider for a script file. */
export function scriptedProviderFromFile(path: string, options?: ScriptedProviderOptions): ScriptedProvider {
  return createScriptedProvider(loadScriptFile(path), options);
}
