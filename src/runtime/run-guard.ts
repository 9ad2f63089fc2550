// The per-session bookkeeping behind "an agent can never spend without bound": turns and
// compactions of the current prompt, spend of the session object, the loop detector, and the
// progress judge for compactions. AgentSession asks it at every turn boundary and before every
// compaction; it answers with a warning, a stop, or nothing. Pure state, no I/O.
import { createHash } from 'node:crypto';
import type { AssistantMessage, ToolResultMessage, Usage } from '../ai/types.js';
import { LoopDetector, toolCallSignature, type LoopFinding } from './loop-detector.js';
import { RunStoppedError, type LoopDetectionSettings, type RunLimits } from './run-limits.js';

export interface TurnVerdict {
  /** End the run now with this error. */
  stop?: RunStoppedError;
  /** Tell the model it repeats itself (first detection in this prompt). */
  warn?: LoopFinding;
}

/** The steering text a looping model gets before it is stopped. */
export function loopWarningText(finding: LoopFinding): string {
  return [
    `You are repeating yourself: ${finding.detail}. Repeating it will not give a different result.`,
    'Change your approach (other arguments, another tool, another step), or if you are done or stuck, stop calling tools and answer with what you have and what blocks you.',
    'If you repeat it again, this run will be stopped.',
  ].join(' ');
}

export class RunGuard {
  private turns = 0;
  private compactions = 0;
  private warnedAtTurn: number | undefined;
  private readonly detector: LoopDetector;
  /** Every tool call of this prompt, with a digest of its latest result. */
  private readonly lastResult = new Map<string, string>();
  /** Calls made since the latest compaction. */
  private readonly callsSinceCompaction = new Set<string>();
  private progressSinceCompaction = true;
  private callAfterCompaction = false;
  /** The latest compaction left the context this close to the threshold (share, 0..1+). */
  private lastCompactionFill: number | undefined;
  private spentUsd = 0;
  private spentTokens = 0;

  constructor(
    private readonly loop: LoopDetectionSettings,
    private limitsValue: RunLimits,
  ) {
    this.detector = new LoopDetector(loop);
  }

  get limits(): RunLimits {
    return this.limitsValue;
  }
  setLimits(limits: Partial<RunLimits>): void {
    this.limitsValue = { ...this.limitsValue, ...limits };
  }
  get spend(): { usd: number; tokens: number } {
    return { usd: this.spentUsd, tokens: this.spentTokens };
  }

  /** A new prompt: turn, compaction and loop counts start over; spend does not. */
  beginPrompt(): void {
    this.turns = 0;
    this.compactions = 0;
    this.warnedAtTurn = undefined;
    this.detector.reset();
    this.lastResult.clear();
    this.callsSinceCompaction.clear();
    this.progressSinceCompaction = true;
    this.callAfterCompaction = false;
    this.lastCompactionFill = undefined;
  }

  /** Every model call's usage (turns, retries, summaries). */
  record(usage: Usage): void {
    this.spentUsd += usage.cost.total;
    this.spentTokens += usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  }

  /** The budget error when the spend reached a cap (checked before each model call). */
  budgetStop(): RunStoppedError | undefined {
    const { budgetUsd, budgetTokens } = this.limitsValue;
    if (budgetUsd !== undefined && this.spentUsd >= budgetUsd) {
      return new RunStoppedError(
        'budget',
        `Stopped: the budget of $${budgetUsd} is spent ($${this.spentUsd.toFixed(4)} so far). Raise it with --budget-usd (orchestrate agent) or limits.budgetUsd (SDK).`,
      );
    }
    if (budgetTokens !== undefined && this.spentTokens >= budgetTokens) {
      return new RunStoppedError(
        'budget',
        `Stopped: the budget of ${budgetTokens} tokens is spent (${this.spentTokens} so far). Raise it with --budget-tokens (orchestrate agent) or limits.budgetTokens (SDK).`,
      );
    }
    return undefined;
  }

  /**
   * After a successful reply (its tool calls done): may the loop make another call? A call is
   * progress when it is new, when its result differs from the last time, or when it is a look-up
   * (read, grep, find, ls) repeated for the first time since a compaction (re-reading a file whose
   * content was summarized away is what a model has to do). Redoing a write, or repeating a call
   * since the compaction with an unchanged result, is not.
   */
  afterTurn(message: AssistantMessage, continues: boolean, results: readonly ToolResultMessage[] = []): TurnVerdict {
    this.turns++;
    this.callAfterCompaction = false;
    for (const b of message.content) {
      if (b.type !== 'toolCall') continue;
      const sig = toolCallSignature(b);
      const result = results.find((r) => r.toolCallId === b.id);
      const digest = result ? resultDigest(result) : '';
      const before = this.lastResult.get(sig);
      const reread = LOOKUP_TOOLS.has(b.name) && !this.callsSinceCompaction.has(sig);
      if (before === undefined || before !== digest || reread) this.progressSinceCompaction = true;
      this.lastResult.set(sig, digest);
      this.callsSinceCompaction.add(sig);
    }
    const finding = this.detector.observe(message);
    // A reply that ends the run needs no guard: nothing more will be spent on this prompt.
    if (!continues) return {};
    if (finding) {
      if (this.warnedAtTurn !== undefined) {
        return {
          stop: new RunStoppedError(
            'loop',
            `Stopped: the model kept repeating itself after a warning (${finding.detail}). Loop detection settings: recipe \`loop:\`, orchestrate agent --loop-detection / --max-identical-calls.`,
          ),
        };
      }
      this.warnedAtTurn = this.turns;
      return { warn: finding };
    }
    // Past the grace turns without a repeat, a later, different loop gets its own warning.
    if (this.warnedAtTurn !== undefined && this.turns - this.warnedAtTurn > this.loop.graceTurns)
      this.warnedAtTurn = undefined;
    const max = this.limitsValue.maxTurns;
    if (max > 0 && this.turns >= max) {
      return {
        stop: new RunStoppedError(
          'max_turns',
          `Stopped: ${max} turns in one prompt (the max-turns cap). Raise it with --max-turns N (orchestrate agent) or max_turns (recipe).`,
        ),
      };
    }
    const budget = this.budgetStop();
    return budget ? { stop: budget } : {};
  }

  /**
   * Before an automatic compaction: refuse one that cannot help. `overflow` = the provider said
   * the context is too long.
   */
  beforeCompaction(overflow: boolean, windowShrank = false): RunStoppedError | undefined {
    // An overflow that taught a smaller window is not a sign compaction cannot help: the last
    // one was sized for the larger window.
    if (overflow && this.callAfterCompaction && !windowShrank) {
      return new RunStoppedError(
        'compaction',
        'Stopped: the context was still too long for the model right after a compaction. Start a new session, or give the task in smaller parts.',
      );
    }
    const max = this.limitsValue.maxCompactionsPerPrompt;
    if (this.compactions >= max) {
      return new RunStoppedError(
        'compaction',
        `Stopped: ${max} compactions in one prompt (the compaction cap); the task does not fit the context window. Split it, or use a model with a larger window.`,
      );
    }
    if (this.compactions > 0 && !this.progressSinceCompaction && !windowShrank) {
      return new RunStoppedError(
        'compaction',
        'Stopped: no progress since the last compaction (the model only repeated calls whose results had not changed). Compacting again would loop; split the task or use a model with a larger window.',
      );
    }
    if (
      this.compactions > 0 &&
      !windowShrank &&
      this.lastCompactionFill !== undefined &&
      this.lastCompactionFill > COMPACTION_MAX_FILL
    ) {
      const pct = Math.round(this.lastCompactionFill * 100);
      return new RunStoppedError(
        'compaction',
        `Stopped: the last compaction freed too little (the context was still at ${pct} % of the compaction threshold after it). Compacting again would loop; split the task or use a model with a larger window.`,
      );
    }
    return this.budgetStop();
  }

  /** A compaction happened; `freed` tells how full it left the context (tokens against the threshold). */
  compacted(freed?: { tokensAfter: number; threshold: number }): void {
    this.compactions++;
    this.progressSinceCompaction = false;
    this.callAfterCompaction = true;
    this.callsSinceCompaction.clear();
    this.lastCompactionFill = freed && freed.threshold > 0 ? freed.tokensAfter / freed.threshold : undefined;
  }
}

/** Tools that only look things up: repeating one after a compaction recovers what the summary dropped. */
export const LOOKUP_TOOLS: ReadonlySet<string> = new Set(['read', 'grep', 'find', 'ls']);

/**
 * A compaction that leaves the context above this share of the threshold frees too little: the
 * next turn or two would need another one.
 */
export const COMPACTION_MAX_FILL = 0.85;

function resultDigest(result: ToolResultMessage): string {
  const h = createHash('sha256');
  h.update(result.isError ? 'error\n' : 'ok\n');
  for (const c of result.content) h.update(c.type === 'text' ? c.text : `[image ${c.data.length}]`);
  return h.digest('base64url');
}
