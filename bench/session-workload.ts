// The session bench's workload and yardsticks, shared by its phases (bench/session.bench.ts):
// the generated messages (the same in every process), the reference's SessionManager API as the
// bench uses it, and the naive floor (a whole-file read, JSON.parse per line, a Map, a parent walk).
import { readFileSync } from 'node:fs';
import type { AgentMessage } from '../src/agent/types.js';
import type { AssistantMessage } from '../src/ai/types.js';
import { emptyUsage } from '../src/ai/usage.js';
import { seededRandom } from '../test/helpers/seeded-random.js';

export const REF_PACKAGE = '@mariozechner/pi-coding-agent';

// ---- workload -------------------------------------------------------------------------------

const VOCAB = (
  'the function returns a promise that resolves when the file is written and the test checks ' +
  'that every entry keeps its parent id so the context can be rebuilt after a crash while the ' +
  'agent edits src/session/store.ts and runs npm test with vitest in the repository root folder'
).split(' ');

function prose(rand: () => number, bytes: number): string {
  let out = '';
  while (out.length < bytes) out += VOCAB[Math.floor(rand() * VOCAB.length)] + (rand() < 0.08 ? '.\n' : ' ');
  return out;
}

function code(rand: () => number, bytes: number): string {
  let out = '';
  let line = 1;
  while (out.length < bytes) {
    out += `${line++}\texport function step${Math.floor(rand() * 1000)}(input: string): number { return input.length * ${Math.floor(rand() * 97)}; }\n`;
  }
  return out;
}

/** Turn pattern: user, assistant(tool call), tool result, assistant(tool call), tool result, assistant(text). */
export function* workload(count: number): Generator<AgentMessage> {
  const rand = seededRandom(12345); // the same messages in every process
  let t = 1_700_000_000_000;
  const tick = (ms: number): number => {
    t += ms;
    return t;
  };
  const usage = () => {
    const u = emptyUsage();
    u.input = 1000 + Math.floor(rand() * 50_000);
    u.output = 200;
    u.totalTokens = u.input + u.output;
    return u;
  };
  const assistant = (
    content: AssistantMessage['content'],
    stopReason: AssistantMessage['stopReason'],
  ): AssistantMessage => ({
    role: 'assistant',
    content,
    api: 'anthropic-messages',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    usage: usage(),
    stopReason,
    timestamp: tick(900),
  });
  for (let i = 0; i < count; ) {
    const k = i % 6;
    if (k === 0)
      yield {
        role: 'user',
        content: [{ type: 'text', text: prose(rand, 800 + rand() * 900) }],
        timestamp: tick(1000),
      };
    else if (k === 1 || k === 3) {
      const id = `toolu_${i.toString(36)}`;
      const args =
        rand() < 0.5
          ? { path: `src/module${Math.floor(rand() * 300)}/file${i}.ts` }
          : { command: `npm test -- --grep "${prose(rand, 40).trim()}"` };
      yield assistant(
        [
          { type: 'text', text: prose(rand, 600 + rand() * 700) },
          { type: 'toolCall', id, name: 'path' in args ? 'read' : 'bash', arguments: args },
        ],
        'toolUse',
      );
    } else if (k === 2 || k === 4) {
      yield {
        role: 'toolResult',
        toolCallId: `toolu_${(i - 1).toString(36)}`,
        toolName: 'read',
        content: [{ type: 'text', text: code(rand, 900 + rand() * 900) }],
        isError: false,
        timestamp: tick(300),
      };
    } else yield assistant([{ type: 'text', text: prose(rand, 900 + rand() * 800) }], 'stop');
    i++;
  }
}

// ---- the reference's API (checked in bench/node_modules/.../session-manager.d.ts) ----------

export interface RefSessionManager {
  appendMessage(message: AgentMessage): string;
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number): string;
  getEntries(): { id: string; type: string }[];
  getLeafId(): string | null;
  branch(id: string): void;
  buildSessionContext(): { messages: unknown[] };
  getBranch(fromId?: string): { id: string }[];
}
export interface RefModule {
  SessionManager: {
    create(cwd: string, sessionDir?: string): RefSessionManager;
    open(path: string, sessionDir?: string): RefSessionManager;
  };
}

export async function loadReference(): Promise<RefModule> {
  const spec = REF_PACKAGE; // a variable keeps tsc from resolving bench-only node_modules
  return (await import(spec)) as RefModule;
}

// ---- the naive floor -------------------------------------------------------------------------

interface NaiveEntry {
  type: string;
  id: string;
  parentId: string | null;
  message?: AgentMessage;
}
export interface NaiveSession {
  byId: Map<string, NaiveEntry>;
  leaf: string;
}

export function naiveOpen(path: string): NaiveSession {
  const byId = new Map<string, NaiveEntry>();
  let leaf = '';
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as NaiveEntry;
    if (e.type === 'session') continue;
    byId.set(e.id, e);
    leaf = e.id;
  }
  return { byId, leaf };
}

export function naiveContext(s: NaiveSession, leaf: string): AgentMessage[] {
  const out: AgentMessage[] = [];
  for (let e = s.byId.get(leaf); e; e = e.parentId === null ? undefined : s.byId.get(e.parentId))
    if (e.type === 'message') out.push(e.message!);
  return out.reverse();
}
