// The report's "Attempts" section (recipe `attempts:`): for each instance whose attempts were
// picked from, which attempt landed and why, and every attempt's verify result, changed lines
// and cost, where each attempt's work is and why it did not land, as describePick
// (run/attempt-pick-record.ts) words them for `show`.
import { describePick } from '../../run/attempt-pick-record.js';
import type { RunState } from '../../run/run-fold.js';
import { attemptFacts } from '../../run/run-queries.js';
import { escapeHtml } from './html-text.js';

export function picksSection(state: RunState): string {
  if (state.picks.size === 0) return '';
  const items = [...state.picks.values()].map((p) => {
    const [head, ...lines] = describePick(p, attemptFacts(state));
    return `<li>${escapeHtml(head ?? '')}<pre>${escapeHtml(lines.join('\n'))}</pre></li>`;
  });
  return `<section><h2>Attempts</h2><ul class="controls">${items.join('')}</ul></section>\n`;
}
