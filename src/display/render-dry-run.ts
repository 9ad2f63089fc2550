// The dry-run report as text: recipe header, the plan as a tree by level, the estimate table, and
// the MCP lines (which servers each agent gets; with --list-mcp their tools). The data comes from
// recipe/ (the plan) and service/dry-run.ts (the MCP part, whose shape is declared here).
import type { DryRunReport, PlanTask, TaskEstimate } from '../recipe/index.js';

/** Instances listed under a fan-out before the rest are summarised. */
const MAX_INSTANCES_SHOWN = 12;

export function formatCount(n: number): string {
  if (n < 1_000) return String(Math.round(n));
  if (n < 10_000) return `${(n / 1_000).toFixed(1).replace(/\.0$/, '')}k`;
  if (n < 1_000_000) return `${Math.round(n / 1_000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

const usd = (n: number) => `$${n.toFixed(2)}`;
const range = (low: number, high: number, fmt: (n: number) => string) =>
  fmt(low) === fmt(high) ? fmt(low) : `${fmt(low)}-${fmt(high)}`;

function describeItem(item: unknown): string {
  const text = typeof item === 'string' ? JSON.stringify(item) : (JSON.stringify(item) ?? String(item));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function taskLine(t: PlanTask, report: DryRunReport): string {
  const model = (name: string) => report.recipe.agents.find((a) => a.name === name)?.model ?? report.recipe.model;
  let what: string;
  if (t.kind === 'run') what = 'shell step';
  else if (t.kind === 'pair')
    what = `pair: planner ${t.agents[0]} (${model(t.agents[0]!)}) + worker ${t.agents[1]} (${model(t.agents[1]!)})`;
  else what = `agent ${t.agents[0]} (${model(t.agents[0]!)})`;
  const needs = t.needs.length ? `  needs: ${t.needs.join(', ')}` : '';
  const attempts = t.attempts ? `  attempts: ${t.attempts.count} per instance (pick: ${t.attempts.pick})` : '';
  return `${t.id}  ${what}${needs}${attempts}`;
}

function renderPlan(report: DryRunReport): string[] {
  const { plan } = report;
  const lines: string[] = [];
  const dynamicCount = plan.tasks.filter((t) => t.fanOut === 'dynamic').length;
  const known = `${plan.instanceCount} instance${plan.instanceCount === 1 ? '' : 's'}`;
  lines.push(
    `Plan: ${plan.tasks.length} task${plan.tasks.length === 1 ? '' : 's'} in ${plan.levels.length} level${plan.levels.length === 1 ? '' : 's'}, ${known}${dynamicCount ? ` + ${dynamicCount} fan-out${dynamicCount === 1 ? '' : 's'} expanded during the run` : ''}`,
  );
  lines.push('(a level runs after the levels above it; its tasks and instances can run in parallel)');
  for (const level of plan.levels) {
    const count = `${level.instances} instance${level.instances === 1 ? '' : 's'}`;
    const width = level.dynamic
      ? level.instances
        ? `${count} + a fan-out expanded during the run`
        : 'known during the run'
      : count;
    lines.push(`level ${level.level}  width: ${width}`);
    level.tasks.forEach((id, i) => {
      const t = plan.tasks.find((p) => p.id === id)!;
      const lastTask = i === level.tasks.length - 1;
      lines.push(`${lastTask ? '└─' : '├─'} ${taskLine(t, report)}`);
      const pad = lastTask ? '   ' : '│  ';
      if (t.fanOut === 'dynamic' && t.dynamic!.sources.length === 0) {
        lines.push(`${pad}└─ for_each ${t.dynamic!.expression}: expanded when it starts (the board's open items then)`);
      } else if (t.fanOut === 'dynamic') {
        lines.push(
          `${pad}└─ for_each ${t.dynamic!.expression}: expanded when ${t.dynamic!.sources.join(', ')} finish${t.dynamic!.sources.length === 1 ? 'es' : ''}`,
        );
      } else if (t.fanOut === 'static') {
        const shown = t.instances.slice(0, MAX_INSTANCES_SHOWN);
        lines.push(`${pad}for_each: ${t.instances.length} instance${t.instances.length === 1 ? '' : 's'}`);
        shown.forEach((inst, j) => {
          const last = j === shown.length - 1 && t.instances.length <= MAX_INSTANCES_SHOWN;
          lines.push(`${pad}${last ? '└─' : '├─'} ${inst.id}  item ${describeItem(inst.item)}`);
        });
        if (t.instances.length > MAX_INSTANCES_SHOWN)
          lines.push(`${pad}└─ ... and ${t.instances.length - MAX_INSTANCES_SHOWN} more`);
      }
    });
  }
  return lines;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd(),
  );
}

function estimateRow(t: TaskEstimate): string[] {
  const instances = range(t.instances.low, t.instances.high, String) + (t.instancesKnown ? '' : '?');
  return [
    t.taskId,
    t.models.length ? t.models.join(' + ') : '-',
    instances,
    range(t.inputTokens.low, t.inputTokens.high, formatCount),
    range(t.outputTokens.low, t.outputTokens.high, formatCount),
    t.kind === 'run' ? '-' : range(t.usd.low, t.usd.high, usd),
  ];
}

function renderEstimate(report: DryRunReport): string[] {
  const { estimate } = report;
  const rows = [
    ['task', 'model', 'instances', 'input tokens', 'output tokens', 'cost (USD)'],
    ...estimate.tasks.map(estimateRow),
  ];
  const t = estimate.total;
  rows.push([
    'total',
    '',
    '',
    range(t.inputTokens.low, t.inputTokens.high, formatCount),
    range(t.outputTokens.low, t.outputTokens.high, formatCount),
    range(t.usd.low, t.usd.high, usd),
  ]);
  const lines = ['Estimate (no model was called):', ...table(rows).map((l) => `  ${l}`)];
  const notes = estimate.tasks.flatMap((e) => e.notes.map((n) => `  ${e.taskId}: ${n}`));
  if (notes.length) lines.push('Notes:', ...notes);
  lines.push('How this is estimated:', ...estimate.heuristic.map((h) => `  - ${h}`));
  return lines;
}

/** The whole dry-run report as text, ending with a newline. */
export function renderDryRun(report: DryRunReport, mcpLines?: string[]): string {
  const r = report.recipe;
  const budget = [
    r.budget.usd !== undefined ? `$${r.budget.usd}` : '',
    r.budget.tokens !== undefined ? `${formatCount(r.budget.tokens)} tokens` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const lines = [`Recipe ${r.name}  (${r.file})`];
  if (r.description) lines.push(`  ${r.description.trim().split('\n')[0]}`);
  lines.push(`  model ${r.model}, provider ${r.provider}, concurrency ${r.concurrency}, budget ${budget || 'none'}`);
  const inputs = Object.entries(r.inputs);
  if (inputs.length)
    lines.push(
      `  inputs: ${inputs.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')}`,
    );
  // MCP servers are not started by a dry run (they are programs of their own): say so. The CLI
  // gives the lines of service/dry-run.ts and renderDryRunMcp below instead (sources, and the tools with --list-mcp).
  const withMcp = mcpLines ? [] : r.agents.filter((a) => a.mcpServers?.length);
  if (mcpLines) lines.push(...mcpLines);
  for (const a of withMcp)
    lines.push(`  MCP: agent ${a.name} gets ${a.mcpServers!.join(', ')} (tools as mcp__<server>__<tool>)`);
  if (withMcp.length)
    lines.push(
      `  MCP servers were not started, so their tools are not listed: orchestrate mcp list ${r.file} starts them and lists them`,
    );
  lines.push('', ...renderPlan(report), '', ...renderEstimate(report));
  if (report.warnings.length) lines.push('', ...report.warnings.map((w) => `warning: ${w}`));
  return `${lines.join('\n')}\n`;
}

/** One server of one agent, as the dry run reports it. */
export interface DryRunMcpServer {
  server: string;
  /** The file that defines it (the recipe, a .mcp.json, an agent file). */
  source: string;
  /** With --list-mcp: whether it started, and the tools this agent would get from it. */
  started?: boolean;
  tools?: string[];
  error?: string;
}

export interface DryRunMcp {
  agents: { name: string; servers: DryRunMcpServer[]; fromRepositories?: string[] | 'all' }[];
  /** Whether servers were started to list tools (--list-mcp). */
  listed: boolean;
}

/** The dry run's MCP lines (printed under the recipe's header). */
export function renderDryRunMcp(mcp: DryRunMcp, report: DryRunReport): string[] {
  const lines: string[] = [];
  for (const a of mcp.agents) {
    const own = a.servers.map((s) => `${s.server} (${s.source})`);
    const repo =
      a.fromRepositories === undefined
        ? []
        : [
            a.fromRepositories === 'all'
              ? "every server of its repository's .mcp.json"
              : `${a.fromRepositories.join(', ')} from its repository's .mcp.json`,
          ];
    lines.push(`  MCP: agent ${a.name} gets ${[...own, ...repo].join(', ')}`);
    if (!mcp.listed) continue;
    for (const s of a.servers) {
      if (!s.started) lines.push(`    ${s.server}: does not start: ${s.error ?? 'unknown reason'}`);
      else lines.push(`    ${s.server}: ${s.tools!.length ? s.tools!.join(', ') : '(no tools this agent may use)'}`);
    }
  }
  if (mcp.agents.length === 0) return lines;
  if (!mcp.listed)
    lines.push(
      `  MCP servers were not started, so their tools are not listed: --list-mcp starts them (or orchestrate mcp list ${report.recipe.file})`,
    );
  if (mcp.agents.some((a) => a.fromRepositories !== undefined))
    lines.push("  (a repository's .mcp.json is read where its instance runs: trust_repo_config)");
  return lines;
}
