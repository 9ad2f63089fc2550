// Costs per provider, and per model within each provider, as `show` prints them and the report
// shows them. A mixed run (a planner on Anthropic, workers on a local server) has one line or
// table row group per provider. The figures are the fold's (run-fold.ts `providers`: every
// call_usage event), the same ones result.json writes.
import type { ProviderUsage, UsageSummary } from '../run/usage-summary.js';
import { formatCost, formatTokens, plural } from './format-units.js';
import { escapeHtml } from './report/html-text.js';

/** Providers in order of cost (highest first), then name; models likewise. */
function sorted<T extends { usage: UsageSummary } | UsageSummary>(rec: Record<string, T>): [string, T][] {
  const cost = (v: T) => ('usage' in v ? v.usage.cost : v.cost);
  return Object.entries(rec).sort(([a, x], [b, y]) => cost(y) - cost(x) || (a < b ? -1 : 1));
}

const est = (u: UsageSummary) => (u.estimated ? ' (est.)' : '');

/**
 * "cost per provider:",
 * then one line per provider with its models; empty when no call is recorded.
 */
export function providerCostLines(providers: ProviderUsage): string[] {
  const list = sorted(providers);
  if (list.length === 0) return [];
  const out = ['cost per provider:'];
  for (const [name, p] of list) {
    const models = sorted(p.models)
      .map(([m, u]) => `${m} ${formatCost(u.cost)}${est(u)}, ${formatTokens(u.totalTokens)} tokens`)
      .join('; ');
    out.push(
      `  ${name}: ${formatCost(p.usage.cost)}${est(p.usage)} · ${formatTokens(p.usage.totalTokens)} tokens · ${plural(p.usage.turns ?? 0, 'call')} (${models})`,
    );
  }
  return out;
}

/** The report's "Cost per provider" section: a row per provider and one per model it served. */
export function providerCostSection(providers: ProviderUsage): string {
  const list = sorted(providers);
  if (list.length === 0) return '';
  const row = (label: string, u: UsageSummary, cls: string) =>
    `<tr class="${cls}"><td>${label}</td><td class="num">${u.turns ?? 0}</td><td class="num">${formatTokens(u.input)}</td><td class="num">${formatTokens(u.output)}</td><td class="num">${formatTokens(u.cacheRead)}</td><td class="num">${formatTokens(u.totalTokens)}</td><td class="num">${formatCost(u.cost)}${est(u)}</td></tr>`;
  const rows = list.flatMap(([name, p]) => [
    row(`<strong>${escapeHtml(name)}</strong>`, p.usage, 'provider'),
    ...sorted(p.models).map(([m, u]) => row(`&nbsp;&nbsp;${escapeHtml(m)}`, u, 'model')),
  ]);
  return (
    '<section><h2>Cost per provider</h2><div class="scroll"><table class="instances providers"><thead><tr><th>provider / model</th><th>calls</th><th>input</th><th>output</th><th>cache read</th><th>tokens</th><th>cost</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table></div></section>\n`
  );
}
