// What command hooks do in a session, event by event, with Claude Code's semantics:
//   exit 0   passes; stdout JSON may decide (decision/reason, hookSpecificOutput.permissionDecision,
//            additionalContext, continue/stopReason; PreToolUse's updatedInput rewrites the call);
//            plain stdout is context for UserPromptSubmit and SessionStart
//   exit 2   blocks, stderr is the reason the model sees: PreToolUse - the tool does not run;
//            PostToolUse - the reason is added to the result; UserPromptSubmit - the prompt is not
//            sent; Stop - the agent goes on once more with the reason as a message
//   other    a warning (reported, the agent goes on); so is a timeout (the hook's group is killed)
// Tool events carry Claude Code's tool names and input shapes (claude-tool-shapes.ts).
// Every run is reported as a `hook_run` session event (the JSON mode shows it).
import type { HookEventName, HooksConfig, CommandHook } from './command-hooks.js';
import { claudeFilePath, claudeToolCalls, productArgs } from './claude-tool-shapes.js';
import { DEFAULT_HOOK_TIMEOUT_SEC, hooksFor } from './command-hooks.js';
import { runHookCommand, type HookRunResult, type HookSandbox } from './hook-runner.js';
import type { AgentSessionHooks } from './session-hooks.js';
import { isRecord } from '../util/unknown-value.js';

/** One hook's run, as a session event. */
export interface HookRunEvent {
  type: 'hook_run';
  hookEvent: HookEventName;
  command: string;
  /** The settings file (or recipe) the hook came from. */
  source?: string;
  toolName?: string;
  toolCallId?: string;
  exitCode: number | null;
  durationMs: number;
  /** passed: exit 0 · blocked: exit 2 or a blocking decision · warning: another code, a timeout or a failure to start. */
  outcome: 'passed' | 'blocked' | 'warning';
  blocked: boolean;
  timedOut: boolean;
  /** The reason (blocked) or the warning text. */
  message?: string;
}

export interface HookSessionOptions {
  config: HooksConfig;
  /** Where hooks run (the session's cwd). */
  cwd: string;
  /** CLAUDE_PROJECT_DIR: the workspace root. */
  projectDir: string;
  sandbox: HookSandbox;
  sessionId: () => string;
  transcriptPath: () => string | undefined;
  emit: (event: HookRunEvent) => void;
  notify: (message: string) => void;
}

/** The combined verdict of the hooks of one event. */
export interface HookVerdict {
  blocked: boolean;
  /** The reasons of the blocking hooks, joined. */
  reason?: string;
  /** additionalContext (and plain stdout where Claude Code uses it as context). */
  context?: string;
  /** PreToolUse: the hooks' updatedInput (Claude Code's shape), merged in hook order. */
  updatedInput?: Record<string, unknown>;
}

/** A PreToolUse verdict on a whole call: `args` are the product's arguments a hook rewrote. */
export interface ToolHookVerdict extends HookVerdict {
  args?: unknown;
}

interface HookOutput {
  decision?: unknown;
  reason?: unknown;
  continue?: unknown;
  stopReason?: unknown;
  hookSpecificOutput?: {
    permissionDecision?: unknown;
    permissionDecisionReason?: unknown;
    additionalContext?: unknown;
    updatedInput?: unknown;
  };
}

function parseOutput(stdout: string): HookOutput | undefined {
  const text = stdout.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as HookOutput) : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** The verdicts of several runs of one event as one: every block reason and context counts. */
function combined(verdicts: readonly HookVerdict[]): HookVerdict {
  const reasons = verdicts.filter((v) => v.blocked).map((v) => v.reason ?? 'Blocked by a hook.');
  const contexts = verdicts.flatMap((v) => (v.context ? [v.context] : []));
  return {
    blocked: reasons.length > 0,
    ...(reasons.length > 0 ? { reason: reasons.join('\n') } : {}),
    ...(contexts.length > 0 ? { context: contexts.join('\n') } : {}),
  };
}

export class HookSession {
  constructor(private readonly o: HookSessionOptions) {}

  has(event: HookEventName): boolean {
    return (this.o.config[event] ?? []).some((g) => g.hooks.length > 0);
  }

  /**
   * The PreToolUse hooks of one call, in Claude Code's shape: once per Claude Code call it amounts
   * to (an edit with several replacements: once per replacement). A block of any stops the call;
   * an updatedInput is mapped back onto the product's arguments (`args` of the verdict).
   */
  async preToolUse(
    toolName: string,
    toolCallId: string,
    args: unknown,
    signal?: AbortSignal,
  ): Promise<ToolHookVerdict> {
    let current = args;
    let rewritten = false;
    const verdicts: HookVerdict[] = [];
    const count = claudeToolCalls(toolName, args, this.o.cwd).length;
    for (let i = 0; i < count; i++) {
      // Derived again from the current arguments: an earlier rewrite (a new file_path) shows in the next.
      const call = claudeToolCalls(toolName, current, this.o.cwd)[i]!;
      const verdict = await this.run('PreToolUse', { ...call, tool_use_id: toolCallId }, signal, {
        toolName,
        toolCallId,
      });
      verdicts.push(verdict);
      if (verdict.blocked) break;
      if (verdict.updatedInput) {
        current = productArgs(toolName, current, i, call, verdict.updatedInput);
        rewritten = true;
      }
    }
    const verdict = combined(verdicts);
    return verdict.blocked || !rewritten ? verdict : { ...verdict, args: current };
  }

  async postToolUse(
    toolName: string,
    toolCallId: string,
    args: unknown,
    resultText: string,
    isError: boolean,
    signal?: AbortSignal,
  ): Promise<HookVerdict> {
    const verdicts: HookVerdict[] = [];
    for (const call of claudeToolCalls(toolName, args, this.o.cwd)) {
      const filePath = claudeFilePath(call);
      const input = {
        ...call,
        tool_response: {
          content: resultText,
          is_error: isError,
          success: !isError,
          ...(filePath !== undefined ? { filePath } : {}),
        },
        tool_use_id: toolCallId,
      };
      verdicts.push(await this.run('PostToolUse', input, signal, { toolName, toolCallId }));
    }
    return combined(verdicts);
  }

  userPromptSubmit(prompt: string, signal?: AbortSignal): Promise<HookVerdict> {
    return this.run('UserPromptSubmit', { prompt }, signal);
  }

  stop(stopHookActive: boolean, lastAssistantMessage: string | undefined, signal?: AbortSignal): Promise<HookVerdict> {
    return this.run(
      'Stop',
      {
        stop_hook_active: stopHookActive,
        ...(lastAssistantMessage !== undefined ? { last_assistant_message: lastAssistantMessage } : {}),
      },
      signal,
    );
  }

  /**
   * An orchestrated instance's agent is done (Claude Code fires SubagentStop when a subagent
   * finishes): `agent_id` is the instance id, `agent_type` the recipe's agent name.
   */
  subagentStop(
    agent: { id: string; type: string },
    stopHookActive: boolean,
    lastAssistantMessage: string | undefined,
    signal?: AbortSignal,
  ): Promise<HookVerdict> {
    const transcript = this.o.transcriptPath();
    return this.run(
      'SubagentStop',
      {
        stop_hook_active: stopHookActive,
        agent_id: agent.id,
        agent_type: agent.type,
        ...(transcript !== undefined ? { agent_transcript_path: transcript } : {}),
        ...(lastAssistantMessage !== undefined ? { last_assistant_message: lastAssistantMessage } : {}),
      },
      signal,
    );
  }

  sessionStart(source: 'startup' | 'resume', signal?: AbortSignal): Promise<HookVerdict> {
    return this.run('SessionStart', { source }, signal);
  }

  /** Runs the event's matching hooks one after the other (all of them: every block reason counts). */
  private async run(
    event: HookEventName,
    fields: Record<string, unknown>,
    signal: AbortSignal | undefined,
    tool?: { toolName: string; toolCallId: string },
  ): Promise<HookVerdict> {
    const hooks = hooksFor(this.o.config, event, tool?.toolName);
    const reasons: string[] = [];
    const contexts: string[] = [];
    let updatedInput: Record<string, unknown> | undefined;
    for (const hook of hooks) {
      const input = {
        session_id: this.o.sessionId(),
        transcript_path: this.o.transcriptPath() ?? null,
        cwd: this.o.cwd,
        permission_mode: 'bypassPermissions',
        hook_event_name: event,
        ...fields,
      };
      const result = await runHookCommand({
        command: hook.command,
        input,
        timeoutSec: hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SEC,
        cwd: this.o.cwd,
        projectDir: this.o.projectDir,
        sandbox: this.o.sandbox,
        ...(signal ? { signal } : {}),
      });
      const verdict = this.interpret(event, hook, result);
      if (verdict.context) contexts.push(verdict.context);
      if (verdict.blocked) reasons.push(verdict.reason ?? `Blocked by a ${event} hook.`);
      if (verdict.updatedInput) updatedInput = { ...updatedInput, ...verdict.updatedInput };
      this.o.emit({
        type: 'hook_run',
        hookEvent: event,
        command: hook.command,
        ...(hook.source ? { source: hook.source } : {}),
        ...(tool ?? {}),
        exitCode: result.exitCode,
        durationMs: result.durationMs,
        outcome: verdict.blocked ? 'blocked' : verdict.warning ? 'warning' : 'passed',
        blocked: verdict.blocked,
        timedOut: result.timedOut,
        ...(verdict.blocked && verdict.reason
          ? { message: verdict.reason }
          : verdict.warning
            ? { message: verdict.warning }
            : {}),
      });
      if (verdict.warning) this.o.notify(`warning: ${verdict.warning}`);
      if (result.aborted) break;
    }
    return {
      blocked: reasons.length > 0,
      ...(reasons.length > 0 ? { reason: reasons.join('\n') } : {}),
      ...(contexts.length > 0 ? { context: contexts.join('\n') } : {}),
      ...(updatedInput && reasons.length === 0 ? { updatedInput } : {}),
    };
  }

  private interpret(event: HookEventName, hook: CommandHook, r: HookRunResult): HookVerdict & { warning?: string } {
    const what = `${event} hook \`${hook.command}\``;
    if (r.spawnError) return { blocked: false, warning: `${what} could not start: ${r.spawnError}` };
    if (r.timedOut)
      return {
        blocked: false,
        warning: `${what} did not finish within ${hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SEC} s and was killed; the agent went on.`,
      };
    if (r.aborted) return { blocked: false, warning: `${what} was stopped: the run was aborted.` };
    if (r.exitCode === 2)
      return { blocked: true, reason: r.stderr.trim() || `Blocked by ${what} (exit 2, no message).` };
    if (r.exitCode !== 0) {
      const said = r.stderr.trim().split('\n').slice(-3).join(' ');
      return {
        blocked: false,
        warning: `${what} exited with ${r.exitCode}${said ? `: ${said}` : ''}; the agent went on.`,
      };
    }
    const json = parseOutput(r.stdout);
    if (!json) {
      // Claude Code adds plain stdout as context for these two events only.
      const text = r.stdout.trim();
      return {
        blocked: false,
        ...((event === 'UserPromptSubmit' || event === 'SessionStart') && text ? { context: text } : {}),
      };
    }
    const specific = json.hookSpecificOutput ?? {};
    const context = str(specific.additionalContext);
    const base = context ? { context } : {};
    if (json.continue === false)
      return { ...base, blocked: true, reason: str(json.stopReason) ?? `Stopped by ${what} (continue: false).` };
    if (event === 'PreToolUse') {
      const decision = specific.permissionDecision;
      const reason = str(specific.permissionDecisionReason) ?? str(json.reason);
      if (decision === 'deny') return { ...base, blocked: true, reason: reason ?? `Denied by ${what}.` };
      // No one to ask here: "ask" is a refusal the model is told about.
      if (decision === 'ask')
        return {
          ...base,
          blocked: true,
          reason: `${reason ?? `${what} asked for approval`} (this agent runs unattended, so the call was not made).`,
        };
      if (json.decision === 'block') return { ...base, blocked: true, reason: reason ?? `Blocked by ${what}.` };
      // The call goes on with the input the hook rewrote (mapped back to our arguments by the caller).
      const updated = specific.updatedInput;
      return { ...base, blocked: false, ...(isRecord(updated) ? { updatedInput: updated } : {}) };
    }
    if (json.decision === 'block') return { ...base, blocked: true, reason: str(json.reason) ?? `Blocked by ${what}.` };
    return { ...base, blocked: false };
  }
}

/** The blocked prompt of a UserPromptSubmit hook; prompt() rejects with it and nothing is sent. */
export class PromptBlockedError extends Error {
  constructor(readonly reason: string) {
    super(`The prompt was blocked by a UserPromptSubmit hook: ${reason}`);
    this.name = 'PromptBlockedError';
  }
}

function resultText(content: readonly { type: string; text?: string }[]): string {
  return content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('');
}

/**
 * The session's tool hooks with PreToolUse / PostToolUse command hooks added after the host's
 * own: a host block wins; a hook block becomes the error result the model sees; a PostToolUse
 * block or context is appended to the result.
 */
export function withCommandToolHooks(hooks: AgentSessionHooks, session: HookSession): AgentSessionHooks {
  if (!session.has('PreToolUse') && !session.has('PostToolUse')) return hooks;
  return {
    ...hooks,
    beforeToolCall: async (ctx, signal) => {
      const host = await hooks.beforeToolCall?.(ctx, signal);
      if (host?.block) return host;
      if (!session.has('PreToolUse')) return host;
      const args = host?.args !== undefined ? host.args : ctx.args;
      const verdict = await session.preToolUse(ctx.toolCall.name, ctx.toolCall.id, args, signal);
      if (verdict.blocked) return { block: true, reason: `Blocked by a PreToolUse hook: ${verdict.reason}` };
      return verdict.args !== undefined ? { ...host, args: verdict.args } : host;
    },
    afterToolCall: async (ctx, signal) => {
      const host = await hooks.afterToolCall?.(ctx, signal);
      if (!session.has('PostToolUse')) return host;
      const content = host?.content ?? ctx.result.content;
      const isError = host?.isError ?? ctx.isError;
      const verdict = await session.postToolUse(
        ctx.toolCall.name,
        ctx.toolCall.id,
        ctx.args,
        resultText(content),
        isError,
        signal,
      );
      const notes: string[] = [];
      if (verdict.blocked) notes.push(`PostToolUse hook: ${verdict.reason}`);
      if (verdict.context) notes.push(`PostToolUse hook context: ${verdict.context}`);
      if (notes.length === 0) return host;
      return { ...host, content: [...content, { type: 'text', text: notes.join('\n') }] };
    },
  };
}
