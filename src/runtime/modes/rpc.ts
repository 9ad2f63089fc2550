// RPC mode (`orchestrate agent --mode rpc`): JSON commands on stdin, one per line; responses and
// every session event on stdout, one per line.
//
//   -> {"id":"1","type":"prompt","message":"Fix the test"}
//   <- {"id":"1","type":"response","command":"prompt","success":true}
//   <- {"type":"agent_start"} ... {"type":"agent_end",...}
//
// Every response carries the request's id, errors included (Our decision 9). `prompt` answers at
// once; if the run it started then fails, a second response with the same id reports it. A
// malformed line gets an error response (with the id when one could be read) and the process
// keeps serving. When stdin ends, the mode waits for the running prompt and returns 0.
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { AgentSession } from '../agent-session.js';
import { RUNTIME_DEFAULTS } from '../defaults.js';
import { eventLineWriter, jsonLine, readJsonLines } from './jsonl.js';
import { lastReply, type ModeOutput } from './print.js';

const Id = z.union([z.string(), z.number()]).optional();
const text = (what: string) => z.string({ error: `needs "${what}" (a string)` });

/** Command schemas by type. Extra fields are ignored. */
export const RPC_COMMANDS = {
  prompt: z.object({ message: text('message'), streamingBehavior: z.enum(['steer', 'followUp']).optional() }),
  steer: z.object({ message: text('message') }),
  follow_up: z.object({ message: text('message') }),
  abort: z.object({}),
  compact: z.object({ customInstructions: z.string().optional() }),
  get_state: z.object({}),
  get_messages: z.object({}),
  get_stats: z.object({}),
  get_last_assistant_text: z.object({}),
  get_entries: z.object({}),
  get_commands: z.object({}),
  set_model: z.object({ modelId: text('modelId'), provider: z.string().optional() }),
  set_thinking_level: z.object({ level: z.enum(['off', 'minimal', 'low', 'medium', 'high', 'xhigh']) }),
  fork: z.object({ entryId: text('entryId') }),
  navigate: z.object({
    targetId: text('targetId'),
    summarize: z.boolean().optional(),
    customInstructions: z.string().optional(),
  }),
} as const;

export type RpcCommandType = keyof typeof RPC_COMMANDS;
export const RPC_COMMAND_TYPES = Object.keys(RPC_COMMANDS) as RpcCommandType[];

export type RpcResponse =
  | { id?: string | number; type: 'response'; command: string; success: true; data?: unknown }
  | { id?: string | number; type: 'response'; command: string; success: false; error: string };

/** Best-effort id and type from a line that is not valid JSON, so even that error can be matched. */
export function salvageIdAndType(line: string): { id?: string | number; type?: string } {
  const out: { id?: string | number; type?: string } = {};
  const id = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)/.exec(line);
  if (id) {
    try {
      out.id = JSON.parse(id[1]!) as string | number;
    } catch {
      // not recoverable
    }
  }
  const type = /"type"\s*:\s*"([a-z_]+)"/.exec(line);
  if (type) out.type = type[1];
  return out;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function entryPreview(entry: { type: string; message?: { role: string; content?: unknown } }): {
  role?: string;
  preview?: string;
} {
  if (entry.type !== 'message' || !entry.message) return {};
  const content = entry.message.content;
  let textValue = '';
  if (typeof content === 'string') textValue = content;
  else if (Array.isArray(content))
    textValue = content
      .map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : ''))
      .join('');
  return { role: entry.message.role, preview: textValue.slice(0, 200) };
}

export class RpcServer {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly session: AgentSession,
    private readonly out: ModeOutput,
  ) {}

  private respond(
    id: string | number | undefined,
    command: string,
    result: { data?: unknown } | { error: string },
  ): void {
    const base = id === undefined ? {} : { id };
    const response: RpcResponse =
      'error' in result
        ? { ...base, type: 'response', command, success: false, error: result.error }
        : {
            ...base,
            type: 'response',
            command,
            success: true,
            ...(result.data !== undefined ? { data: result.data } : {}),
          };
    this.out.stdout(jsonLine(response));
  }

  /** Handles one input line; never throws. */
  handleLine(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      const { id, type } = salvageIdAndType(line);
      this.respond(id, type ?? 'parse', {
        error: `Malformed command: ${errorText(err)}. Send one JSON object per line, e.g. {"id":"1","type":"get_state"}.`,
      });
      return;
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      this.respond(undefined, 'parse', {
        error: 'A command must be a JSON object with a "type", e.g. {"id":"1","type":"get_state"}.',
      });
      return;
    }
    const obj = raw as Record<string, unknown>;
    const id = typeof obj.id === 'string' || typeof obj.id === 'number' ? obj.id : undefined;
    const idCheck = Id.safeParse(obj.id);
    const type = typeof obj.type === 'string' ? obj.type : undefined;
    if (!idCheck.success) {
      this.respond(undefined, type ?? 'parse', { error: '"id" must be a string or a number.' });
      return;
    }
    // Own keys only: "__proto__", "constructor" or "toString" are not commands.
    if (!type || !Object.hasOwn(RPC_COMMANDS, type)) {
      const what = type ? `Unknown command "${type}"` : 'The command has no "type"';
      this.respond(id, type ?? 'unknown', { error: `${what}. Valid commands: ${RPC_COMMAND_TYPES.join(', ')}.` });
      return;
    }
    const parsed = RPC_COMMANDS[type as RpcCommandType].safeParse(obj);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
        .join('; ');
      this.respond(id, type, { error: `Invalid ${type} command: ${problems}.` });
      return;
    }
    const work = this.execute(type as RpcCommandType, parsed.data as Record<string, unknown>, id).catch(
      (err: unknown) => {
        this.respond(id, type, { error: errorText(err) });
      },
    );
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  private async execute(
    type: RpcCommandType,
    cmd: Record<string, unknown>,
    id: string | number | undefined,
  ): Promise<void> {
    const s = this.session;
    const ok = (data?: unknown): void => this.respond(id, type, { data });
    switch (type) {
      case 'prompt': {
        const message = cmd.message as string;
        const behavior = cmd.streamingBehavior as 'steer' | 'followUp' | undefined;
        const queued = s.isStreaming;
        if (queued && !behavior) {
          this.respond(id, type, {
            error:
              'The agent is already running: send steer / follow_up, or prompt with "streamingBehavior": "steer" | "followUp".',
          });
          return;
        }
        ok();
        try {
          await s.prompt(message, behavior ? { streamingBehavior: behavior } : {});
        } catch (err) {
          this.respond(id, type, { error: errorText(err) });
          return;
        }
        const last = lastReply(s);
        if (!queued && last?.stopReason === 'error')
          this.respond(id, type, { error: last.errorMessage ?? 'The run failed.' });
        return;
      }
      case 'steer':
        s.steer(cmd.message as string);
        return ok();
      case 'follow_up':
        s.followUp(cmd.message as string);
        return ok();
      case 'abort':
        await s.abort();
        return ok();
      case 'compact':
        return ok(await s.compact(cmd.customInstructions as string | undefined));
      case 'get_state':
        return ok(s.getState());
      case 'get_messages':
        return ok({ messages: s.messages });
      case 'get_stats':
        return ok(s.stats());
      case 'get_last_assistant_text':
        return ok({ text: s.lastAssistantText() });
      case 'get_entries':
        return ok({
          leafId: s.store.leafId,
          entries: s.store.getPath().map((e) => ({
            id: e.id,
            parentId: e.parentId,
            type: e.type,
            timestamp: e.timestamp,
            ...entryPreview(e as never),
          })),
        });
      case 'get_commands':
        return ok({ commands: s.commands });
      case 'set_model': {
        const m = s.setModel(cmd.modelId as string, cmd.provider as string | undefined);
        return ok({ provider: m.provider, id: m.id, contextWindow: m.contextWindow, reasoning: m.reasoning });
      }
      case 'set_thinking_level':
        return ok({ level: s.setThinkingLevel(cmd.level as never) });
      case 'fork':
        return ok(await s.fork(cmd.entryId as string));
      case 'navigate': {
        const opts: { summarize?: boolean; customInstructions?: string } = {};
        if (cmd.summarize !== undefined) opts.summarize = cmd.summarize as boolean;
        if (cmd.customInstructions !== undefined) opts.customInstructions = cmd.customInstructions as string;
        return ok(await s.navigate(cmd.targetId as string, opts));
      }
    }
  }

  /** Resolves when every command received so far has answered. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

/** Serves commands from `input` until it ends, then waits for the session to be idle. */
export async function runRpcMode(session: AgentSession, input: Readable, out: ModeOutput): Promise<number> {
  const server = new RpcServer(session, out);
  const line = eventLineWriter();
  const unsubscribe = session.subscribe((event) => out.stdout(line(event)));
  try {
    await readJsonLines(input, (line) => server.handleLine(line), {
      maxBytes: RUNTIME_DEFAULTS.rpcMaxLineBytes,
      onOversize: (bytes) =>
        out.stdout(
          jsonLine({
            type: 'response',
            command: 'parse',
            success: false,
            error: `Command line too long (${bytes} bytes); the limit is ${RUNTIME_DEFAULTS.rpcMaxLineBytes}.`,
          }),
        ),
    });
    await server.settled();
    await session.waitForIdle();
    await server.settled();
  } finally {
    unsubscribe();
  }
  return 0;
}
