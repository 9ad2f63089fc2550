// What a child agent is doing, folded from its own events (agent_event: the runtime's
// AgentSessionEvent forwarded as-is): turns, tools running now, activity (responding,
// compacting, model retries) and the usage its assistant messages report. Part of the run fold
// (run-fold.ts), kept apart because it reads the runtime's events loosely.
import { addUsageSummary, type UsageSummary } from './run-events.js';
import type { AttemptRecord, InstanceState } from './run-fold.js';
import { countsAsTurn } from './turn-count.js';

/** A loosely typed child event: the runtime's AgentSessionEvent, forwarded as-is through the log. */
export type ChildEvent = { type: string } & Record<string, unknown>;

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The usage of an assistant message as a run-level summary (cost is the message's cost.total). */
function messageUsage(message: unknown): UsageSummary | undefined {
  if (!message || typeof message !== 'object') return undefined;
  const m = message as { role?: unknown; usage?: Record<string, unknown> };
  if (m.role !== 'assistant' || !m.usage || typeof m.usage !== 'object') return undefined;
  const u = m.usage;
  const cost = u.cost && typeof u.cost === 'object' ? num((u.cost as Record<string, unknown>).total) : num(u.cost);
  return {
    input: num(u.input),
    output: num(u.output),
    cacheRead: num(u.cacheRead),
    cacheWrite: num(u.cacheWrite),
    totalTokens: num(u.totalTokens) || num(u.input) + num(u.output) + num(u.cacheRead) + num(u.cacheWrite),
    cost,
    turns: 0,
  };
}

/** A short hint of what a tool call works on: its path, command or pattern argument. */
export function toolHint(toolName: string, args: unknown): string {
  if (!args || typeof args !== 'object') return toolName;
  const a = args as Record<string, unknown>;
  for (const k of ['path', 'file_path', 'command', 'pattern', 'query', 'url', 'to']) {
    const v = a[k];
    if (typeof v === 'string' && v !== '') return `${toolName} ${v.replace(/\s+/g, ' ')}`;
  }
  return toolName;
}

export function applyChildEvent(inst: InstanceState, rec: AttemptRecord, ev: ChildEvent): void {
  switch (ev.type) {
    case 'turn_start':
      inst.activity = undefined;
      break;
    case 'turn_end':
      if (countsAsTurn(ev.stopReason)) rec.turns++;
      break;
    case 'message_start':
      // The coordinator slims an assistant message_start to {type, role}.
      if (ev.role === 'assistant' || (ev.message as { role?: unknown } | undefined)?.role === 'assistant')
        inst.activity = 'responding';
      break;
    case 'message_end': {
      const u = messageUsage(ev.message);
      if (u) {
        rec.messageUsage = addUsageSummary(rec.messageUsage, u);
        if (inst.activity === 'responding') inst.activity = undefined;
      }
      break;
    }
    case 'tool_execution_start': {
      const id = typeof ev.toolCallId === 'string' ? ev.toolCallId : String(inst.runningTools.size);
      inst.runningTools.set(id, toolHint(String(ev.toolName ?? 'tool'), ev.args));
      inst.activity = undefined;
      break;
    }
    case 'tool_execution_end':
      if (typeof ev.toolCallId === 'string') inst.runningTools.delete(ev.toolCallId);
      else inst.runningTools.clear();
      inst.toolCalls++;
      break;
    case 'auto_compaction_start':
    case 'compaction_start':
      inst.activity = 'compacting';
      break;
    case 'auto_compaction_end':
    case 'compaction_end':
    case 'auto_retry_end':
      inst.activity = undefined;
      break;
    case 'notice':
      // Warnings about the agent (an optional MCP server it goes without) stay in show and the report.
      if (typeof ev.text === 'string' && ev.text.startsWith('warning: ')) {
        inst.warnings ??= [];
        if (!inst.warnings.includes(ev.text)) inst.warnings.push(ev.text);
      }
      break;
    case 'auto_retry_start':
      inst.activity = `model retry ${num(ev.attempt)}/${num(ev.maxAttempts)} in ${Math.round(num(ev.delayMs) / 100) / 10}s`;
      break;
    default:
      break;
  }
}
