// The tool pipeline: prepare (repair arguments) -> validate (zod) -> beforeToolCall -> execute ->
// afterToolCall. Every failure at every stage becomes ONE error tool result the model can act on;
// nothing throws out of here. Results are appended and emitted strictly in call order, whatever
// order the executions finish in and however many calls failed before executing.
import type { AssistantMessage, ToolCall, ToolResultMessage } from '../ai/types.js';
import { agentDefaults, BLOCKED_DEFAULT_TEXT, SKIPPED_FOR_ABORT_TEXT, SKIPPED_FOR_STEERING_TEXT } from './defaults.js';
import { prepareArguments } from './prepare-arguments.js';
import { invalidArgumentsText, thrownText, unknownToolText } from './tool-error-text.js';
import type {
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentToolResult,
  AnyAgentTool,
} from './types.js';

export type ToolPipelineConfig = Pick<AgentLoopConfig, 'beforeToolCall' | 'afterToolCall' | 'getSteeringMessages'>;

export interface ToolBatchResult {
  /** One per tool call, in call order. */
  results: ToolResultMessage[];
  /** Steering messages that arrived during the batch (they caused the skipped calls). */
  steering: AgentMessage[];
  /** True when every result asked the loop to stop. */
  terminate: boolean;
}

interface Outcome {
  result: AgentToolResult;
  isError: boolean;
}

/** A call that passed stages 1-3 and may execute. */
interface ReadyCall {
  tool: AnyAgentTool;
  args: unknown;
}

type Slot = Outcome | ReadyCall | Promise<Outcome>;

/**
 * Runs the tool calls of one assistant message. If any called tool is `sequential`, calls run
 * one at a time with a steering poll between them; otherwise all are prepared in call order
 * (polling steering after each preparation) and then executed concurrently, except that calls of
 * tools sharing a `serialGroup` run one after another in call order.
 */
export async function executeToolCalls(
  assistantMessage: AssistantMessage,
  toolCalls: readonly ToolCall[],
  context: AgentContext,
  config: ToolPipelineConfig,
  signal: AbortSignal,
  emit: (event: AgentEvent) => void,
): Promise<ToolBatchResult> {
  const run = new BatchRun(assistantMessage, context, config, signal, emit);
  const sequential = toolCalls.some((call) => findTool(context.tools, call.name)?.sequential === true);
  return sequential ? run.sequential(toolCalls) : run.parallel(toolCalls);
}

class BatchRun {
  constructor(
    private readonly assistantMessage: AssistantMessage,
    private readonly context: AgentContext,
    private readonly config: ToolPipelineConfig,
    private readonly signal: AbortSignal,
    private readonly emit: (event: AgentEvent) => void,
  ) {}

  async sequential(calls: readonly ToolCall[]): Promise<ToolBatchResult> {
    const outcomes: Outcome[] = [];
    const results: ToolResultMessage[] = [];
    let steering: AgentMessage[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      this.emitStart(call);
      let outcome: Outcome;
      if (this.signal.aborted) outcome = errorOutcome(SKIPPED_FOR_ABORT_TEXT);
      else {
        const prepared = this.prepare(call);
        const slot = prepared instanceof Promise ? await prepared : prepared;
        outcome = isReady(slot) ? await this.execute(call, slot) : slot;
      }
      outcomes.push(outcome);
      results.push(this.emitOutcome(call, outcome));
      if (i < calls.length - 1) {
        steering = await this.pollSteering();
        if (steering.length > 0) {
          for (let j = i + 1; j < calls.length; j++) {
            const skipped = calls[j]!;
            this.emitStart(skipped);
            const skip = errorOutcome(SKIPPED_FOR_STEERING_TEXT);
            outcomes.push(skip);
            results.push(this.emitOutcome(skipped, skip));
          }
          break;
        }
      }
    }
    return { results, steering, terminate: allTerminate(outcomes) };
  }

  async parallel(calls: readonly ToolCall[]): Promise<ToolBatchResult> {
    const slots: Slot[] = new Array<Slot>(calls.length);
    let steering: AgentMessage[] = [];
    // Preflight: start events, stages 1-3, in call order.
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      this.emitStart(call);
      const prepared = this.signal.aborted ? errorOutcome(SKIPPED_FOR_ABORT_TEXT) : this.prepare(call);
      slots[i] = prepared instanceof Promise ? await prepared : prepared;
      if (this.config.getSteeringMessages) steering = await this.pollSteering();
      if (steering.length > 0) {
        // Prepared calls never started: skip them without a second start event.
        for (let k = 0; k <= i; k++) if (isReady(slots[k]!)) slots[k] = errorOutcome(SKIPPED_FOR_STEERING_TEXT);
        for (let j = i + 1; j < calls.length; j++) {
          this.emitStart(calls[j]!);
          slots[j] = errorOutcome(SKIPPED_FOR_STEERING_TEXT);
        }
        break;
      }
    }
    // Start every ready execution before awaiting any, so they overlap; calls of one serial group
    // wait for the group's previous call instead (execute never rejects, so a chain never breaks).
    const groupTails = new Map<string, Promise<Outcome>>();
    for (let i = 0; i < calls.length; i++) {
      const slot = slots[i]!;
      if (!isReady(slot)) continue;
      if (this.signal.aborted) {
        slots[i] = errorOutcome(SKIPPED_FOR_ABORT_TEXT);
        continue;
      }
      const call = calls[i]!;
      const group = slot.tool.serialGroup;
      const before = group === undefined ? undefined : groupTails.get(group);
      const run = before
        ? before.then(() => (this.signal.aborted ? errorOutcome(SKIPPED_FOR_ABORT_TEXT) : this.execute(call, slot)))
        : this.execute(call, slot);
      if (group !== undefined) groupTails.set(group, run);
      slots[i] = run;
    }
    const outcomes: Outcome[] = [];
    const results: ToolResultMessage[] = [];
    for (let i = 0; i < calls.length; i++) {
      const outcome = await (slots[i] as Outcome | Promise<Outcome>);
      outcomes.push(outcome);
      results.push(this.emitOutcome(calls[i]!, outcome));
    }
    return { results, steering, terminate: allTerminate(outcomes) };
  }

  /**
   * Stages 1-3. Returns a ready call, or the outcome that ends the call here. Without a
   * beforeToolCall hook nothing is awaited (a promise only when the hook runs): one microtask
   * trip less per call.
   */
  private prepare(call: ToolCall): Outcome | ReadyCall | Promise<Outcome | ReadyCall> {
    const checked = this.validate(call);
    return this.config.beforeToolCall && isReady(checked) ? this.askBefore(call, checked) : checked;
  }

  /** Stages 1-2: the tool exists, its arguments are repaired and valid. */
  private validate(call: ToolCall): Outcome | ReadyCall {
    const tool = findTool(this.context.tools, call.name);
    if (!tool)
      return errorOutcome(
        unknownToolText(
          call.name,
          this.context.tools.map((t) => t.name),
        ),
      );

    try {
      const prepared = prepareArguments(tool, call.arguments);
      const parsed = tool.parameters.safeParse(prepared.args);
      if (!parsed.success)
        return errorOutcome(invalidArgumentsText(tool.name, parsed.error.issues, prepared.args, call.arguments));
      return { tool, args: parsed.data };
    } catch (err) {
      // A refinement or transform in the schema threw: report it like any validation failure.
      return errorOutcome(`Invalid arguments for tool "${tool.name}": ${thrownText(err)}`);
    }
  }

  /** Stage 3: the beforeToolCall hook may block the call. */
  private async askBefore(call: ToolCall, ready: ReadyCall): Promise<Outcome | ReadyCall> {
    const before = this.config.beforeToolCall!;
    try {
      const verdict = await before(
        { assistantMessage: this.assistantMessage, toolCall: call, args: ready.args, context: this.context },
        this.signal,
      );
      if (verdict?.block) return errorOutcome(verdict.reason || BLOCKED_DEFAULT_TEXT);
      if (verdict?.args !== undefined) return revalidated(ready.tool, verdict.args);
    } catch (err) {
      // Fail closed: a broken policy hook must not let the call through.
      return errorOutcome(thrownText(err));
    }
    return ready;
  }

  /** Stages 4-5. */
  private async execute(call: ToolCall, ready: ReadyCall): Promise<Outcome> {
    let settled = false;
    const onUpdate = (partialResult: AgentToolResult): void => {
      // Updates after the call finished would arrive after its end event; drop them.
      if (settled) return;
      this.emit({
        type: 'tool_execution_update',
        toolCallId: call.id,
        toolName: call.name,
        args: call.arguments,
        partialResult,
      });
    };
    let outcome: Outcome;
    try {
      const result: unknown = await ready.tool.execute(call.id, ready.args, this.signal, onUpdate);
      outcome = isToolResult(result)
        ? { result, isError: false }
        : errorOutcome(`Tool "${call.name}" returned an invalid result: expected an object with a "content" array.`);
    } catch (err) {
      outcome = errorOutcome(thrownText(err));
    }
    settled = true;

    const after = this.config.afterToolCall;
    if (!after) return outcome;
    try {
      const override = await after(
        {
          assistantMessage: this.assistantMessage,
          toolCall: call,
          args: ready.args,
          context: this.context,
          result: outcome.result,
          isError: outcome.isError,
        },
        this.signal,
      );
      if (!override) return outcome;
      // Overrides replace fields wholesale; omitted fields keep the executed values.
      const result: AgentToolResult = { ...outcome.result };
      if (override.content !== undefined) result.content = override.content;
      if (override.details !== undefined) result.details = override.details;
      if (override.terminate !== undefined) result.terminate = override.terminate;
      return { result, isError: override.isError ?? outcome.isError };
    } catch (err) {
      return errorOutcome(thrownText(err));
    }
  }

  private async pollSteering(): Promise<AgentMessage[]> {
    const poll = this.config.getSteeringMessages;
    if (!poll) return [];
    return (await poll()) ?? [];
  }

  private emitStart(call: ToolCall): void {
    this.emit({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, args: call.arguments });
  }

  private emitOutcome(call: ToolCall, outcome: Outcome): ToolResultMessage {
    this.emit({
      type: 'tool_execution_end',
      toolCallId: call.id,
      toolName: call.name,
      result: outcome.result,
      isError: outcome.isError,
    });
    const message: ToolResultMessage = {
      role: 'toolResult',
      toolCallId: call.id,
      toolName: call.name,
      content: outcome.result.content,
      details: outcome.result.details,
      isError: outcome.isError,
      timestamp: Date.now(),
    };
    this.emit({ type: 'message_start', message });
    this.emit({ type: 'message_end', message });
    return message;
  }
}

function findTool(tools: readonly AnyAgentTool[], name: string): AnyAgentTool | undefined {
  for (const tool of tools) if (tool.name === name) return tool;
  return undefined;
}

function isReady(slot: Slot): slot is ReadyCall {
  return 'tool' in slot;
}

function isToolResult(value: unknown): value is AgentToolResult {
  return typeof value === 'object' && value !== null && Array.isArray((value as AgentToolResult).content);
}

function errorOutcome(text: string): Outcome {
  return { result: { content: [{ type: 'text', text: boundErrorText(text) }], details: {} }, isError: true };
}

/** Keeps the head and the tail of a runaway error text (the cause is usually at one end). */
export function boundErrorText(text: string, max: number = agentDefaults.maxErrorTextChars): string {
  if (text.length <= max) return text;
  const keep = Math.floor((max - 80) / 2);
  return `${text.slice(0, keep)}\n… [${text.length - 2 * keep} characters of this error text cut] …\n${text.slice(-keep)}`;
}

function allTerminate(outcomes: readonly Outcome[]): boolean {
  return outcomes.length > 0 && outcomes.every((o) => o.result.terminate === true);
}

/** Arguments a beforeToolCall hook replaced: held to the tool's schema like the model's own. */
function revalidated(tool: AnyAgentTool, args: unknown): Outcome | ReadyCall {
  const prepared = prepareArguments(tool, args);
  const parsed = tool.parameters.safeParse(prepared.args);
  if (parsed.success) return { tool, args: parsed.data };
  return errorOutcome(
    `A hook rewrote the arguments of "${tool.name}" into invalid ones; the call was not made. ${invalidArgumentsText(tool.name, parsed.error.issues, prepared.args, args)}`,
  );
}
